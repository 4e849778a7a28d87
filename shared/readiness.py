"""Who counts as ready (RULES §5, §9): whether a ruleset uses 敲 at all, and the ready seats the
gateway tells scoring when a hand ends.

"Ready" decides what an unrelated discarder pays under 承包 (§9). With
``ready.require_declare_ready`` (the default) it means "has declared 敲". With the option off
nobody declares, and it means "the hand waits on at least one tile" (:func:`shared.hand.waits`
on the seat's concealed counts and melds when the hand ends: a discarder's hand right after its
discard, a robbed player's hand after its kong went back to a pong, anyone else's between
turns). A winner waited on its winning tile, so it is ready too.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Protocol

from shared.hand import waits
from shared.melds import Meld
from shared.ruleset import Ruleset


@functools.lru_cache(maxsize=256)  # rulesets are immutable; every option list asks this
def declaration_required(ruleset: Ruleset) -> bool:
    """Does this ruleset use 敲 at all (``ready.require_declare_ready``)?"""
    return bool(ruleset.ready.require_declare_ready)


class SeatTiles(Protocol):
    ready: bool  # declared 敲
    counts: list[int]
    melds: list[Meld]


def ready_seats(
    seats: Sequence[SeatTiles], ruleset: Ruleset, winners: Iterable[int] = ()
) -> tuple[int, ...]:
    """The seats scoring is told are ready, in seat order (see the module doc)."""
    if declaration_required(ruleset):
        return tuple(i for i, s in enumerate(seats) if s.ready)
    won = set(winners)
    return tuple(
        i for i, s in enumerate(seats) if i in won or s.ready or waits(s.counts, s.melds, ruleset)
    )
