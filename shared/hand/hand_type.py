"""Winning hands of Shanghai Mahjong (RULES.md §6) and how a complete hand is classified.

Only these hands may win; the plain mixed-suit hand with chows never does. When several apply
the highest counts (风碰 is not also 风一色; a hand that reads both as 清一色 and 清碰 is 清碰).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

from shared.hand.shape import is_all_pongs_shape, is_standard_shape
from shared.melds import Meld, MeldKind
from shared.ruleset import Ruleset


class HandType(enum.IntEnum):
    """Values match the protobuf ``HandType`` enum (0 is UNSPECIFIED)."""

    PONG_PONG = 1  # 碰碰胡 all pongs
    HALF_FLUSH = 2  # 混一色 one suit plus honors
    FULL_FLUSH = 3  # 清一色 one suit only
    HALF_FLUSH_PONGS = 4  # 混碰 混一色 and 碰碰胡
    FULL_FLUSH_PONGS = 5  # 清碰 清一色 and 碰碰胡
    ALL_HONORS = 6  # 风一色 / 乱风向 all honors in any arrangement
    ALL_HONOR_PONGS = 7  # 风碰 (字一色) all honors and 碰碰胡
    EIGHT_FLOWERS = 8  # 八花齐 all eight flowers

    @property
    def label(self) -> str:
        """Name used in JSON (vectors) and the CLI: ``full_flush_pongs``."""
        return self.name.lower()

    @property
    def name_zh(self) -> str:
        return _NAMES_ZH[self]

    @classmethod
    def from_label(cls, label: str) -> HandType:
        try:
            return cls[label.upper()]
        except KeyError:
            raise ValueError(f"unknown hand type {label!r}") from None


_NAMES_ZH = {
    HandType.PONG_PONG: "碰碰胡",
    HandType.HALF_FLUSH: "混一色",
    HandType.FULL_FLUSH: "清一色",
    HandType.HALF_FLUSH_PONGS: "混碰",
    HandType.FULL_FLUSH_PONGS: "清碰",
    HandType.ALL_HONORS: "风一色",
    HandType.ALL_HONOR_PONGS: "风碰",
    HandType.EIGHT_FLOWERS: "八花齐",
}

# Composition bits of a hand: which suits, and which kinds of honor, it holds.
_MAN, _PIN, _SOU, _WIND, _DRAGON = 1, 2, 4, 8, 16
_SUIT_BITS = _MAN | _PIN | _SOU


def _composition(counts: Sequence[int], melds: Iterable[Meld]) -> int:
    bits = 0
    for base, bit in ((0, _MAN), (9, _PIN), (18, _SOU)):
        if any(counts[base : base + 9]):
            bits |= bit
    if any(counts[27:31]):
        bits |= _WIND
    if any(counts[31:34]):
        bits |= _DRAGON
    for m in melds:
        k = m.tiles[0]
        bits |= (
            _MAN
            if k < 9
            else _PIN
            if k < 18
            else _SOU
            if k < 27
            else (_WIND if k < 31 else _DRAGON)
        )
    return bits


def classify(counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset) -> HandType | None:
    """The allowed winning hand that concealed ``counts`` plus ``melds`` make, or None.

    ``counts`` is the 34-count array of the concealed tiles *including* the winning tile, so it
    holds 14 − 3 × len(melds) tiles. Eight flowers are not a shape; callers check them apart.
    """
    comp = _composition(counts, melds)
    honor_bits = _WIND | _DRAGON if ruleset.hands.honors_include_dragons else _WIND
    suits = comp & _SUIT_BITS
    honors = comp & (_WIND | _DRAGON)
    no_chow = all(m.kind is not MeldKind.CHOW for m in melds)
    pongs = no_chow and is_all_pongs_shape(counts)

    if not suits and honors and not honors & ~honor_bits:
        return HandType.ALL_HONOR_PONGS if pongs else HandType.ALL_HONORS
    one_suit = suits in (_MAN, _PIN, _SOU)
    flush_ok = one_suit and not honors & ~honor_bits
    if flush_ok:
        if pongs:
            return HandType.HALF_FLUSH_PONGS if honors else HandType.FULL_FLUSH_PONGS
        if is_standard_shape(counts):
            return HandType.HALF_FLUSH if honors else HandType.FULL_FLUSH
        return None
    return HandType.PONG_PONG if pongs else None


def is_winning_hand(counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset) -> bool:
    """胡 check: do the concealed ``counts`` (win tile included) and ``melds`` make an allowed
    winning hand (RULES §6)?"""
    return classify(counts, melds, ruleset) is not None
