"""A gateway replica dies mid-hand (SIGKILL); another replica on the same store takes the table
over when the lease expires, rebuilt from the event log. The player reconnects to it with the
same seat token and its last sequence number, sees exactly the events it missed and plays the
table to its end; every hand of the log (written by both replicas) verifies."""

from __future__ import annotations

import time

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from services.gateway.domain.replay import export_hand, table_header
from services.gateway.verify import verify_hand
from tests.e2e.players import answer
from tests.e2e.test_bot_hands import read_log
from tests.support.events import json_log
from tests.support.stacks import backend_flags, service_process
from tests.support.tables import request_table

pytestmark = pytest.mark.integration


def gateway(stack, db, name):
    procs = stack["procs"]
    flags = [
        *backend_flags(procs),
        "--seat-secret",
        "e2e-secret",
        "--lease-ms",
        "600",
        "--replica-id",
        name,
        "--discard-ms",
        "600000",
        "--claim-ms",
        "600000",
        "--bot-delay-ms",
        "20",
    ]
    return (
        service_process(
            "gateway", stack["tmp"], store_url=f"sqlite:///{db}", extra=flags, log_name=name
        )
        .start()
        .wait_ready()
    )


def test_another_replica_takes_the_table_over_and_the_player_plays_on(stack):
    db = stack["tmp"] / "failover.db"
    a = gateway(stack, db, "replica-a")
    b = None
    try:
        ch = grpc.insecure_channel(a.address)
        stub = gateway_pb2_grpc.GatewayServiceStub(ch)
        t = request_table(
            stub,
            [pb.SeatAssignment(player_id="fo-0"), *[pb.SeatAssignment(bot=True)] * 3],
            max_hands=2,
            first_dealer=common_pb2.SEAT_1,
        )
        token = t.seat_tokens[0]
        seen = []
        turns = 0
        stream = stub.Subscribe(
            pb.SubscribeRequest(table_id=t.table_id, seat_token=token), timeout=60
        )
        for r in stream:
            seen.append(r.event)
            if r.event.WhichOneof("kind") == "prompt":
                if r.event.prompt.kind == pb.PROMPT_KIND_OWN_TURN:
                    turns += 1
                    if turns == 3:  # a prompt pending when the replica dies
                        break
                answer(stub, t.table_id, token, r.event)
        stream.cancel()
        ch.close()
        a.proc.kill()
        a.proc.wait()
        last = seen[-1].sequence
        b = gateway(stack, db, "replica-b")
        ch = grpc.insecure_channel(b.address)
        stub = gateway_pb2_grpc.GatewayServiceStub(ch)
        time.sleep(0.8)  # the lease expires
        log_at_death = list(read_log(db, t.table_id))
        view = stub.GetTableState(
            pb.GetTableStateRequest(table_id=t.table_id, seat_token=token), timeout=10
        ).table
        assert view.prompt.kind == pb.PROMPT_KIND_OWN_TURN  # the decision it owed survives
        answer(stub, t.table_id, token, seen[-1])  # decided on the prompt seen before the crash
        got, finished = [], False
        for r in stub.Subscribe(
            pb.SubscribeRequest(table_id=t.table_id, seat_token=token, after_sequence=last),
            timeout=120,
        ):
            got.append(r.event)
            kind = r.event.WhichOneof("kind")
            if kind == "prompt":
                answer(stub, t.table_id, token, r.event)
            if kind == "table_finished":
                finished = True
                break
        assert finished
        assert got[0].sequence == last + 1 or all(e.sequence > last for e in got)
        assert [e.sequence for e in got] == sorted({e.sequence for e in got})
        log = read_log(db, t.table_id)
        assert [e.seq for e in log] == list(range(1, len(log) + 1))
        assert log[: len(log_at_death)] == log_at_death, "the taken-over log was rewritten"
        header = table_header(t.table_id, log)
        hands = [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]
        assert len(hands) == 2
        for hid in hands:
            verdict = verify_hand(export_hand(header, log, hid))
            assert verdict.ok, verdict.problems
        ch.close()
    finally:
        a.stop()
        if b is not None:
            b.stop()
