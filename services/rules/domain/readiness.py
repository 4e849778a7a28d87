"""敲 declaring ready (RULES §5): when it is legal, what it locks, and who counts as ready.

With ``ready.require_declare_ready`` (the default) a player may win only after declaring 敲,
which is made together with a discard that leaves the hand waiting on at least one tile. After
it the hand is locked: no chow and no pong, a kong only if it leaves the waits unchanged, and
every other drawn tile is discarded as drawn. With the option off no declaration is needed (nor
offered): any complete allowed hand may win, and "ready" means "waits on at least one tile".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from shared import readiness as shared_readiness
from shared.hand import waits
from shared.hand.preset_hands import hand_waits
from shared.hand.waits import discards_that_may_wait
from shared.melds import Meld
from shared.per_ruleset import PerRuleset
from shared.ruleset import Ruleset
from shared.table import SeatState
from shared.tiles import format_tile

_DECLARATION_REQUIRED: Final = PerRuleset(shared_readiness.declaration_required)


def declaration_required(ruleset: Ruleset) -> bool:
    """:func:`shared.readiness.declaration_required`, kept per ruleset object: asked on every
    turn's options, and compiled this is a native call where the shared one (an ``lru_cache``
    in a Python module) is a Python call."""
    return _DECLARATION_REQUIRED.get(ruleset)


def is_locked(seat: SeatState, ruleset: Ruleset) -> bool:
    """A hand locked by 敲: no chow/pong, kongs only when the waits stay, discards as drawn."""
    return seat.declared_ready and declaration_required(ruleset)


def is_ready(seat: SeatState, ruleset: Ruleset) -> bool:
    """ "Ready" in the sense of RULES §5/§9: declared 敲, or (without 敲) waiting on a tile.
    Only meaningful for a seat holding 13 − 3 × melds tiles."""
    if declaration_required(ruleset):
        return seat.declared_ready
    return bool(hand_waits(seat.concealed, seat.melds, ruleset, seat.wildcards))


def ready_discards(
    counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset
) -> tuple[int, ...]:
    """Kinds whose discard leaves a non-empty wait: the discards 敲 may be declared with.
    ``counts`` is the 14 − 3 × melds hand of the seat to act."""
    candidates = discards_that_may_wait(counts, melds)  # the others leave no wait
    if not candidates:
        return ()
    out = []
    trial = list(counts)
    for k in candidates:
        trial[k] -= 1
        if waits(trial, melds, ruleset):
            out.append(k)
        trial[k] += 1
    return tuple(out)


def kong_keeps_waits(
    before: Sequence[int],
    before_melds: Sequence[Meld],
    after: Sequence[int],
    after_melds: Sequence[Meld],
    ruleset: Ruleset,
) -> bool:
    """May a locked (敲) hand make this kong? Only if the waits of the waiting hand ``before``
    equal those of the waiting hand ``after`` the kong (RULES §5)."""
    return waits(before, before_melds, ruleset) == waits(after, after_melds, ruleset)


def locked_kong_refusal(
    seat: int,
    state: SeatState,
    ruleset: Ruleset,
    tile: int,
    before: Sequence[int],
    after: Sequence[int],
    after_melds: Sequence[Meld],
) -> str | None:
    """Why a seat locked by 敲 may not make this kong (None: it may, or it is not locked):
    ``before`` is its waiting hand, ``after`` / ``after_melds`` the hand once the kong is made."""
    if not is_locked(state, ruleset):
        return None
    if kong_keeps_waits(before, state.melds, after, after_melds, ruleset):
        return None
    return f"a kong of {format_tile(tile)} would change seat {seat}'s waits after 敲"
