"""Slow, silent, flooding and greedy clients against the asyncio gateway: each is contained, and
the table and every other client go on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.interceptor import INTERNAL_TOKEN_HEADER
from mahjong_client.player import RemotePlayer, retry_delay
from mahjong_client.tables import create_table
from tests.support.stacks import inprocess_gateway
from tests.support.tls import CA_FILE, as_player

# A client whose receive window is about 1 KiB: gRPC's flow control stops the gateway's writes
# after a few events when it does not read.
SMALL_WINDOW = [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]


def _error_info(exc: grpc.RpcError) -> tuple[str, dict[str, str], float | None]:
    status = rpc_status.from_call(exc)
    reason, metadata = "", {}
    for d in status.details if status else ():
        if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            d.Unpack(info)
            reason, metadata = info.reason, dict(info.metadata)
    return reason, metadata, retry_delay(exc)


def _spectator(stub, table_id: str) -> str:
    return stub.JoinSeat(
        pb.JoinSeatRequest(request_id=str(uuid.uuid4()), table_id=table_id, spectator=True)
    ).seat_token


def _bot_table(address: str, hands: int = 2) -> str:
    return create_table(address, [None] * 4, max_hands=hands).table_id


def _read_all(stub, table_id: str, token: str, after: int = 0) -> list[tuple[int, str]]:
    return [
        (r.event.sequence, r.event.WhichOneof("kind"))
        for r in stub.Subscribe(
            pb.SubscribeRequest(table_id=table_id, seat_token=token, after_sequence=after),
            timeout=60,
        )
    ]


def test_a_stream_that_stops_reading_is_cut_and_resumes_with_nothing_lost():
    with inprocess_gateway(
        seat_secret="s", bot_delay_ms=20, stream_write_timeout_seconds=0.5
    ) as gw:
        address = gw.server.address
        table_id = _bot_table(address, hands=3)
        token = _spectator(gw.stub, table_id)
        slow = as_player(address, options=SMALL_WINDOW)
        call = gateway_pb2_grpc.GatewayServiceStub(slow).Subscribe(
            pb.SubscribeRequest(table_id=table_id, seat_token=token)
        )
        first = next(call).event
        seen = [(first.sequence, first.WhichOneof("kind"))]
        time.sleep(2.0)  # reads nothing: the gateway's write waits past its timeout
        with pytest.raises(grpc.RpcError) as cut:
            for r in call:
                seen.append((r.event.sequence, r.event.WhichOneof("kind")))
        assert cut.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        reason, meta, _ = _error_info(cut.value)
        assert reason == "SLOW_CONSUMER"
        assert "resume" in cut.value.details()
        assert int(meta["last_sequence"]) <= seen[-1][0]
        # the table played on meanwhile; the client resumes from the last event it got
        seen += _read_all(gw.stub, table_id, token, after=seen[-1][0])
        everything = _read_all(gw.stub, table_id, token)
        assert seen == everything, "an event was lost or repeated across the cut"
        assert everything[-1][1] == "table_finished"
        slow.close()


def test_a_flood_from_one_seat_is_refused_while_the_other_three_play_on():
    with inprocess_gateway(
        seat_secret="s",
        discard_ms=400,
        claim_ms=400,
        auto_play_delay_ms=0,
        seat_calls_per_second=20,
        seat_call_burst=20,
    ) as gw:
        address = gw.server.address
        table = create_table(address, ["flood", "p1", "p2", "p3"], max_hands=1)
        players = [
            RemotePlayer(address, table.table_id, table.seat_tokens[s], seat=s) for s in (1, 2, 3)
        ]
        logs: dict[int, object] = {}
        threads = [
            threading.Thread(target=lambda p=p: logs.__setitem__(p.seat, p.run()), daemon=True)
            for p in players
        ]
        for t in threads:
            t.start()
        refused, delays, answered = 0, [], 0
        flood_channel = as_player(address)
        flood = gateway_pb2_grpc.GatewayServiceStub(flood_channel)
        request = pb.GetTableStateRequest(table_id=table.table_id, seat_token=table.seat_tokens[0])
        while any(t.is_alive() for t in threads):
            try:
                flood.GetTableState(request, timeout=5)
                answered += 1
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, exc
                reason, _, delay = _error_info(exc)
                assert reason == "RATE_LIMITED"
                refused += 1
                delays.append(delay)
        for t in threads:
            t.join(timeout=60)
        assert refused > 10 * answered / 20, (refused, answered)  # most of the flood refused
        assert all(d is not None and 0 < d <= 0.06 for d in delays)  # 1/20 s to the next call
        for seat, log in logs.items():
            assert log.table_finished is not None, f"seat {seat} never saw the end"
            assert not log.rejections, (seat, log.rejections)
        for p in players:
            p.close()
        flood_channel.close()


_SILENT_CLIENT = textwrap.dedent(
    """
    import sys, time
    from mahjong.gateway.v1 import gateway_pb2 as pb, gateway_pb2_grpc as g
    from infra.tls import client_channel
    address, table, token, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    channel = client_channel(address, ca_file=sys.argv[5])  # a player: the gateway's TLS
    stub = g.GatewayServiceStub(channel)
    calls = [stub.Subscribe(pb.SubscribeRequest(table_id=table, seat_token=token))
             for _ in range(n)]
    for c in calls:
        next(c)
    print("open", flush=True)
    time.sleep(3600)
    """
)


def _wait_for(predicate, timeout: float) -> float:
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError("timed out")
        time.sleep(0.05)
    return time.monotonic() - start


def test_a_client_that_vanishes_without_a_fin_is_detected_and_its_streams_freed():
    with inprocess_gateway(
        seat_secret="s",
        discard_ms=60_000,
        server_config={"keepalive_seconds": 1.0, "keepalive_timeout_seconds": 1.0},
    ) as gw:
        limits = gw.server.limits
        table = create_table(gw.server.address, ["a", "", "", ""])
        token = _spectator(gw.stub, table.table_id)
        client = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _SILENT_CLIENT,
                gw.server.address,
                table.table_id,
                token,
                "5",
                CA_FILE,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert client.stdout.readline().strip() == "open"
            _wait_for(lambda: limits.streams == 5, 5)
            # SIGSTOP: the process keeps its sockets (no FIN, no RST) and answers no ping
            os.kill(client.pid, signal.SIGSTOP)
            took = _wait_for(lambda: limits.streams == 0, 15)
            assert took < 1.0 + 1.0 + 3.0  # keepalive + its timeout, and a margin
        finally:
            client.kill()
            client.wait()


def test_two_thousand_streams_open_and_close_without_errors():
    n = 2000
    # one client process stands for 2,000 watchers: no flood control on their one token
    with inprocess_gateway(seat_secret="s", discard_ms=60_000, seat_calls_per_second=0) as gw:
        limits = gw.server.limits
        table = create_table(gw.server.address, ["a", "", "", ""])
        token = _spectator(gw.stub, table.table_id)
        client = subprocess.Popen(  # a real client process, ten connections
            [
                sys.executable,
                "-m",
                "tests.support.stream_load",
                gw.server.address,
                table.table_id,
                token,
                str(n),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            opened = json.loads(client.stdout.readline())
            assert opened["open"] == n and opened["errors"] == []
            assert limits.streams == n
            client.stdin.write("probe\n")
            client.stdin.flush()
            assert json.loads(client.stdout.readline())["unary_ms"] < 2000
            client.stdin.write("close\n")
            client.stdin.flush()
            assert json.loads(client.stdout.readline())["errors"] == []
            _wait_for(lambda: limits.streams == 0, 10)
        finally:
            client.kill()
            client.wait()


def test_stream_limits_per_address_refuse_the_stream_past_them():
    with inprocess_gateway(
        seat_secret="s", discard_ms=60_000, server_config={"max_streams_per_address": 3}
    ) as gw:
        table = create_table(gw.server.address, ["a", "", "", ""])
        token = _spectator(gw.stub, table.table_id)
        request = pb.SubscribeRequest(table_id=table.table_id, seat_token=token)
        held = [gw.stub.Subscribe(request) for _ in range(3)]
        for c in held:
            next(c)
        with pytest.raises(grpc.RpcError) as refused:
            next(gw.stub.Subscribe(request))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert _error_info(refused.value)[0] == "ADDRESS_STREAM_LIMIT"
        held[0].cancel()
        _wait_for(lambda: gw.server.limits.streams == 2, 5)
        assert next(gw.stub.Subscribe(request)).event.sequence == 1  # a slot again
        for c in held:
            c.cancel()


def _create(stub, metadata=(), **fields):
    seats = [pb.SeatAssignment(bot=True)] * 4
    return stub.CreateTable(
        pb.CreateTableRequest(
            request_id=str(uuid.uuid4()), stake=1, max_hands=1, seats=seats, **fields
        ),
        metadata=metadata,
    )


TOKEN = "internal"


def test_tables_not_created_by_matchmaking_are_limited_per_address():
    with inprocess_gateway(
        TOKEN,
        seat_secret="s",
        bot_delay_ms=60_000,  # the bots think for a minute: the tables stay live
        public_tables_per_address=2,
        public_tables_per_minute=60,
    ) as gw:
        _create(gw.stub)
        _create(gw.stub)
        with pytest.raises(grpc.RpcError) as refused:
            _create(gw.stub)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert _error_info(refused.value)[0] == "TABLE_LIMIT"
        # the internal token alone, from a player on the public port, is no way around it
        with pytest.raises(grpc.RpcError) as still:
            _create(gw.stub, metadata=((INTERNAL_TOKEN_HEADER, TOKEN),))
        assert _error_info(still.value)[0] == "TABLE_LIMIT"
        held = len(gw.server.resource.manager.tables)
        # matchmaking (its certificate on the internal port, and the token) is not limited
        with gw.calling_as("matchmaking") as matchmaking:
            _create(matchmaking, metadata=((INTERNAL_TOKEN_HEADER, TOKEN),))
        assert len(gw.server.resource.manager.tables) == held + 1


def test_public_table_creation_is_rate_limited_and_can_be_switched_off():
    with inprocess_gateway(
        TOKEN, seat_secret="s", public_tables_per_minute=3, public_tables_per_address=0
    ) as gw:
        for _ in range(3):
            _create(gw.stub)
        with pytest.raises(grpc.RpcError) as refused:
            _create(gw.stub)
        reason, _, delay = _error_info(refused.value)
        assert reason == "RATE_LIMITED" and delay is not None and 10 < delay <= 20
    with inprocess_gateway(TOKEN, seat_secret="s", public_tables=False) as gw:
        with pytest.raises(grpc.RpcError) as off:
            _create(gw.stub)
        assert off.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert _error_info(off.value)[0] == "PUBLIC_TABLES_OFF"
        with pytest.raises(grpc.RpcError) as off:  # the token without matchmaking's certificate
            _create(gw.stub, metadata=((INTERNAL_TOKEN_HEADER, TOKEN),))
        assert _error_info(off.value)[0] == "PUBLIC_TABLES_OFF"
        assert not gw.server.resource.manager.tables  # nothing created
        with gw.calling_as("matchmaking") as matchmaking:
            assert _create(matchmaking, metadata=((INTERNAL_TOKEN_HEADER, TOKEN),)).table_id


@pytest.mark.parametrize("model", ["threads", "asyncio"])
def test_both_server_models_play_a_remote_hand_alike(model):
    with inprocess_gateway(
        seat_secret="s", auto_play_delay_ms=0, server_config={"server_model": model}
    ) as gw:
        table = create_table(gw.server.address, ["alice", None, None, None], max_hands=1)
        player = RemotePlayer(gw.server.address, table.table_id, table.seat_tokens[0], seat=0)
        try:
            log = player.run()
        finally:
            player.close()
        assert log.table_finished is not None
        assert log.sequences == sorted(set(log.sequences))  # each event once, in order
        assert not log.rejections


def test_a_stalled_store_write_stalls_no_other_table_nor_any_stream(tmp_path):
    """Another process holds the SQLite store's write lock for two seconds: the bot table whose
    step is writing waits, while a table waiting on its player answers at once, a new stream
    gets its history from memory, and open streams stay open; then everything goes on."""
    import sqlite3

    db = tmp_path / "gw.db"
    with inprocess_gateway(
        seat_secret="s",
        bot_delay_ms=5,
        discard_ms=60_000,
        server_config={"store_url": f"sqlite:///{db}"},
    ) as gw:
        address = gw.server.address
        waiting = create_table(address, ["p", None, None, None], max_hands=1, first_dealer=0)
        busy = _bot_table(address, hands=2)
        look = pb.GetTableStateRequest(table_id=waiting.table_id, seat_token=waiting.seat_tokens[0])
        _wait_for(lambda: gw.stub.GetTableState(look).table.HasField("prompt"), 20)
        watch = gw.stub.Subscribe(
            pb.SubscribeRequest(table_id=busy, seat_token=_spectator(gw.stub, busy))
        )
        next(watch)
        blocker = sqlite3.connect(db, timeout=10)
        blocker.execute("BEGIN EXCLUSIVE")  # every write of the gateway waits
        try:
            time.sleep(0.3)
            start = time.perf_counter()
            view = gw.stub.GetTableState(look, timeout=5).table
            history = []  # the seat's events up to its prompt (four without flowers, or more)
            for r in gw.stub.Subscribe(
                pb.SubscribeRequest(table_id=waiting.table_id, seat_token=waiting.seat_tokens[0]),
                timeout=5,
            ):
                history.append(r.event.sequence)
                if r.event.WhichOneof("kind") == "prompt":
                    break
            answered = time.perf_counter() - start
            time.sleep(1.5)
        finally:
            blocker.rollback()
            blocker.close()
        assert view.HasField("prompt") and history[0] == 1
        assert answered < 1.0, f"the waiting table took {answered:.2f} s to answer"
        kinds = [r.event.WhichOneof("kind") for r in watch]  # the open stream went on to the end
        assert kinds[-1] == "table_finished"
