"""Checking a seat's action against the options it holds (no rules call: the options are the
rules' answer already). Each check raises FailedPrecondition ``ILLEGAL_ACTION`` with a message
naming what was refused and what is possible; the message is written only for a refusal."""

from __future__ import annotations

from typing import Final

from services.gateway.domain.events.kinds import ROB_KONG
from services.gateway.domain.hand.state import Pending, SwapOptions
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument
from shared.hand.hand_type import HandType
from shared.table import (
    Action,
    AddedKong,
    Chow,
    ClaimOptions,
    ConcealedKong,
    Decision,
    DeclareReady,
    Discard,
    ExposedKong,
    OwnTurnOptions,
    Pass,
    Pong,
    TileSwap,
    Win,
    action_name,
)

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_HAND_EIGHT_FLOWERS: Final = HandType.EIGHT_FLOWERS

# mpsz text of every tile kind, precomputed: events and messages name tiles on the hot path.
TILE_TEXT: Final = tuple(T.format_tile(k) for k in range(T.NUM_TILE_KINDS))


def fmt(k: int | None) -> str:
    return TILE_TEXT[k] if k is not None and 0 <= k < len(TILE_TEXT) else "?"


def fmts(ks) -> str:
    return " ".join(TILE_TEXT[k] for k in ks)


def check_own_turn(p: Pending, action: Action) -> None:
    """A discard, 敲, kong or win on the seat's own turn."""
    opts = p.options
    assert isinstance(opts, OwnTurnOptions)
    if isinstance(action, Discard):
        if action.tile in opts.discards:
            return
        why = f"discard {fmt(action.tile)} is not allowed; allowed: {fmts(opts.discards)}"
    elif isinstance(action, DeclareReady):
        if action.discard in opts.ready_discards:
            return
        why = (
            f"敲 with discard {fmt(action.discard)} is not allowed; "
            f"ready discards: {fmts(opts.ready_discards) or 'none'}"
        )
    elif isinstance(action, ConcealedKong):
        if action.tile in opts.concealed_kongs:
            return
        why = f"no concealed kong of {fmt(action.tile)} is possible"
    elif isinstance(action, AddedKong):
        if action.tile in opts.added_kongs:
            return
        why = f"no added kong of {fmt(action.tile)} is possible"
    elif isinstance(action, Win):
        if action.eight_flowers:
            if any(w.hand == _HAND_EIGHT_FLOWERS for w in opts.wins):
                return
            why = "八花齐 is not possible now: it needs all eight flowers, on the own turn"
        elif opts.wins:
            return
        else:
            why = "the hand cannot win now"
    else:
        why = f"{action_name(action)} is not an own-turn action (discard, 敲, kong or win)"
    raise FailedPrecondition(why, reason="ILLEGAL_ACTION", action=action_name(action))


def check_claim(p: Pending, action: Action) -> None:
    """A win, pong, kong, chow or pass on another seat's discard (on an added kong: 抢杠)."""
    opts = p.options
    assert isinstance(opts, ClaimOptions)
    if isinstance(action, Pass):
        return
    if isinstance(action, Win):
        if action.eight_flowers:
            raise FailedPrecondition(
                "八花齐 is declared on the seat's own turn, not on a claim",
                reason="ILLEGAL_ACTION",
            )
        if opts.win is None:
            raise FailedPrecondition(
                f"{fmt(p.tile)} does not win for seat {p.seat}"
                + (" (漏胡: passed this tile kind)" if opts.missed_win else ""),
                reason="ILLEGAL_ACTION",
            )
        return
    if p.kind == ROB_KONG:
        raise FailedPrecondition(
            f"on an added kong only win (抢杠) or pass is possible, not {action_name(action)}",
            reason="ILLEGAL_ACTION",
        )
    if isinstance(action, Pong) and opts.pong:
        return
    if isinstance(action, ExposedKong) and opts.exposed_kong:
        return
    if isinstance(action, Chow) and action.low in opts.chows:
        return
    if isinstance(action, Chow):
        shapes = ", ".join(T.format_tiles(range(k, k + 3)) for k in opts.chows) or "none"
        why = f"chow {T.format_tiles(action.tiles)} is not possible; possible: {shapes}"
    else:
        why = f"{action_name(action)} of {fmt(p.tile)} is not possible for seat {p.seat}"
    raise FailedPrecondition(why, reason="ILLEGAL_ACTION")


def check_swap(p: Pending, action: Decision, held_counts: list[int]) -> None:
    """换牌 before play: bury exactly the options' count of tiles the seat holds, or pass."""
    if isinstance(action, Pass):
        return
    if not isinstance(action, TileSwap):
        raise FailedPrecondition(
            f"before play only a tile swap (换牌) or pass is possible, not {action_name(action)}",
            reason="ILLEGAL_ACTION",
        )
    opts = p.options
    assert isinstance(opts, SwapOptions)
    if len(action.tiles) != opts.count:
        raise InvalidArgument(
            f"a tile swap buries exactly {opts.count} tiles, got {len(action.tiles)}",
            field="tile_swap.tiles",
        )
    held = list(held_counts)
    for k in action.tiles:
        if not 0 <= k < T.NUM_TILE_KINDS or held[k] == 0:
            raise FailedPrecondition(
                f"seat {p.seat} does not hold {fmt(k)} to bury", reason="ILLEGAL_ACTION"
            )
        held[k] -= 1
