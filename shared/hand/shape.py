"""Standard shape (四副一将: four sets and a pair) on count arrays, by precomputed suit tables.

Each suit's nine counts are read as a base-5 number. At import we enumerate every multiset of
up to four sets (pongs and chows) with or without one pair inside one suit, and record which
count vectors can be split completely: bit ``NO_PAIR`` when they split into sets only, bit
``WITH_PAIR`` when they split into sets and exactly one pair. A hand check is then three table
look-ups plus a scan of the seven honors, whatever the hand, with no search at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations_with_replacement

NO_PAIR = 1
WITH_PAIR = 2

_POW5 = tuple(5**i for i in range(9))


def suit_key(counts: Sequence[int], base: int) -> int:
    """Base-5 key of the nine counts of one suit starting at kind ``base``."""
    c = counts
    return (
        c[base]
        + 5 * c[base + 1]
        + 25 * c[base + 2]
        + 125 * c[base + 3]
        + 625 * c[base + 4]
        + 3125 * c[base + 5]
        + 15625 * c[base + 6]
        + 78125 * c[base + 7]
        + 390625 * c[base + 8]
    )


def _build_table() -> dict[int, int]:
    sets = [(r, r, r) for r in range(9)] + [(r, r + 1, r + 2) for r in range(7)]
    table: dict[int, int] = {}
    for n in range(5):
        for combo in combinations_with_replacement(range(len(sets)), n):
            base = [0] * 9
            for i in combo:
                for t in sets[i]:
                    base[t] += 1
            if max(base) > 4:
                continue
            key = sum(c * _POW5[i] for i, c in enumerate(base))
            table[key] = table.get(key, 0) | NO_PAIR
            for p in range(9):
                if base[p] + 2 > 4:
                    continue
                key2 = key + 2 * _POW5[p]
                table[key2] = table.get(key2, 0) | WITH_PAIR
    return table


SUIT_TABLE: dict[int, int] = _build_table()


def is_standard_shape(counts: Sequence[int]) -> bool:
    """True when the concealed ``counts`` (3n+2 tiles) split into sets and exactly one pair."""
    pairs = 0
    for base in (0, 9, 18):
        n = (
            counts[base]
            + counts[base + 1]
            + counts[base + 2]
            + counts[base + 3]
            + counts[base + 4]
            + counts[base + 5]
            + counts[base + 6]
            + counts[base + 7]
            + counts[base + 8]
        )
        if n == 0:
            continue
        r = n % 3
        if r == 1:
            return False
        flags = SUIT_TABLE.get(suit_key(counts, base), 0)
        if r == 0:
            if not flags & NO_PAIR:
                return False
        else:
            if not flags & WITH_PAIR:
                return False
            pairs += 1
    for k in range(27, 34):
        c = counts[k]
        if c == 2:
            pairs += 1
        elif c == 1 or c == 4:
            return False
    return pairs == 1


def is_all_pongs_shape(counts: Sequence[int]) -> bool:
    """碰碰胡 shape of the concealed part: exactly one pair, every other kind 0 or 3."""
    pairs = 0
    for c in counts:
        if c == 2:
            pairs += 1
        elif c == 1 or c == 4:
            return False
    return pairs == 1
