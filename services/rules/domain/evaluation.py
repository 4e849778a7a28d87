"""Hand evaluation for callers from outside (the Evaluate and Waits RPCs, ``mahjong judge``):
input checked (InvalidArgument naming the problem), then the shared table-driven checks of
:mod:`shared.hand`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared.errors import InvalidArgument
from shared.hand import HandType
from shared.hand.decomposition import Decomposition, decompositions
from shared.hand.input import (
    COMPLETE_SIZE,
    WAITING_SIZE,
    check_flowers,
    check_hand,
    held_counts,
)
from shared.hand.preset_hands import (
    BAIDA,
    QIAOMA,
    classify_hand,
    model_of,
    wildcard_kinds,
)
from shared.hand.preset_hands import hand_waits as preset_waits
from shared.hand.wildcard import readings
from shared.melds import Meld
from shared.ruleset import Ruleset
from shared.tile_set import check_hand_kinds, tile_set_of, visible_counts
from shared.tiles import NUM_FLOWERS, NUM_KINDS, WILDCARD


@dataclass(frozen=True, slots=True)
class HandEvaluation:
    """A 14-tile hand judged: the allowed winning hand it makes (None: no win), whether its
    owner holds 八花齐, and every split into sets and a pair (empty for 乱风向 in no shape; for
    a 百搭 hand the splits of its substituted readings)."""

    hand: HandType | None
    eight_flowers: bool
    decompositions: tuple[Decomposition, ...]


def _check(
    counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset, jokers: int, size: int
) -> None:
    ts = tile_set_of(ruleset)
    check_hand(counts, melds, (size,), jokers=jokers)
    check_hand_kinds(ts, counts, melds, jokers)


def flipped_hand(
    counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset, jokers: int, wild: int | None
) -> tuple[list[int], int]:
    """The natural counts and 百搭 of a hand whose ``wild`` kind is 百搭 (翻百搭, §13.B.9):
    InvalidArgument when the ruleset has no flipped 百搭, the kind is none of its playing kinds
    or a meld shows it."""
    if wild is None:
        return list(counts), jokers
    ts = tile_set_of(ruleset)
    if not ts.flipped_wildcard:
        raise InvalidArgument(
            "wild_kind is set but the ruleset has no flipped 百搭", field="wild_kind"
        )
    if not ts.is_hand_kind(wild) or wild >= NUM_KINDS:
        raise InvalidArgument(f"wild_kind {wild!r} is no playing kind", field="wild_kind")
    if any(wild in m.tiles for m in melds):
        raise InvalidArgument("a 百搭 (the wild kind) is never in a meld", field="wild_kind")
    natural = list(counts)
    held = natural[wild]
    natural[wild] = 0
    return natural, jokers + held


def evaluate_hand(
    counts: Sequence[int],
    melds: Sequence[Meld],
    ruleset: Ruleset,
    flowers: Sequence[int] = (),
    jokers: int = 0,
    wild: int | None = None,
    visible: Sequence[int] = (),
) -> HandEvaluation:
    """Judge a complete hand (14 tiles, a kong counting as 3; ``jokers`` 百搭 beside the
    natural ``counts``). The highest allowed hand of the ruleset's model is reported (RULES §6,
    RULES-presets §13.A.4, §13.B.5); 八花齐 (qiaoma-style presets only) beside it, since it
    wins whatever the hand. ``visible``: the tiles seen outside the hand
    (:func:`shared.tile_set.visible_counts`)."""
    _check(counts, melds, ruleset, jokers, COMPLETE_SIZE)
    seen = visible_counts(tile_set_of(ruleset), visible, held_counts(counts, melds))
    counts, jokers = flipped_hand(counts, melds, ruleset, jokers, wild)
    ts = tile_set_of(ruleset)
    check_flowers(flowers, dragons=ts.dragons_bonus, extras=ts.extras)
    model = model_of(ruleset)
    if model == BAIDA:
        splits = tuple(
            r.decomposition
            for r in readings(counts, jokers, melds, allowed=wildcard_kinds(ruleset))
            if r.decomposition is not None
        )
    else:
        splits = tuple(decompositions(counts, melds))
    return HandEvaluation(
        hand=classify_hand(counts, melds, ruleset, jokers, seen),
        eight_flowers=model == QIAOMA and len(flowers) == NUM_FLOWERS,
        decompositions=splits,
    )


def hand_waits(
    counts: Sequence[int],
    melds: Sequence[Meld],
    ruleset: Ruleset,
    jokers: int = 0,
    wild: int | None = None,
    visible: Sequence[int] = (),
) -> list[int]:
    """The waits of a 13-tile hand (RULES §6, RULES-presets §13.0; kinds the hand holds all
    four of left out; ``1j`` last when a drawn 百搭 completes it; with a flipped ``wild`` kind
    that kind stands where the 百搭 wait would, in canonical order). ``visible``: the tiles
    seen outside the hand (:func:`shared.tile_set.visible_counts`)."""
    _check(counts, melds, ruleset, jokers, WAITING_SIZE)
    seen = visible_counts(tile_set_of(ruleset), visible, held_counts(counts, melds))
    if wild is None:
        return preset_waits(counts, melds, ruleset, jokers, seen)
    natural, wilds = flipped_hand(counts, melds, ruleset, jokers, wild)
    found = preset_waits(natural, melds, ruleset, wilds, seen)
    out = [k for k in found if k not in (WILDCARD, wild)]  # a drawn wild tile is a 百搭
    return sorted([*out, wild]) if WILDCARD in found else out
