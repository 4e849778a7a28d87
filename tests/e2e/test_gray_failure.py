"""Gray failure: the owner of a table stops answering without dying (SIGSTOP: a long GC pause,
a frozen VM, a node cut off with its connections half-open), or drains (SIGTERM). A player who
talks only to replica B, its stream relayed by B from the owner A, plays on within the lease:
B's forwarded act gives up on the silent owner after a try shorter than the lease, takes the
table over once the lease has expired and answers it itself; B's relayed stream notices the
lease moved and goes on from the new owner (itself) after the last event it sent. The paused
owner, once it wakes, steps down without writing; every hand of the log verifies. Both server
models of B (asyncio, threads) are tried."""

from __future__ import annotations

import signal
import time

import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.store import open_store
from services.gateway.domain.replay import export_hand, table_header
from services.gateway.tables import leases
from services.gateway.verify import verify_hand
from tests.e2e.players import answer
from tests.e2e.test_bot_hands import read_log
from tests.e2e.test_failover import gateway
from tests.support.events import json_log
from tests.support.readers import Reader
from tests.support.tables import request_table
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

LEASE_MS = 2000
PAUSE_S = 10.0  # far past the lease: whatever B serves meanwhile, it served without A


def _play_out(reader: Reader, stub, table_id: str, token: str, timeout: float = 60) -> None:
    """Answer every prompt the stream brings until the table finishes."""
    deadline = time.monotonic() + timeout
    while True:
        _, e = reader.next_event(deadline - time.monotonic())
        kind = e.WhichOneof("kind")
        if kind == "table_finished":
            return
        if kind == "prompt":
            answer(stub, table_id, token, e, timeout=10)


def _verified(db, table_id: str) -> None:
    log = read_log(db, table_id)
    assert [e.seq for e in log] == list(range(1, len(log) + 1)), "a gap or a repeat"
    header = table_header(table_id, log)
    for hid in [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]:
        verdict = verify_hand(export_hand(header, log, hid))
        assert verdict.ok, verdict.problems


def _owner(db, table_id: str) -> str:
    store = open_store(f"sqlite:///{db}")
    try:
        return leases.owner_of(store, table_id)
    finally:
        store.close()


def _table_on(a, db_name: str):
    with as_player(a.address) as ch:
        return request_table(  # the person deals: the table waits on their first discard
            gateway_pb2_grpc.GatewayServiceStub(ch),
            [pb.SeatAssignment(player_id="gray"), *[pb.SeatAssignment(bot=True)] * 3],
            max_hands=1,
            first_dealer=common_pb2.SEAT_0,
        )


@pytest.mark.parametrize("model", ["asyncio", "threads"])
def test_a_paused_owner_is_replaced_within_its_lease(stack, model):
    db = stack["tmp"] / f"gray-stop-{model}.db"
    lease = ["--lease-ms", str(LEASE_MS), "--seat-calls-per-second", "0"]
    a = gateway(stack, db, f"stop-a-{model}", *lease)
    b = gateway(stack, db, f"stop-b-{model}", *lease, "--server-model", model)
    channel = as_player(b.address)
    on_b = gateway_pb2_grpc.GatewayServiceStub(channel)
    try:
        t = _table_on(a, db)
        token = t.seat_tokens[0]
        request = pb.SubscribeRequest(table_id=t.table_id, seat_token=token)
        reader = Reader(on_b.Subscribe(request, timeout=120))  # relayed by B from A
        reader.start()
        prompt = reader.next_prompt()
        a.proc.send_signal(signal.SIGSTOP)
        paused = time.monotonic()
        assert _owner(db, t.table_id) == f"stop-a-{model}", "A lost the table before its pause"
        try:
            acted = answer(on_b, t.table_id, token, prompt, timeout=10)  # A answers nothing
            accepted = time.monotonic() - paused
            # the discard's event (and the bots' play after it) reach the stream B relays
            arrived = reader.until(acted.sequence + 1, PAUSE_S) - paused
            assert a.proc.poll() is None
            still_paused = time.monotonic() - paused < PAUSE_S
        finally:
            time.sleep(max(0.0, PAUSE_S - (time.monotonic() - paused)))
            a.proc.send_signal(signal.SIGCONT)
        print(f"\n{model}: act accepted {accepted:.2f} s, next event {arrived:.2f} s after SIGSTOP")
        assert still_paused, "B served the table only once A woke up"
        assert accepted < PAUSE_S and arrived < PAUSE_S
        # A, awake, steps down: asked about the table, it answers as the new owner does
        with as_player(a.address) as ch:
            look = pb.GetTableStateRequest(table_id=t.table_id, seat_token=token)
            on_a = gateway_pb2_grpc.GatewayServiceStub(ch)
            assert on_a.GetTableState(look, timeout=10).table == on_b.GetTableState(look).table
        _play_out(reader, on_b, t.table_id, token)
        _verified(db, t.table_id)  # a write of the stale owner would break the replay
    finally:
        channel.close()
        if a.proc.poll() is None:
            a.proc.send_signal(signal.SIGCONT)
        a.stop()
        b.stop()


def test_a_draining_owner_hands_its_tables_over_at_once(stack):
    """SIGTERM: the owner releases its leases as it drains, so B serves the table within a
    second though the lease is ten: the act sent to B while A drains is accepted, not
    refused UNAVAILABLE for the client to retry."""
    db = stack["tmp"] / "gray-term.db"
    lease = ["--lease-ms", "10000", "--seat-calls-per-second", "0"]
    a = gateway(stack, db, "term-a", *lease)
    b = gateway(stack, db, "term-b", *lease)
    channel = as_player(b.address)
    on_b = gateway_pb2_grpc.GatewayServiceStub(channel)
    try:
        t = _table_on(a, db)
        token = t.seat_tokens[0]
        reader = Reader(
            on_b.Subscribe(pb.SubscribeRequest(table_id=t.table_id, seat_token=token), timeout=60)
        )
        reader.start()
        prompt = reader.next_prompt()
        a.proc.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        acted = answer(on_b, t.table_id, token, prompt, timeout=10)
        accepted = time.monotonic() - stopped
        arrived = reader.until(acted.sequence + 1, 10) - stopped
        print(f"\nSIGTERM: act accepted {accepted:.2f} s, next event {arrived:.2f} s after")
        assert accepted < 5 and arrived < 5  # well inside the 10 s lease
        assert a.proc.wait(20) == 0
        _play_out(reader, on_b, t.table_id, token)
        _verified(db, t.table_id)
    finally:
        channel.close()
        a.stop()
        b.stop()
