"""``mahjong.gateway.v1.Action`` to and from the domain's decisions (:mod:`shared.table`).

:func:`action_from_proto` validates an ``Action`` and returns a value for every kind a client
may send: a hand action, a :class:`~shared.table.TileSwap` (换牌) or
:class:`~shared.table.ResumePlay` (end 托管); malformed input is InvalidArgument naming the
field. Used by the gateway's servicer and by every Python client of the gateway.
"""

from __future__ import annotations

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from infra.convert.common import tile_from_proto, tile_to_proto, tiles_to_proto
from shared import tiles as T
from shared.errors import InvalidArgument
from shared.melds import Meld, MeldKind
from shared.table import (
    Action,
    AddedKong,
    Chow,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    Pass,
    Pong,
    ResumePlay,
    SeatRequest,
    TileSwap,
    Win,
)


def action_from_proto(action: pb.Action) -> SeatRequest:
    """Validate an ``Action`` (InvalidArgument naming the field) and return its domain value."""
    which = action.WhichOneof("kind")
    if which is None:
        raise InvalidArgument(
            "action is empty: set one of discard, declare_ready, chow, ...", field="action"
        )
    if which == "discard":
        return Discard(_hand_tile(action.discard.tile, "action.discard.tile"))
    if which == "declare_ready":
        return DeclareReady(
            _hand_tile(action.declare_ready.discard, "action.declare_ready.discard")
        )
    if which == "chow":
        tiles = sorted(
            _hand_tile(v, f"action.chow.tiles[{i}]") for i, v in enumerate(action.chow.tiles)
        )
        try:
            Meld.of(MeldKind.CHOW, tiles)
        except ValueError as exc:
            raise InvalidArgument(str(exc), field="action.chow.tiles") from None
        return Chow(tiles[0])
    if which == "pong":
        return Pong()
    if which == "kong":
        kind = action.kong.kind
        if kind == common_pb2.MELD_KIND_EXPOSED_KONG:
            return ExposedKong()
        if kind in (common_pb2.MELD_KIND_ADDED_KONG, common_pb2.MELD_KIND_CONCEALED_KONG):
            tile = _hand_tile(action.kong.tile, "action.kong.tile")
            return (
                AddedKong(tile) if kind == common_pb2.MELD_KIND_ADDED_KONG else ConcealedKong(tile)
            )
        raise InvalidArgument(
            "action.kong.kind must be EXPOSED_KONG, ADDED_KONG or CONCEALED_KONG",
            field="action.kong.kind",
        )
    if which == "win":
        return Win(eight_flowers=action.win.eight_flowers)
    if which == "pass":
        return Pass()
    if which == "resume":
        return ResumePlay()
    return TileSwap(
        tuple(
            _hand_tile(v, f"action.tile_swap.tiles[{i}]")
            for i, v in enumerate(action.tile_swap.tiles)
        )
    )


def _hand_tile(value: int, field: str) -> int:
    k = tile_from_proto(value, field)
    if T.is_bonus(k):
        raise InvalidArgument(
            f"{field} is a bonus tile ({T.format_tile(k)}): bonus tiles are exposed, never played",
            field=field,
        )
    return k


def action_to_proto(action: Action | TileSwap | ResumePlay) -> pb.Action:
    """The proto ``Action`` of a domain decision (for Python clients and bots)."""
    if isinstance(action, Discard):
        return pb.Action(discard=pb.Discard(tile=tile_to_proto(action.tile)))
    if isinstance(action, DeclareReady):
        return pb.Action(declare_ready=pb.DeclareReady(discard=tile_to_proto(action.discard)))
    if isinstance(action, Chow):
        return pb.Action(chow=pb.Chow(tiles=tiles_to_proto(action.tiles)))
    if isinstance(action, Pong):
        return pb.Action(pong=pb.Pong())
    if isinstance(action, ExposedKong):
        return pb.Action(kong=pb.Kong(kind=common_pb2.MELD_KIND_EXPOSED_KONG))
    if isinstance(action, AddedKong):
        return pb.Action(
            kong=pb.Kong(kind=common_pb2.MELD_KIND_ADDED_KONG, tile=tile_to_proto(action.tile))
        )
    if isinstance(action, ConcealedKong):
        return pb.Action(
            kong=pb.Kong(kind=common_pb2.MELD_KIND_CONCEALED_KONG, tile=tile_to_proto(action.tile))
        )
    if isinstance(action, Win):
        return pb.Action(win=pb.Win(eight_flowers=action.eight_flowers))
    if isinstance(action, TileSwap):
        return pb.Action(tile_swap=pb.TileSwap(tiles=tiles_to_proto(action.tiles)))
    if isinstance(action, ResumePlay):
        return pb.Action(resume=pb.Resume())
    return pb.Action(**{"pass": pb.Pass()})
