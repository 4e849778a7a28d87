"""Waits (听牌): the tile kinds that complete an allowed winning hand (RULES.md §6)."""

from __future__ import annotations

from collections.abc import Sequence

from shared.hand.hand_type import classify
from shared.melds import Meld
from shared.ruleset import Ruleset
from shared.tiles import NUM_KINDS


def candidate_kinds(counts: Sequence[int]) -> list[int]:
    """Kinds that could possibly complete ``counts``: a held honor, or a suited kind within two
    ranks of a held tile of its suit. A 13-tile all-honor hand may also take any honor
    (乱风向), so every honor is a candidate there."""
    marks = [False] * NUM_KINDS
    for base in (0, 9, 18):
        for r in range(9):
            if counts[base + r]:
                for d in range(max(0, r - 2), min(8, r + 2) + 1):
                    marks[base + d] = True
    suited = any(marks)
    for k in range(27, 34):
        if counts[k] or not suited:
            marks[k] = True
    return [k for k in range(NUM_KINDS) if marks[k]]


def waits(counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset) -> list[int]:
    """Every kind that completes the concealed ``counts`` (13 − 3 × melds tiles) and ``melds``
    into an allowed winning hand, in canonical order. Kinds of which the hand itself (concealed
    and melds) already holds all four are left out."""
    held = list(counts)
    for m in melds:
        for k in m.tiles:
            held[k] += 1
    trial = list(counts)
    out = []
    for k in candidate_kinds(counts):
        if held[k] >= 4:
            continue
        trial[k] += 1
        if classify(trial, melds, ruleset) is not None:
            out.append(k)
        trial[k] -= 1
    return out
