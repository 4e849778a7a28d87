"""Decomposition (拆牌) of a hand into sets and a pair: every split, for callers that need the
sets themselves (explaining a hand, counting concealed triplets for 花, checking a hand type).

A win check never needs this (it uses the precomputed tables of :mod:`shared.hand.shape`);
this search is for the few hands that are complete.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from shared.melds import Meld, MeldKind
from shared.tiles import NUM_KINDS, format_tiles, is_suited, rank_of

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_MELD_CHOW: Final = MeldKind.CHOW
_MELD_CONCEALED_KONG: Final = MeldKind.CONCEALED_KONG
_MELD_PONG: Final = MeldKind.PONG


class SetKind(enum.IntEnum):
    CHOW = 1  # 顺子 run of three in one suit
    PONG = 2  # 刻子 three of a kind
    KONG = 3  # 杠 four of a kind (declared melds only)


@dataclass(frozen=True, slots=True, order=True)
class HandSet:
    """One set of a split: its kind, lowest tile, and whether it is concealed in the hand
    (a concealed triplet or run, or a concealed kong) rather than exposed."""

    kind: SetKind
    first: int
    concealed: bool = True

    @property
    def tiles(self) -> tuple[int, ...]:
        if self.kind is SetKind.CHOW:
            return (self.first, self.first + 1, self.first + 2)
        return (self.first,) * (4 if self.kind is SetKind.KONG else 3)

    def __str__(self) -> str:
        return format_tiles(self.tiles)


@dataclass(frozen=True, slots=True)
class Decomposition:
    """Four sets (melds included) and the pair (将)."""

    pair: int
    sets: tuple[HandSet, ...]

    @property
    def all_pongs(self) -> bool:
        return all(s.kind is not SetKind.CHOW for s in self.sets)


def meld_set(meld: Meld) -> HandSet:
    """A declared meld as a set of the split."""
    if meld.kind is _MELD_CHOW:
        kind = SetKind.CHOW
    elif meld.kind is _MELD_PONG:
        kind = SetKind.PONG
    else:
        kind = SetKind.KONG
    return HandSet(kind, meld.tiles[0], concealed=meld.kind is _MELD_CONCEALED_KONG)


def _sets_splits(counts: list[int], start: int) -> list[list[HandSet]]:
    """Every way to split ``counts`` (from kind ``start`` on) into concealed pongs and chows."""
    k = start
    while k < NUM_KINDS and counts[k] == 0:
        k += 1
    if k == NUM_KINDS:
        return [[]]
    out: list[list[HandSet]] = []
    if counts[k] >= 3:
        counts[k] -= 3
        out.extend([HandSet(SetKind.PONG, k), *rest] for rest in _sets_splits(counts, k))
        counts[k] += 3
    if is_suited(k) and rank_of(k) <= 7 and counts[k + 1] and counts[k + 2]:
        for d in (0, 1, 2):
            counts[k + d] -= 1
        out.extend([HandSet(SetKind.CHOW, k), *rest] for rest in _sets_splits(counts, k))
        for d in (0, 1, 2):
            counts[k + d] += 1
    return out


def decompositions(counts: Sequence[int], melds: Sequence[Meld] = ()) -> list[Decomposition]:
    """Every distinct split of the concealed ``counts`` (3n+2 tiles) into sets and one pair,
    with the declared ``melds`` as further sets; empty when there is none. Sets are listed
    melds first, then concealed sets in canonical order."""
    work = list(counts)
    declared = tuple(meld_set(m) for m in melds)
    seen: set[Decomposition] = set()
    out: list[Decomposition] = []
    for pair in range(NUM_KINDS):
        if work[pair] < 2:
            continue
        work[pair] -= 2
        for split in _sets_splits(work, 0):
            d = Decomposition(pair, declared + tuple(sorted(split)))
            if d not in seen:
                seen.add(d)
                out.append(d)
        work[pair] += 2
    return out
