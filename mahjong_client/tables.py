"""CreateTable from a client: players and built-in bots at one table."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

import grpc
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc

from infra.tls import client_channel
from shared.ruleset import DEFAULT_RULESET


def create_table(
    target: str | grpc.Channel,
    seats: Sequence[str | None],
    *,
    stake: int = 1,
    max_hands: int = 0,
    max_rounds: int = 0,
    ruleset: str = DEFAULT_RULESET,
    options: Mapping[str, str] | None = None,
    tag: str = "",
    first_dealer: int | None = None,
    request_id: str = "",
    timeout: float = 10.0,
) -> gateway_pb2.CreateTableResponse:
    """A new table. ``seats`` has four entries: a player id, ``""`` for an open seat, or None
    for a built-in bot; ``max_hands`` / ``max_rounds`` (圈) end the table, 0 = no limit (a 逛花园
    ruleset plays its own payment.garden_rounds). Returns the table id and the players' seat
    tokens by seat."""
    if len(seats) != 4:
        raise ValueError(f"a table has 4 seats, got {len(seats)}")
    channel = client_channel(target) if isinstance(target, str) else target
    try:
        stub = gateway_pb2_grpc.GatewayServiceStub(channel)
        return stub.CreateTable(
            gateway_pb2.CreateTableRequest(
                request_id=request_id or str(uuid.uuid4()),
                ruleset=common_pb2.RulesetRef(name=ruleset, options=dict(options or {})),
                stake=stake,
                seats=[
                    gateway_pb2.SeatAssignment(
                        player_id=p or "",
                        display_name=p or f"bot {i}",
                        bot=p is None,
                    )
                    for i, p in enumerate(seats)
                ],
                max_hands=max_hands,
                max_rounds=max_rounds,
                tag=tag,
                first_dealer=0 if first_dealer is None else first_dealer + 1,
            ),
            timeout=timeout,
        )
    finally:
        if isinstance(target, str):
            channel.close()
