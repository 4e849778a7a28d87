"""Any gateway replica serves any client: a player who only ever talks to replica B plays a
table replica A runs — its stream relayed, its actions forwarded — with the same answers,
codes and idempotency as on the owner; when the owner dies, the player's calls to B go on and
its stream with them, B taking the table over once the lease expires."""

from __future__ import annotations

import threading
import time
import uuid

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.tls import OPERATOR
from mahjong_client.player import RemotePlayer
from services.gateway.domain.replay import export_hand, table_header
from services.gateway.verify import verify_hand
from tests.e2e.players import legal_answer
from tests.e2e.test_bot_hands import read_log
from tests.e2e.test_failover import gateway
from tests.support.events import json_log
from tests.support.tables import request_table
from tests.support.tls import as_player, as_workload

pytestmark = pytest.mark.integration


def _reason(exc: grpc.RpcError) -> str:
    status = rpc_status.from_call(exc)
    for d in status.details if status else ():
        info = error_details_pb2.ErrorInfo()
        if d.Unpack(info):
            return info.reason
    return ""


def _table(stub, player: str, hands: int = 1):
    return request_table(
        stub,
        [pb.SeatAssignment(player_id=player), *[pb.SeatAssignment(bot=True)] * 3],
        max_hands=hands,
    )


def test_a_player_on_another_replica_plays_as_on_the_owner(stack):
    db = stack["tmp"] / "any-replica.db"
    # the test asks each question of both replicas at machine speed: no flood control
    a = gateway(stack, db, "any-a", "--seat-calls-per-second", "0")
    b = gateway(stack, db, "any-b", "--seat-calls-per-second", "0")
    channels = [as_player(a.address), as_player(b.address)]
    on_a, on_b = (gateway_pb2_grpc.GatewayServiceStub(c) for c in channels)
    try:
        t = _table(on_a, "anyone")  # replica A runs it
        token = t.seat_tokens[0]
        got = []
        for r in on_b.Subscribe(  # relayed by B from A
            pb.SubscribeRequest(table_id=t.table_id, seat_token=token), timeout=120
        ):
            e = r.event
            got.append(e.sequence)
            kind = e.WhichOneof("kind")
            if kind == "prompt":
                look = pb.GetTableStateRequest(table_id=t.table_id, seat_token=token)
                views = [stub.GetTableState(look, timeout=10).table for stub in (on_a, on_b)]
                assert views[0] == views[1], "B's view differs from the owner's"
                act = pb.ActRequest(
                    table_id=t.table_id,
                    seat_token=token,
                    request_id=uuid.uuid4().hex,
                    last_sequence=e.sequence,
                    action=legal_answer(e.prompt),
                )
                first = on_b.Act(act, timeout=10)  # forwarded to A
                again = on_a.Act(act, timeout=10)  # the same request on the owner
                assert (again.sequence, again.replayed) == (first.sequence, True)
                stale = pb.ActRequest()
                stale.CopyFrom(act)
                stale.request_id = uuid.uuid4().hex
                stale.last_sequence = 0
                refusals = []
                for stub in (on_a, on_b):
                    with pytest.raises(grpc.RpcError) as refused:
                        stub.Act(stale, timeout=10)
                    exc = refused.value
                    refusals.append((exc.code(), exc.details(), _reason(exc)))
                assert refusals[0] == refusals[1], "B's answer differs from the owner's"
            if kind == "table_finished":
                break
        # exactly what the owner streams to that seat, each event once, in order
        direct = [
            r.event.sequence
            for r in on_a.Subscribe(
                pb.SubscribeRequest(table_id=t.table_id, seat_token=token), timeout=60
            )
        ]
        assert got == direct
        log = read_log(db, t.table_id)
        assert [e.seq for e in log] == list(range(1, len(log) + 1))
        header = table_header(t.table_id, log)
        for hid in [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]:
            verdict = verify_hand(export_hand(header, log, hid))
            assert verdict.ok, verdict.problems
    finally:
        for c in channels:
            c.close()
        a.stop()
        b.stop()


def test_the_owner_dies_and_the_player_on_another_replica_plays_on(stack):
    db = stack["tmp"] / "any-replica-kill.db"
    a = gateway(stack, db, "kill-a")
    b = gateway(stack, db, "kill-b")
    try:
        with as_player(a.address) as ch:
            t = _table(gateway_pb2_grpc.GatewayServiceStub(ch), "survivor", hands=2)
        player = RemotePlayer(b.address, t.table_id, t.seat_tokens[0], seat=0, reconnect_for=30)
        done: dict = {}
        runner = threading.Thread(target=lambda: done.setdefault("log", player.run()), daemon=True)
        runner.start()
        # let the player act a few times through B, then kill the owner mid-hand
        deadline_events = 40
        while len(player.log.sequences) < deadline_events and runner.is_alive():
            runner.join(0.05)
        a.proc.kill()
        a.proc.wait()
        runner.join(timeout=120)
        assert not runner.is_alive(), (
            f"the player never finished on replica B: it saw up to event {player.last_sequence}, "
            f"subscribed from {player.log.subscribes}, acted {player.log.actions} times, "
            f"was refused {[(r.code.name, r.message) for r in player.log.rejections]}"
        )
        log = done["log"]
        assert log.table_finished is not None and log.table_finished.hands_played == 2
        assert log.sequences == sorted(set(log.sequences)), "an event came twice or out of order"
        # B re-attached the relayed stream to the table's new owner (itself) after the last
        # event it sent: the player's one stream never broke
        assert log.subscribes == [0], log.subscribes
        player.close()
        stored = read_log(db, t.table_id)
        assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
        # every event of seat 0's view of the log reached the player, across the break
        with as_player(b.address) as ch:
            direct = [
                r.event.sequence
                for r in gateway_pb2_grpc.GatewayServiceStub(ch).Subscribe(
                    pb.SubscribeRequest(table_id=t.table_id, seat_token=t.seat_tokens[0]),
                    timeout=60,
                )
            ]
        assert log.sequences == direct
    finally:
        a.stop()
        b.stop()


def test_browsers_and_threaded_replicas_forward_too(stack):
    """The web port (Connect) of replica B, and replica C on the threaded server model, serve a
    table replica A runs; the answers are the owner's, refusals included."""
    from tests.support.web import WebGateway

    db = stack["tmp"] / "any-replica-web.db"
    a = gateway(stack, db, "web-a", "--seat-calls-per-second", "0")
    b = gateway(stack, db, "web-b", "--seat-calls-per-second", "0", "--web-port", "auto")
    web_port = b.ports.web
    c = gateway(stack, db, "web-c", "--seat-calls-per-second", "0", "--server-model", "threads")
    channels = [as_player(p.address) for p in (a, c)]
    on_a, on_c = (gateway_pb2_grpc.GatewayServiceStub(ch) for ch in channels)
    web = WebGateway(f"http://127.0.0.1:{web_port}", "connect")
    try:
        t = request_table(  # the person deals: the table waits on their first discard
            on_a,
            [pb.SeatAssignment(player_id="browser"), *[pb.SeatAssignment(bot=True)] * 3],
            max_hands=1,
            first_dealer=common_pb2.SEAT_0,
        )
        token = t.seat_tokens[0]
        look = pb.GetTableStateRequest(table_id=t.table_id, seat_token=token)
        deadline = time.monotonic() + 20
        while not on_a.GetTableState(look, timeout=10).table.HasField("prompt"):
            assert time.monotonic() < deadline, "the person's first prompt never came"
            time.sleep(0.05)
        views = [on_a.GetTableState(look, timeout=10).table, on_c.GetTableState(look).table]
        views.append(web.GetTableState(look).table)
        assert views[0] == views[1] == views[2]
        # the first events, relayed to the browser and by the threaded replica
        request = pb.SubscribeRequest(table_id=t.table_id, seat_token=token)
        first_web = [
            r.event.sequence for _, r in zip(range(3), web.Subscribe(request), strict=False)
        ]
        stream_c = on_c.Subscribe(request, timeout=30)
        first_c = [next(stream_c).event.sequence for _ in range(3)]
        stream_c.cancel()
        assert first_web == first_c == [1, 2, 3]
        forged = pb.GetTableStateRequest(table_id=t.table_id, seat_token=token[:-2] + "xx")
        answers = []
        for call in (on_a.GetTableState, on_c.GetTableState):
            with pytest.raises(grpc.RpcError) as refused:
                call(forged, timeout=10)
            answers.append((refused.value.code().name, refused.value.details()))
        from connectrpc.errors import ConnectError

        with pytest.raises(ConnectError) as web_refused:
            web.GetTableState(forged)
        assert answers[0] == answers[1]
        assert web_refused.value.message == answers[0][1]
        # the operator's console on the threaded replica: A's table, listed and inspected
        # there (sent on to A's internal port with the operator's claim)
        op = as_workload(c.internal_address, "gateway", OPERATOR)
        channels.append(op)
        op_c = gateway_pb2_grpc.GatewayServiceStub(op)
        listed = op_c.ListTables(pb.ListTablesRequest(), timeout=10).tables
        assert [r.table_id for r in listed] == [t.table_id] and list(listed[0].chips)
        page = op_c.InspectTable(pb.InspectTableRequest(table_id=t.table_id, limit=2), timeout=10)
        assert page.next_after_sequence == 2 and page.table.table_id == t.table_id
    finally:
        web.close()
        for ch in channels:
            ch.close()
        for p in (a, b, c):
            p.stop()
