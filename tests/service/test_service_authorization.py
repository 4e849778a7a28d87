"""Who may call what, by workload identity, over real loopback servers with TLS on: the gateway's
CreateTable makes a table of matchmaking's ledger only for matchmaking's certificate on its
mutual-TLS internal port (the internal token from a player on the public port is no proof), and
matchmaking's RecordHand answers only the gateway's certificate: another workload's is
PERMISSION_DENIED naming it and the method, a player without one UNAUTHENTICATED."""

from __future__ import annotations

import time

import grpc
from mahjong.common.v1 import common_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as mm_pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc

from infra.interceptor import internal_metadata
from services.gateway.tables import OUTBOX, read_table_log
from tests.support.grpc_server import channel_to, serving
from tests.support.probes import rpc_error
from tests.support.stacks import inprocess_gateway, matchmaking_spec, queued_table, table_fees
from tests.support.tables import bot_seats, table_request
from tests.unit.matchmaking.mm_fakes import FakeAllocator

TOKEN = "internal-test-token"
T = 10
RECORD_HAND = "mahjong.matchmaking.v1.MatchmakingService/RecordHand"


def _bot_table_request():
    return table_request(bot_seats(), max_hands=1, tag="quick/test", first_dealer=common_pb2.SEAT_0)


def _reports_after_finish(store, table_id: str) -> list[str]:
    deadline = time.monotonic() + 30
    while not any(e.kind == "table_finished" for e in read_table_log(store, table_id)):
        assert time.monotonic() < deadline, f"table {table_id} did not finish"
        time.sleep(0.05)
    return sorted(key for key, _ in store.scan(OUTBOX, f"{table_id}/"))


def test_only_matchmakings_certificate_on_the_internal_port_makes_a_reported_table():
    with inprocess_gateway(
        TOKEN, seat_secret="s", matchmaking_addr="127.0.0.1:1", public_tables=False
    ) as gw:
        manager = gw.server.resource.manager
        # a player on the public port sending the internal token is still a player
        code, message, info = rpc_error(
            lambda: gw.stub.CreateTable(
                _bot_table_request(), metadata=internal_metadata(TOKEN), timeout=T
            )
        )
        assert code == grpc.StatusCode.PERMISSION_DENIED
        assert info.reason == "PUBLIC_TABLES_OFF"
        assert "matchmaking" in message and TOKEN not in message
        assert not manager.tables  # nothing created
        with gw.calling_as("matchmaking") as matchmaking:
            table_id = matchmaking.CreateTable(
                _bot_table_request(), metadata=internal_metadata(TOKEN), timeout=T
            ).table_id
        assert manager.tables[table_id].report_hands
        reports = _reports_after_finish(gw.store, table_id)
        assert len(reports) == 2 and reports[-1] == f"{table_id}/~finished", reports


def _quick_table(player, mm, alloc):
    table_id, tag, ids = queued_table(player, mm, alloc, T)
    report = mm_pb.RecordHandRequest(
        hand_id="h1",
        table_id=table_id,
        tag=tag,
        player_ids=ids,
        payments=[-9, 3, 3, 3],
        fees=table_fees(alloc, table_id),
    )
    return report, ids


def _silver(mm, ids) -> list[int]:
    """The players' silver, read from the server's facade (a player sees only their own)."""
    return [mm.account(pid).silver for pid in ids]


def test_record_hand_answers_the_gateways_certificate_alone():
    alloc = FakeAllocator()
    with serving(matchmaking_spec(alloc), internal_token=TOKEN) as (server, channel):
        player = mm_grpc.MatchmakingServiceStub(channel)  # the public port: no certificate
        report, ids = _quick_table(player, server.resource.matchmaking, alloc)
        token = internal_metadata(TOKEN)  # sent every time: the identity is what is missing

        wall_channel = channel_to(server, "matchmaking", "wall")  # the internal port
        try:
            wall = mm_grpc.MatchmakingServiceStub(wall_channel)
            code, message, info = rpc_error(
                lambda: wall.RecordHand(report, metadata=token, timeout=T)
            )
        finally:
            wall_channel.close()
        assert code == grpc.StatusCode.PERMISSION_DENIED
        assert info.reason == "CALLER_NOT_ALLOWED"
        assert f"wall may not call {RECORD_HAND}" in message
        assert info.metadata["caller"] == "wall" and info.metadata["method"] == RECORD_HAND

        code, message, info = rpc_error(
            lambda: player.RecordHand(report, metadata=token, timeout=T)
        )
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert info.reason == "NO_WORKLOAD_CERTIFICATE"
        assert RECORD_HAND in message
        assert _silver(server.resource.matchmaking, ids) == [1000] * 4  # nothing moved

        gateway_channel = channel_to(server, "matchmaking", "gateway")
        try:
            gateway = mm_grpc.MatchmakingServiceStub(gateway_channel)
            assert gateway.RecordHand(report, metadata=token, timeout=T).duplicate is False
        finally:
            gateway_channel.close()
        # payments less the room service fee (台费, 8 at stake 8) each seat pays
        assert _silver(server.resource.matchmaking, ids) == [983, 995, 995, 995]
