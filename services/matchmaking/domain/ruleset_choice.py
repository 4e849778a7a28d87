"""Which rules a table plays: a preset name, and for rooms and tournaments per-table overrides
("section.option" → value, house rules). Checked once, when the choice is made."""

from __future__ import annotations

from collections.abc import Mapping

from shared.errors import InvalidArgument
from shared.ruleset import DEFAULT_RULESET, RulesetError, resolve_ruleset


def ruleset_with_options(
    name: str, options: Mapping[str, str] | None
) -> tuple[str, dict[str, str]]:
    """A preset with per-table overrides; InvalidArgument names an unknown preset or a bad
    option."""
    options = {str(k): str(v) for k, v in (options or {}).items()}
    try:
        return resolve_ruleset(name or DEFAULT_RULESET, options).name, options
    except RulesetError as exc:
        raise InvalidArgument(str(exc), field="ruleset") from None


def ruleset_name(name: str) -> str:
    """A known preset name (empty = the default); InvalidArgument otherwise."""
    return ruleset_with_options(name, None)[0]


def ready_seconds(ruleset: str, options: Mapping[str, str]) -> float:
    """The room Start timer of a ruleset (RULES §11 ``timers.ready_seconds``)."""
    return float(resolve_ruleset(ruleset, options).timers.ready_seconds)
