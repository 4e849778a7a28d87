"""The client side of the gateway's protobuf contract: prompts and views in, actions out.

The gateway's servicer turns domain options into ``gateway.v1.Options`` and ``gateway.v1.Action``
into domain actions; a client needs the opposite direction, which lives here:

* :func:`options_from_prompt` — a ``Prompt`` as :class:`shared.table.OwnTurnOptions` or
  :class:`shared.table.ClaimOptions` (a win is described from the seat's own tiles);
* :func:`action_to_proto` — a :mod:`shared.table` action (or tiles to bury) as a proto
  ``Action``;
* :func:`view_from_proto` — a ``TableView`` as the bots' :class:`SeatView`.
"""

from __future__ import annotations

from collections.abc import Sequence

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2

from infra.convert.common import (
    meld_from_proto,
    ruleset_from_ref,
    seat_from_proto_optional,
    tile_from_proto_optional,
    tiles_from_proto,
    tiles_to_proto,
)
from services.gateway.bots.view import SeatView
from services.gateway.convert.actions import action_to_proto as domain_action_to_proto
from shared.hand.hand_type import HandType
from shared.hand.preset_hands import classify_hand
from shared.melds import Meld, MeldKind
from shared.table import (
    Action,
    ClaimOptions,
    OwnTurnOptions,
    WinKind,
    WinOption,
)
from shared.tiles import NUM_FLOWERS, NUM_KINDS, WILDCARD

OWN_TURN = gateway_pb2.PROMPT_KIND_OWN_TURN
CLAIM = gateway_pb2.PROMPT_KIND_CLAIM
ROB_KONG = gateway_pb2.PROMPT_KIND_ROB_KONG
TILE_SWAP = gateway_pb2.PROMPT_KIND_TILE_SWAP

_HIDDEN_KONG = Meld(MeldKind.CONCEALED_KONG, ())


def meld_from_view(pb: common_pb2.Meld, field: str = "meld") -> Meld:
    """A meld as a seat sees it: another seat's concealed kong comes without tiles."""
    if pb.kind == common_pb2.MELD_KIND_CONCEALED_KONG and not pb.tiles:
        return _HIDDEN_KONG
    return meld_from_proto(pb, field)


def view_from_proto(
    table: gateway_pb2.TableView, prompt: gateway_pb2.Prompt | None = None
) -> SeatView:
    """The viewer's :class:`SeatView` from its ``TableView``.

    ``prompt`` (default: the view's own) fixes the hand size: on the own turn the seat holds
    ``14 − 3 × melds`` tiles, so a just-drawn tile listed apart (``drawn``) is added back.
    """
    viewer = seat_from_proto_optional(table.viewer, "table.viewer")
    if viewer is None:
        raise ValueError("a spectator's view has no own seat to decide for")
    seats = list(table.seats)
    own = seats[viewer]
    concealed = [0] * NUM_KINDS
    wildcards = 0
    for k in tiles_from_proto(own.concealed, "concealed"):
        if k < NUM_KINDS:
            concealed[k] += 1
        elif k == WILDCARD:
            wildcards += 1
    melds = tuple(meld_from_view(m) for m in own.melds)
    prompt = prompt if prompt is not None else (table.prompt if table.HasField("prompt") else None)
    want = (14 if prompt is not None and prompt.kind == OWN_TURN else 13) - 3 * len(melds)
    drawn = tile_from_proto_optional(own.drawn, "drawn")
    if drawn is not None and sum(concealed) + wildcards == want - 1:
        if drawn < NUM_KINDS:
            concealed[drawn] += 1
        elif drawn == WILDCARD:
            wildcards += 1
    return SeatView(
        seat=viewer,
        ruleset=ruleset_from_ref(table.ruleset),
        concealed=tuple(concealed),
        melds=melds,
        flowers=tuple(tiles_from_proto(own.flowers, "flowers")),
        declared_ready=own.ready,
        discards=tuple(tuple(tiles_from_proto(s.discards, "discards")) for s in seats),
        melds_by_seat=tuple(tuple(meld_from_view(m) for m in s.melds) for s in seats),
        ready=tuple(s.ready for s in seats),
        tiles_left=table.hand.tiles_left,
        dealer=seat_from_proto_optional(table.hand.dealer, "hand.dealer") or 0,
        wildcards=wildcards,
        wild_kind=tile_from_proto_optional(table.hand.wild_kind, "hand.wild_kind"),
    )


def _win_option(view: SeatView, kind: WinKind, tile: int | None) -> WinOption:
    """Describe an offered win from the seat's own tiles (the prompt only says "win")."""
    counts = list(view.concealed)
    if tile is not None and kind is not WinKind.SELF_DRAW and sum(counts) % 3 == 1:
        counts[tile] += 1
    complete = (sum(counts) + view.wildcards) % 3 == 2
    hand = classify_hand(counts, view.melds, view.ruleset, view.wildcards) if complete else None
    if hand is None and len(view.flowers) >= NUM_FLOWERS:
        return WinOption(HandType.EIGHT_FLOWERS, WinKind.EIGHT_FLOWERS)
    return WinOption(hand or HandType.PONG_PONG, kind, tile)


def _own_turn_wins(
    o: gateway_pb2.Options, view: SeatView, tile: int | None
) -> tuple[WinOption, ...]:
    """The wins an own-turn prompt offers: the winning hand and/or 八花齐 when the server names
    them apart (Options.win_shape, win_eight_flowers), else the one ``win`` says."""
    if not o.win:
        return ()
    if not o.win_eight_flowers:
        return (_win_option(view, WinKind.SELF_DRAW, tile),)
    flowers = WinOption(HandType.EIGHT_FLOWERS, WinKind.EIGHT_FLOWERS)
    if not o.win_shape:
        return (flowers,)
    counts = list(view.concealed)
    complete = (sum(counts) + view.wildcards) % 3 == 2
    hand = classify_hand(counts, view.melds, view.ruleset, view.wildcards) if complete else None
    return (WinOption(hand or HandType.PONG_PONG, WinKind.SELF_DRAW, tile), flowers)


def options_from_prompt(
    prompt: gateway_pb2.Prompt, view: SeatView
) -> OwnTurnOptions | ClaimOptions:
    """The prompt's options as the domain options a bot decides on."""
    o = prompt.options
    tile = tile_from_proto_optional(prompt.tile, "prompt.tile")
    if prompt.kind == OWN_TURN:
        return OwnTurnOptions(
            seat=view.seat,
            discards=tuple(tiles_from_proto(o.discards, "options.discards")),
            ready_discards=tuple(tiles_from_proto(o.ready_discards, "options.ready_discards")),
            concealed_kongs=tuple(tiles_from_proto(o.concealed_kongs, "options.concealed_kongs")),
            added_kongs=tuple(tiles_from_proto(o.added_kongs, "options.added_kongs")),
            wins=_own_turn_wins(o, view, tile),
        )
    if prompt.kind in (CLAIM, ROB_KONG):
        kind = WinKind.ROB_KONG if prompt.kind == ROB_KONG else WinKind.DISCARD
        return ClaimOptions(
            seat=view.seat,
            win=_win_option(view, kind, tile) if o.win else None,
            pong=o.pong,
            exposed_kong=o.exposed_kong,
            chows=tuple(
                min(tiles_from_proto(c.tiles, f"options.chows[{i}]")) for i, c in enumerate(o.chows)
            ),
        )
    raise ValueError(f"prompt kind {prompt.kind} has no domain options")


def action_to_proto(action: Action | Sequence[int]) -> gateway_pb2.Action:
    """A domain action as ``gateway.v1.Action``
    (:func:`services.gateway.convert.actions.action_to_proto`); a tuple of tiles is a 换牌 (the
    tiles to bury)."""
    if isinstance(action, tuple | list):
        return gateway_pb2.Action(tile_swap=gateway_pb2.TileSwap(tiles=tiles_to_proto(action)))
    return domain_action_to_proto(action)
