"""Winning hands of Shanghai Mahjong (RULES.md §6) and how a complete hand is classified.

Only these hands may win; the plain mixed-suit hand with chows never does. When several apply
the highest counts (风碰 is not also 风一色; a hand that reads both as 清一色 and 清碰 is 清碰).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Final

from shared.hand.shape import SUIT_TABLE, ZERO9
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
    # RULES-presets §13.A.4 (shanghai-old) and §13.B.5 (shanghai-baida; PONG_PONG and
    # FULL_FLUSH above name its 对对胡 and 清一色 平胡 too).
    STANDARD = 9  # old: any standard shape
    SEVEN_PAIRS = 10  # 七对 seven pairs of different kinds
    PING_HU = 11  # baida: 平胡 a standard shape with a chow
    DRAGON_SEVEN_PAIRS = 12  # baida: 龙七对 one kind makes two of the pairs
    FULL_FLUSH_PONG_PONG = 13  # baida: 清一色对对胡
    FULL_FLUSH_SEVEN_PAIRS = 14  # baida: 清一色七对
    FULL_FLUSH_DRAGON_SEVEN_PAIRS = 15  # baida: 清一色龙七对

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
    HandType.STANDARD: "和",
    HandType.SEVEN_PAIRS: "七对",
    HandType.PING_HU: "平胡",
    HandType.DRAGON_SEVEN_PAIRS: "龙七对",
    HandType.FULL_FLUSH_PONG_PONG: "清一色对对胡",
    HandType.FULL_FLUSH_SEVEN_PAIRS: "清一色七对",
    HandType.FULL_FLUSH_DRAGON_SEVEN_PAIRS: "清一色龙七对",
}

_ZERO7: Final = bytes(7)
_ZERO3: Final = bytes(3)

# For a kind: where the next suit block starts (honors: past the end, so no later single).
_AFTER_BLOCK: Final = tuple(k - k % 9 + 9 for k in range(27)) + (34,) * 7

_DRAGONS_ARE_HONORS: Final[dict[Ruleset, bool]] = {}


def dragons_are_honors(ruleset: Ruleset) -> bool:
    """``hands.honors_include_dragons``, cached per ruleset object (the hot paths call this for
    every hand, and option look-up goes through two ``__getattr__`` hooks)."""
    try:
        return _DRAGONS_ARE_HONORS[ruleset]
    except KeyError:
        if len(_DRAGONS_ARE_HONORS) > 256:
            _DRAGONS_ARE_HONORS.clear()
        flag = _DRAGONS_ARE_HONORS[ruleset] = bool(ruleset.hands.honors_include_dragons)
        return flag


def _with_melds(
    melds: Sequence[Meld], suits: int, honors: bool, dragons: bool
) -> tuple[int, bool, bool, bool]:
    chow = False
    for m in melds:
        k = m.tiles[0]
        if k < 27:
            suits |= 1 << (k // 9)
        else:
            honors = True
            dragons = dragons or k >= 31
        if m.kind is MeldKind.CHOW:
            chow = True
    return suits, honors, dragons, chow


def composition(b: bytes, melds: Sequence[Meld]) -> tuple[int, bool, bool, bool]:
    """(suit bits 1/2/4 for m/p/s, holds honors, holds dragons, has a chow meld) of concealed
    ``b`` (``bytes(counts)``) and ``melds``."""
    suits = (b[0:9] != ZERO9) | ((b[9:18] != ZERO9) << 1) | ((b[18:27] != ZERO9) << 2)
    return _with_melds(melds, suits, b[27:34] != _ZERO7, b[31:34] != _ZERO3)


def classify_bytes(b: bytes, melds: Sequence[Meld], dragons_honor: bool) -> HandType | None:
    """:func:`classify` on the concealed counts as ``bytes(counts)`` (the hot path: slices of
    ``b`` are the suit-table keys)."""
    m = b[0:9]
    p = b[9:18]
    s = b[18:27]
    h = b[27:34]
    suits = (m != ZERO9) | ((p != ZERO9) << 1) | ((s != ZERO9) << 2)
    honors = h != _ZERO7
    chow = False
    if melds:
        suits, honors, dragons, chow = _with_melds(melds, suits, honors, b[31:34] != _ZERO3)
        other_honor = dragons and not dragons_honor
    else:
        other_honor = not dragons_honor and b[31:34] != _ZERO3
    pongs = not chow and 1 not in b and 4 not in b and b.count(2) == 1
    # Dragons that are not 风 by the ruleset, or two suits: only 碰碰胡 can win.
    if other_honor or not (suits == 1 or suits == 2 or suits == 4 or suits == 0):
        return HandType.PONG_PONG if pongs else None
    if not suits:
        return HandType.ALL_HONOR_PONGS if pongs else HandType.ALL_HONORS
    if pongs:
        return HandType.HALF_FLUSH_PONGS if honors else HandType.FULL_FLUSH_PONGS
    code = SUIT_TABLE.get(m if suits == 1 else p if suits == 2 else s)
    if code is None or 1 in h or 4 in h or code + h.count(2) != 2:
        return None
    return HandType.HALF_FLUSH if honors else HandType.FULL_FLUSH


def classify(counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset) -> HandType | None:
    """The allowed winning hand that concealed ``counts`` plus ``melds`` make, or None.

    ``counts`` is the 34-count array of the concealed tiles *including* the winning tile, so it
    holds 14 − 3 × len(melds) tiles. Eight flowers are not a shape; callers check them apart.

    Read from the definitions of RULES §6, highest first: all honors (风碰 with the 碰碰胡
    shape, else 风一色/乱风向 in any arrangement); one suit with or without honors (清碰/混碰
    with the 碰碰胡 shape, else 清一色/混一色 with a standard shape, by the suit table); any
    other hand only as 碰碰胡. With ``hands.honors_include_dragons`` false a dragon is no 风, so
    a hand holding one can only be 碰碰胡.
    """
    return classify_bytes(bytes(counts), melds, dragons_are_honors(ruleset))


def is_winning_hand(counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset) -> bool:
    """胡 check: do the concealed ``counts`` (win tile included) and ``melds`` make an allowed
    winning hand (RULES §6)?

    Hands far from complete are settled first by two C-level scans, with nothing built: a
    single tile rules out the 碰碰胡 shape, so the hand could only be one suit with no single
    honor, or all honors; a suited single followed by any later single (another suit, or an
    honor) rules out both. Everything else goes through the table-driven :func:`classify`.
    """
    try:  # ValueError: no single at all, or none after the first single's block
        counts.index(1, _AFTER_BLOCK[counts.index(1)])
        return False
    except ValueError:
        pass
    return classify_bytes(bytes(counts), melds, dragons_are_honors(ruleset)) is not None
