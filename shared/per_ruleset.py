"""One object derived from a ruleset, built once per ruleset object and then looked up.

The hot paths read a few options of the table's ruleset on every call (the hand checks'
scoring model and 百搭 kinds, the claim options' 敲 flags); reading them through the ruleset's
sections each time costs more than the checks themselves, so each such module keeps what it
derives from a ruleset in a :class:`PerRuleset`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from shared.ruleset import Ruleset

T = TypeVar("T")


class PerRuleset(Generic[T]):
    """A cache of one ``build(ruleset)`` per ruleset object, bounded.

    Rulesets are keyed by identity (they are immutable, and one with overrides is a new
    object), so a derived object never goes stale. Past ``limit`` entries the cache empties
    and fills again: a server that makes rulesets without end (overrides per table) keeps at
    most ``limit`` of them alive through it, while its few presets stay found at once.
    """

    def __init__(self, build: Callable[[Ruleset], T], limit: int = 256) -> None:
        self._build = build
        self._limit = limit
        self._entries: dict[Ruleset, T] = {}

    def get(self, ruleset: Ruleset) -> T:
        """The object derived from ``ruleset``, built on its first look-up."""
        entries = self._entries
        try:
            return entries[ruleset]
        except KeyError:
            if len(entries) >= self._limit:
                entries.clear()
            built = entries[ruleset] = self._build(ruleset)
            return built
