"""The Python client (mahjong_client) under the gateway's flood control: a seat refused
RESOURCE_EXHAUSTED with RetryInfo waits as long as it asks and goes on, and that wait spends
nothing of its reconnect budget (the time it allows a gateway that does not answer). Over a real
loopback gateway (in-process) whose seats may make a few calls a second."""

from __future__ import annotations

import grpc
from mahjong.common.v1 import common_pb2
from prometheus_client import REGISTRY

from mahjong_client import RemotePlayer
from tests.support.stacks import inprocess_gateway
from tests.support.tables import mixed_seats, request_table

GATEWAY = "mahjong.gateway.v1.GatewayService"
CALLS_PER_SECOND = 5  # so a refusal asks for up to 200 ms
RECONNECT_FOR = 0.05  # far less: a refusal's wait must not count against it


def refused() -> float:
    """How many calls of the in-process servers flood control refused so far."""
    return sum(
        REGISTRY.get_sample_value(
            "grpc_server_handled_total",
            {"grpc_service": GATEWAY, "grpc_method": m, "grpc_code": "RESOURCE_EXHAUSTED"},
        )
        or 0.0
        for m in ("Subscribe", "GetTableState", "Act")
    )


def test_a_player_waits_out_flood_control_without_spending_its_reconnect_budget():
    with inprocess_gateway(
        seat_secret="flood-secret",
        seat_calls_per_second=CALLS_PER_SECOND,
        seat_call_burst=1,
        discard_ms=10_000,  # a prompt the player lost is decided by its timer
        claim_ms=10_000,
    ) as gw:
        t = request_table(
            gw.stub, mixed_seats(1, "flood-"), max_hands=1, first_dealer=common_pb2.SEAT_0
        )
        before = refused()
        player = RemotePlayer(
            gw.channel,
            t.table_id,
            t.seat_tokens[0],
            seat=0,
            timeout=5.0,
            reconnect_for=RECONNECT_FOR,
            name="flooded",
        )
        log = player.run()
    assert refused() > before  # the seat did meet flood control
    assert log.table_finished is not None
    assert log.actions > 0
    assert not [r for r in log.rejections if r.code == grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert log.subscribes == [0]  # no prompt lost to a refusal, no stream given up
