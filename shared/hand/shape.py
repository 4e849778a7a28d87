"""Standard shape (四副一将: four sets and a pair) by precomputed suit tables.

A hand's 34 counts are turned into ``bytes`` once; each suit's nine counts are then a 9-byte
slice, used directly as a dictionary key. At import we enumerate every multiset of up to four
sets (pongs and chows) inside one suit, with or without one pair, and record each pattern that
splits completely: :data:`SUIT_TABLE` maps it to ``NO_PAIR`` (sets only) or ``WITH_PAIR`` (sets
and exactly one pair; the tile count mod 3 decides which). A shape check is three look-ups and a
scan of the seven honors, whatever the hand, with no search at run time.

The same enumeration gives the wait tables: :data:`WAITS_WITH_PAIR` / :data:`WAITS_NO_PAIR` map a
suit pattern to the ranks (0-8) whose addition makes it split with a pair / into sets only.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations_with_replacement
from typing import Final

NO_PAIR: Final = 1
WITH_PAIR: Final = 2

ZERO9: Final = bytes(9)
_SUIT_BASES: Final = (0, 9, 18)


def _build_tables() -> tuple[
    dict[bytes, int], dict[bytes, tuple[int, ...]], dict[bytes, tuple[int, ...]]
]:
    sets = [(r, r, r) for r in range(9)] + [(r, r + 1, r + 2) for r in range(7)]
    table: dict[bytes, int] = {}
    for n in range(5):
        for combo in combinations_with_replacement(range(len(sets)), n):
            base = [0] * 9
            for i in combo:
                for t in sets[i]:
                    base[t] += 1
            if max(base) > 4:
                continue
            table[bytes(base)] = NO_PAIR
            for p in range(9):
                if base[p] <= 2:
                    base[p] += 2
                    table[bytes(base)] = WITH_PAIR
                    base[p] -= 2
    waits: dict[int, dict[bytes, set[int]]] = {NO_PAIR: {}, WITH_PAIR: {}}
    for key, code in table.items():
        for r in range(9):
            if key[r]:
                less = bytearray(key)
                less[r] -= 1
                waits[code].setdefault(bytes(less), set()).add(r)
    as_tuples = {code: {k: tuple(sorted(v)) for k, v in by.items()} for code, by in waits.items()}
    return table, as_tuples[WITH_PAIR], as_tuples[NO_PAIR]


SUIT_TABLE, WAITS_WITH_PAIR, WAITS_NO_PAIR = _build_tables()


def suit_key(counts: Sequence[int], base: int) -> bytes:
    """The :data:`SUIT_TABLE` key of the nine counts of one suit starting at kind ``base``."""
    return bytes(counts[base : base + 9])


def is_standard_shape(counts: Sequence[int]) -> bool:
    """True when the concealed ``counts`` (3n+2 tiles) split into sets and exactly one pair."""
    b = bytes(counts)
    get = SUIT_TABLE.get
    a = get(b[0:9])
    if a is None:
        return False
    p = get(b[9:18])
    if p is None:
        return False
    s = get(b[18:27])
    if s is None:
        return False
    h = b[27:34]
    if 1 in h or 4 in h:
        return False
    # Each suit code is 1 (no pair) or 2 (one pair): exactly one pair in all.
    return a + p + s + h.count(2) == 4


def is_all_pongs_shape(counts: Sequence[int]) -> bool:
    """碰碰胡 shape of the concealed part: exactly one pair, every other kind 0 or 3."""
    b = bytes(counts)
    return 1 not in b and 4 not in b and b.count(2) == 1
