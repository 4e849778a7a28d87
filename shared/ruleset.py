"""Rulesets as data (RULES.md §12-13).

A ruleset is a TOML file in ``shared/rulesets/`` named after the preset. A preset may
``inherit`` another and write only what differs. Every option is typed by its default in the
base preset; an unknown section or option, or a value of the wrong type, is an error that names
it. Tables may override single options as ``{"section.option": value}``.
"""

from __future__ import annotations

import copy
import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_RULESET = "shanghai-qiaoma"
RULESET_DIR = Path(__file__).parent / "rulesets"

# Presets named in RULES.md §13 that have no working rules yet: asking for one says so.
LISTED_NOT_IMPLEMENTED = {
    "laxihu": "拉西胡 is named in seed 000 with no rules (RULES §13)",
}

_ENUM_OPTIONS = {
    ("table", "multi_win_dealer"): ("nearest_winner", "seat_after_nearest_winner"),
    ("table", "scoring_model"): ("qiaoma", "old", "baida"),
    ("table", "tile_set"): ("standard", "baida"),
    ("payment", "chengbao_style"): ("qiaoma", "classic"),
    ("old_payment", "discard_payment"): ("chuchong", "baochong", "discarder_only"),
    ("baida_tiles", "wildcards"): ("dedicated", "flipped"),
    ("baida_tiles", "flipped_wild"): ("next", "same"),
}


class RulesetError(ValueError):
    """An unknown ruleset, or an option that is unknown or of the wrong type."""


class Section:
    """Read-only attribute view of one ruleset section (``ruleset.scoring.base_points``)."""

    __slots__ = ("_name", "_values")

    def __init__(self, name: str, values: Mapping[str, Any]):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, option: str) -> Any:
        try:
            return self._values[option]
        except KeyError:
            raise AttributeError(f"ruleset has no option {self._name}.{option}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("rulesets are read-only; use Ruleset.with_overrides")

    def get(self, option: str, default: Any = None) -> Any:
        return self._values.get(option, default)

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)


@dataclass(frozen=True, eq=False)
class Ruleset:
    name: str
    description: str
    sections: Mapping[str, Section] = field(repr=False)

    def __getattr__(self, section: str) -> Section:
        sections = self.__dict__.get("sections", {})
        if section in sections:
            return sections[section]
        raise AttributeError(f"ruleset has no section {section!r}")

    def option(self, path: str) -> Any:
        """An option by its dotted path, e.g. ``"scoring.base_points"``."""
        section, _, option = path.partition(".")
        if section not in self.sections or option not in self.sections[section].as_dict():
            raise RulesetError(f"unknown ruleset option {path!r}")
        return self.sections[section].get(option)

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {name: s.as_dict() for name, s in self.sections.items()}

    def with_overrides(self, overrides: Mapping[str, Any]) -> Ruleset:
        """A copy with ``{"section.option": value}`` overrides applied and type-checked.

        String values are converted to the option's type (``"true"``, ``"3"``), so overrides
        can come from a protobuf ``map<string, string>`` or a command line.
        """
        if not overrides:
            return self
        data = self.as_dict()
        for path, value in overrides.items():
            section, _, option = path.partition(".")
            if section not in data or option not in data[section]:
                raise RulesetError(f"unknown ruleset option {path!r}")
            data[section][option] = _coerce(path, data[section][option], value)
        return _build(self.name, self.description, data)


def _coerce(path: str, current: Any, value: Any) -> Any:
    want = type(current)
    if isinstance(value, str) and want is not str:
        text = value.strip().lower()
        if want is bool:
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise RulesetError(f"option {path!r} takes true or false, got {value!r}")
        try:
            value = want(text)
        except ValueError:
            raise RulesetError(f"option {path!r} takes {want.__name__}, got {value!r}") from None
    if type(value) is not want and not (want is float and type(value) is int):
        raise RulesetError(
            f"option {path!r} takes {want.__name__}, got {type(value).__name__} {value!r}"
        )
    if want is int and value < 0:
        raise RulesetError(f"option {path!r} must not be negative, got {value}")
    section, _, option = path.partition(".")
    allowed = _ENUM_OPTIONS.get((section, option))
    if allowed and value not in allowed:
        raise RulesetError(f"option {path!r} takes one of {', '.join(allowed)}, got {value!r}")
    return value


def _build(name: str, description: str, data: Mapping[str, Mapping[str, Any]]) -> Ruleset:
    _check_combination(name, data)
    return Ruleset(name, description, {s: Section(s, v) for s, v in data.items()})


def _check_combination(name: str, data: Mapping[str, Mapping[str, Any]]) -> None:
    """Options that cannot go together (RULES-presets §13.1, §13.D): the 百搭 set is scored
    only by the 百搭 model (no other model values a wildcard), and the 户/番 and 百搭 games have
    no 敲."""
    table = data.get("table", {})
    model = table.get("scoring_model", "qiaoma")
    if table.get("tile_set", "standard") == "baida" and model != "baida":
        raise RulesetError(
            f"ruleset {name!r}: table.tile_set 'baida' needs table.scoring_model 'baida' "
            f"(got {model!r}): only the 百搭 model scores wildcard hands"
        )
    if model in ("old", "baida") and data.get("ready", {}).get("require_declare_ready"):
        raise RulesetError(
            f"ruleset {name!r}: ready.require_declare_ready must be false under "
            f"table.scoring_model {model!r}: that game has no 敲 (RULES-presets §13.1)"
        )


# A preset name as it may come from a request: a file name in RULESET_DIR, never a path.
_PRESET_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def _read(name: str) -> dict[str, Any]:
    if not _PRESET_NAME.fullmatch(name):
        shown = name if len(name) <= 40 else f"{name[:40]}… ({len(name)} characters)"
        raise RulesetError(
            f"ruleset name {shown!r} is not a preset name (lower-case letters, digits, '-'); "
            f"known: {', '.join(available_rulesets())}"
        )
    path = RULESET_DIR / f"{name}.toml"
    if not path.is_file():
        if name in LISTED_NOT_IMPLEMENTED:
            raise RulesetError(f"ruleset {name!r}: {LISTED_NOT_IMPLEMENTED[name]}")
        raise RulesetError(f"unknown ruleset {name!r}; known: {', '.join(available_rulesets())}")
    with path.open("rb") as fh:
        return tomllib.load(fh)


@functools.cache
def load_ruleset(name: str = DEFAULT_RULESET) -> Ruleset:
    """Load a preset by name (cached; rulesets are immutable)."""
    if not isinstance(name, str) or not name:
        raise RulesetError("ruleset name is empty")
    raw = _read(name)
    parent = raw.pop("inherits", None)
    file_name = raw.pop("name", name)
    if file_name != name:
        raise RulesetError(f"ruleset file {name}.toml names itself {file_name!r}")
    description = raw.pop("description", "")
    if parent is None:
        base: dict[str, dict[str, Any]] = {}
        for section, options in raw.items():
            if not isinstance(options, dict):
                raise RulesetError(f"ruleset {name!r}: top-level key {section!r} is not a section")
            base[section] = {}
            for option, value in options.items():
                base[section][option] = value
                _coerce(f"{section}.{option}", value, value)
        return _build(name, description, base)
    data = copy.deepcopy(load_ruleset(parent).as_dict())
    for section, options in raw.items():
        if section not in data:
            raise RulesetError(f"ruleset {name!r}: unknown section {section!r}")
        for option, value in options.items():
            path = f"{section}.{option}"
            if option not in data[section]:
                raise RulesetError(f"ruleset {name!r}: unknown option {path!r}")
            data[section][option] = _coerce(path, data[section][option], value)
    return _build(name, description, data)


def resolve_ruleset(name: str = "", overrides: Mapping[str, Any] | None = None) -> Ruleset:
    """The ruleset a request names (empty = the default), with per-table overrides."""
    return load_ruleset(name or DEFAULT_RULESET).with_overrides(overrides or {})


def available_rulesets() -> list[str]:
    return sorted(p.stem for p in RULESET_DIR.glob("*.toml"))
