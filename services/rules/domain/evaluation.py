"""Hand evaluation for callers from outside (the Evaluate and Waits RPCs, ``mahjong judge``):
input checked (InvalidArgument naming the problem), then the shared table-driven checks of
:mod:`shared.hand`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared.hand import HandType, classify, waits
from shared.hand.decomposition import Decomposition, decompositions
from shared.hand.input import COMPLETE_SIZE, WAITING_SIZE, check_flowers, check_hand
from shared.melds import Meld
from shared.ruleset import Ruleset
from shared.tiles import NUM_FLOWERS


@dataclass(frozen=True, slots=True)
class HandEvaluation:
    """A 14-tile hand judged: the allowed winning hand it makes (None: no win), whether its
    owner holds 八花齐, and every split into sets and a pair (empty for 乱风向 in no shape)."""

    hand: HandType | None
    eight_flowers: bool
    decompositions: tuple[Decomposition, ...]


def evaluate_hand(
    counts: Sequence[int],
    melds: Sequence[Meld],
    ruleset: Ruleset,
    flowers: Sequence[int] = (),
) -> HandEvaluation:
    """Judge a complete hand (14 tiles, a kong counting as 3). The highest allowed hand is
    reported (RULES §6); 八花齐 is reported beside it, since it wins whatever the hand."""
    check_hand(counts, melds, (COMPLETE_SIZE,))
    check_flowers(flowers)
    return HandEvaluation(
        hand=classify(counts, melds, ruleset),
        eight_flowers=len(flowers) == NUM_FLOWERS,
        decompositions=tuple(decompositions(counts, melds)),
    )


def hand_waits(counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset) -> list[int]:
    """The waits of a 13-tile hand (RULES §6; kinds the hand holds all four of left out)."""
    check_hand(counts, melds, (WAITING_SIZE,))
    return waits(counts, melds, ruleset)
