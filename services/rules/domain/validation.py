"""Validation of one action against a table snapshot: legal (None) or FailedPrecondition naming
why. Malformed input (a seat out of range, a flower as a discard) is InvalidArgument.

The reasons come from the same ``*_refusal`` rules that build the options (:mod:`.own_turn`,
:mod:`.claims`), so an action is legal exactly when the options offer it.
"""

from __future__ import annotations

from typing import Final

from services.rules.domain import claims, own_turn
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument
from shared.table import (
    Action,
    AddedKong,
    Chow,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    LastActionKind,
    Pass,
    Pong,
    TableSnapshot,
    Win,
    action_name,
    check_seat,
)

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_LAST_ADDED_KONG: Final = LastActionKind.ADDED_KONG
_LAST_DISCARD: Final = LastActionKind.DISCARD

_ACTION_TYPES: Final = (
    Discard,
    DeclareReady,
    Chow,
    Pong,
    ExposedKong,
    AddedKong,
    ConcealedKong,
    Win,
    Pass,
)


def _action_tile(action: Action) -> int | None:
    if isinstance(action, Discard | AddedKong | ConcealedKong):
        return action.tile
    if isinstance(action, DeclareReady):
        return action.discard
    if isinstance(action, Chow):
        return action.low
    return None


def check_action(action: Action) -> None:
    """InvalidArgument for an action that is malformed whatever the table."""
    if not isinstance(action, _ACTION_TYPES):
        raise InvalidArgument(f"unknown action {action!r}")
    tile = _action_tile(action)
    if tile is not None and (not T.is_valid_kind(tile) or T.is_bonus(tile)):
        name = T.format_tile(tile) if T.is_valid_kind(tile) else repr(tile)
        raise InvalidArgument(f"{action_name(action)} needs a hand tile, got {name}", field="tile")
    if tile == T.WILDCARD and not isinstance(action, Discard | DeclareReady):
        raise InvalidArgument(
            f"{action_name(action)} of 1j: a 百搭 is never melded (RULES-presets §13.B.3)",
            field="tile",
        )


def _own_turn_refusal(snap: TableSnapshot, seat: int, action: Action) -> str | None:
    if isinstance(action, Chow | Pong | ExposedKong | Pass):
        last = snap.last
        return (
            f"seat {seat} cannot {action_name(action).replace('_', ' ')}: there is no discard "
            f"to claim (the last action is a {last.kind.label} by seat {last.seat})"
        )
    refusal = own_turn.turn_refusal(snap, seat)
    if refusal:
        return refusal
    if isinstance(action, Discard):
        return own_turn.discard_refusal(snap, seat, action.tile)
    if isinstance(action, DeclareReady):
        return own_turn.declare_ready_refusal(snap, seat, action.discard)
    if isinstance(action, ConcealedKong):
        return own_turn.concealed_kong_refusal(snap, seat, action.tile)
    if isinstance(action, AddedKong):
        return own_turn.added_kong_refusal(snap, seat, action.tile)
    if isinstance(action, Win):
        if action.eight_flowers:
            if own_turn.eight_flowers_win(snap, seat) is None:
                return f"seat {seat} cannot win by 八花齐 now: it needs all eight flowers"
            return None
        _, why = own_turn.self_draw_win(snap, seat)
        return why
    raise AssertionError(f"unhandled action {action!r}")  # check_action admits no other


def _claim_refusal(snap: TableSnapshot, seat: int, action: Action) -> str | None:
    if isinstance(action, Win):
        if action.eight_flowers:
            return "八花齐 is declared on the seat's own turn, not on a claim"
        _, why = claims.claim_win(snap, seat)
        return why
    if isinstance(action, Pong):
        return claims.pong_refusal(snap, seat)
    if isinstance(action, ExposedKong):
        return claims.exposed_kong_refusal(snap, seat)
    if isinstance(action, Chow):
        return claims.chow_refusal(snap, seat, action.low)
    if isinstance(action, Pass):
        return claims.claim_refusal(snap, seat)
    return (
        f"seat {seat} cannot {action_name(action).replace('_', ' ')} now: "
        f"{T.format_tile(snap.last.tile or 0)} from seat {snap.last.seat} is being claimed"
    )


def action_refusal(snap: TableSnapshot, seat: int, action: Action) -> str | None:
    """Why ``seat`` may not make ``action`` now (None: it may)."""
    check_seat(seat)
    check_action(action)
    if snap.last.kind in (_LAST_DISCARD, _LAST_ADDED_KONG):
        return _claim_refusal(snap, seat, action)
    return _own_turn_refusal(snap, seat, action)


def validate_action(snap: TableSnapshot, seat: int, action: Action) -> None:
    """None when ``seat`` may make ``action`` now; otherwise FailedPrecondition naming why."""
    refusal = action_refusal(snap, seat, action)
    if refusal:
        raise FailedPrecondition(refusal, seat=seat, action=action_name(action))
