"""A gateway replica dies mid-hand (SIGKILL), or is paused past its lease (SIGSTOP, then
SIGCONT); another replica on the same store takes the table over when the lease expires,
rebuilt from the event log. The player reconnects to it with the same seat token and its last
sequence number, sees exactly the events it missed and plays the table to its end; every hand
of the log (written by both replicas) verifies, and a paused former owner writes nothing."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import time

import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.store import open_store
from services.gateway.domain.replay import export_hand, table_header
from services.gateway.tables.leases import LEASE_PREFIX
from services.gateway.verify import verify_hand
from tests.e2e.players import answer
from tests.e2e.test_bot_hands import read_log
from tests.support import probes
from tests.support.events import json_log
from tests.support.stacks import backend_flags, service_process
from tests.support.tables import request_table
from tests.support.tls import as_player

pytestmark = pytest.mark.integration


def gateway(stack, db, name, *extra: str):
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
        *extra,
    ]
    return (
        service_process(
            "gateway", stack["tmp"], store_url=f"sqlite:///{db}", extra=flags, log_name=name
        )
        .start()
        .wait_ready()
    )


def logged(path, event: str, table_id: str) -> bool:
    """Whether the process's log at ``path`` has a line of ``event`` for table ``table_id``."""
    for line in path.read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if entry.get("event") == event and entry.get("table") == table_id:
                return True
    return False


def lease_lost_by(db, table_id: str, owner: str) -> bool:
    """Whether ``owner`` no longer holds the table's lease in the gateway's SQLite store: it
    expired, was released, or another replica took it over. (Waiting for "expired" alone would
    race with that takeover: a replica adopting orphaned tables may take the lease before a
    probe reads it expired, and the lease is then held again, by the new owner.)"""
    store = open_store(f"sqlite:///{db}")
    try:
        lease = store.get_lease(LEASE_PREFIX + table_id)
    finally:
        store.close()
    return lease is not None and (not lease.held or lease.owner != owner)


def play_until_own_turn(stub, player: str, max_hands: int, turns: int):
    """A table of the player ``player`` and three bots on ``stub``'s replica, played (the player
    answering every prompt) until its ``turns``-th own turn is prompted, left unanswered:
    (the table, the player's token, the events it saw)."""
    t = request_table(
        stub,
        [pb.SeatAssignment(player_id=player), *[pb.SeatAssignment(bot=True)] * 3],
        max_hands=max_hands,
        first_dealer=common_pb2.SEAT_1,
    )
    token = t.seat_tokens[0]
    seen = []
    own = 0
    stream = stub.Subscribe(pb.SubscribeRequest(table_id=t.table_id, seat_token=token), timeout=60)
    for r in stream:
        seen.append(r.event)
        if r.event.WhichOneof("kind") == "prompt":
            if r.event.prompt.kind == pb.PROMPT_KIND_OWN_TURN:
                own += 1
                if own == turns:
                    break
            answer(stub, t.table_id, token, r.event)
    stream.cancel()
    return t, token, seen


def test_another_replica_takes_the_table_over_and_the_player_plays_on(stack):
    db = stack["tmp"] / "failover.db"
    a = gateway(stack, db, "replica-a")
    b = None
    try:
        ch = as_player(a.address)
        stub = gateway_pb2_grpc.GatewayServiceStub(ch)
        # a prompt pending when the replica dies
        t, token, seen = play_until_own_turn(stub, "fo-0", max_hands=2, turns=3)
        ch.close()
        a.proc.kill()
        a.proc.wait()
        last = seen[-1].sequence
        log_at_death = list(read_log(db, t.table_id))
        b = gateway(stack, db, "replica-b")
        ch = as_player(b.address)
        stub = gateway_pb2_grpc.GatewayServiceStub(ch)
        look = pb.GetTableStateRequest(table_id=t.table_id, seat_token=token)
        # NOT_OWNER until the dead owner's lease expires; then b takes the table over
        view = probes.wait_for(
            lambda: stub.GetTableState(look, timeout=10).table, 30, "replica-b to serve it"
        )
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


def pause_between_writes(proc, db) -> None:
    """SIGSTOP ``proc`` while it holds no write lock on the SQLite file ``db``: a process paused
    inside a write transaction keeps the file locked for every other process (SQLite's own
    property, not what this test is about), so a pause that lands in one is undone and tried
    again a moment later."""
    for _ in range(50):
        proc.send_signal(signal.SIGSTOP)
        conn = sqlite3.connect(db, timeout=0.2)
        try:
            conn.execute("BEGIN IMMEDIATE")  # takes the write lock, or waits 0.2 s for it
            conn.rollback()
            return
        except sqlite3.OperationalError:  # paused mid-write: let it finish
            proc.send_signal(signal.SIGCONT)
            time.sleep(0.05)
        finally:
            conn.close()
    raise AssertionError(f"{db} stayed write-locked at every pause")


def test_a_paused_owner_never_writes_after_the_takeover(stack):
    """The split seen before fencing: the owner SIGSTOPped for several leases mid-hand, another
    replica takes over, then SIGCONT. The paused owner's timers and bots wake up on a table it
    no longer owns; the store refuses its writes. The table finishes on the new owner, its log
    is numbered without a gap or a duplicate and every hand replay-verifies."""
    db = stack["tmp"] / "paused.db"
    a = gateway(stack, db, "replica-a")
    b = None
    try:
        ch = as_player(a.address)
        stub = gateway_pb2_grpc.GatewayServiceStub(ch)
        t, token, seen = play_until_own_turn(stub, "ps-0", max_hands=1, turns=2)
        # The answer reaches the owner, whose bots then play on... and the owner is paused.
        answer(stub, t.table_id, token, seen[-1])
        pause_between_writes(a.proc, db)
        b = gateway(stack, db, "replica-b")
        ch_b = as_player(b.address)
        stub_b = gateway_pb2_grpc.GatewayServiceStub(ch_b)
        # paused until its lease has expired (by the store's clock): b takes the table over
        probes.wait_for(
            lambda: lease_lost_by(db, t.table_id, "replica-a"), 30, "a's lease to expire"
        )
        got, finished, resumed = [], False, False
        last = seen[-1].sequence  # the player resumes from the last event it saw
        for r in stub_b.Subscribe(
            pb.SubscribeRequest(table_id=t.table_id, seat_token=token, after_sequence=last),
            timeout=120,
        ):
            got.append(r.event)
            kind = r.event.WhichOneof("kind")
            if kind == "prompt":
                if not resumed:
                    a.proc.send_signal(signal.SIGCONT)  # it wakes up mid-hand, on b's table
                    resumed = True
                answer(stub_b, t.table_id, token, r.event)
            if kind == "table_finished":
                finished = True
                break
        assert finished and resumed
        # The old owner, awake, has let the table go: whatever it tried was refused, and it
        # writes nothing more for it.
        probes.wait_for(
            lambda: logged(stack["tmp"] / "replica-a.log", "table_lost", t.table_id),
            30,
            "the old owner to let the table go",
        )
        log = read_log(db, t.table_id)
        assert [e.seq for e in log] == list(range(1, len(log) + 1))
        assert [e.sequence for e in got] == sorted({e.sequence for e in got})
        assert log[-1].kind == "table_finished"
        header = table_header(t.table_id, log)
        hands = [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]
        assert len(hands) == 1
        verdict = verify_hand(export_hand(header, log, hands[0]))
        assert verdict.ok, verdict.problems
        # The old owner holds the table no more: it serves the finished table from the log.
        view = stub.GetTableState(
            pb.GetTableStateRequest(table_id=t.table_id, seat_token=token), timeout=10
        ).table
        assert view.phase == pb.TABLE_PHASE_FINISHED and view.last_sequence == len(log)
        ch.close()
        ch_b.close()
    finally:
        with contextlib.suppress(ProcessLookupError):
            a.proc.send_signal(signal.SIGCONT)
        a.stop()
        if b is not None:
            b.stop()
