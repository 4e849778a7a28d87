"""What a failed write of a table's step leaves (StepWriter.step): never an answer that says
done, never another owner's records removed, never an outage remembered as a refusal."""

from __future__ import annotations

import time

import pytest

from infra.store.base import StoreUnavailable
from infra.store.memory import MemoryStore
from services.gateway.adapters.inprocess import InProcessScoring
from services.gateway.domain.session import Ports, Seat
from services.gateway.tables.log import read_table_log
from services.gateway.tables.records import CREATES, REPORTED, TABLES
from shared.errors import Unavailable
from tests.support.probes import wait_for
from tests.support.sessions import inprocess_ports, seats
from tests.support.stacks import table_manager, table_spec

SLOW = {"discard_ms": 600_000, "claim_ms": 600_000}


def fail_next_appends(monkeypatch, store, times: int) -> list[int]:
    """The store's next ``times`` append_many calls fail as an unreachable store does."""
    real = store.append_many
    calls = []

    def flaky(*args, **kw):
        calls.append(1)
        if len(calls) <= times:
            raise StoreUnavailable("connection lost")
        return real(*args, **kw)

    monkeypatch.setattr(store, "append_many", flaky)
    return calls


def test_a_join_whose_step_could_not_be_written_is_not_answered_as_done(monkeypatch):
    """The JoinSeat that fills the last seat starts the hand in the same step, and the hand's
    first wall call writes the step's events first. When the store is unreachable there, the
    engine takes it for a failed service call, but the JoinSeat is refused UNAVAILABLE, not
    answered with a seat the log does not give; a retry then takes the seat."""
    ports = inprocess_ports()
    manager = table_manager(MemoryStore(), ports, seed=2, **SLOW)
    try:
        spec = table_spec(
            [Seat(), Seat("b1", bot=True), Seat("b2", bot=True), Seat("b3", bot=True)]
        )
        t, _ = manager.create_table(spec)
        fail_next_appends(monkeypatch, manager.store, 1)
        with pytest.raises(Unavailable) as refused:
            manager.join(t, "p0", "P0", 0, False, request_id="j1")
        assert refused.value.reason == "STORE_UNAVAILABLE"
        assert [e.kind for e in read_table_log(manager.store, t)] == ["table_started"]
        seat, token, _ = manager.join(t, "p0", "P0", 0, False, request_id="j1")
        assert seat == 0 and token
        kinds = [e.kind for e in read_table_log(manager.store, t)]
        assert kinds[:3] == ["table_started", "seat_changed", "hand_started"]
    finally:
        manager.close()


def test_a_paused_first_replica_leaves_the_retried_table_its_records(backend, monkeypatch):
    """Replica A keeps a CreateTable's request id and takes the table's lease, then pauses
    past the lease before logging TableStarted; the client's retry on B starts the table. A's
    write when it resumes is refused (fenced): it must not delete the request id, seats and
    reporting flag, which are B's table's now."""
    ports = inprocess_ports()
    first = table_manager(backend.open(), ports, seed=6, replica_id="gw-a", lease_ms=300)
    second = table_manager(backend.open(), ports, seed=6, replica_id="gw-b", lease_ms=300)
    spec = table_spec(request_id="create-2", report_hands=True)
    started: dict = {}
    real_start = first.creation._start
    try:

        def paused_start(table_id, *args, **kw):
            first.stop.set()  # paused: no renewal, the lease runs out
            first.leases.thread.join()
            time.sleep(0.4)
            started["b"] = second.create_table(table_spec(request_id="create-2", report_hands=True))
            return real_start(table_id, *args, **kw)

        monkeypatch.setattr(first.creation, "_start", paused_start)
        with pytest.raises(Unavailable) as refused:
            first.create_table(spec)
        assert refused.value.reason == "NOT_OWNER"
        t, _ = started["b"]
        store = second.store
        assert store.get(CREATES, "create-2") is not None
        assert store.get(TABLES, t) is not None
        assert store.get(REPORTED, t).value == b"1"
        wait_for(
            lambda: any(e.kind == "table_finished" for e in read_table_log(store, t)),
            60,
            "B to play the table",
            every=0.01,
        )
        assert [e.kind for e in read_table_log(store, t)].count("table_started") == 1
    finally:
        first.close()
        second.close()


class FlakyScoring(InProcessScoring):
    """Scoring whose escape settlement is unavailable while ``down``."""

    down = False

    def settle_escape(self, *args, **kw):
        if self.down:
            raise Unavailable("scoring is restarting", reason="SERVICE_UNAVAILABLE")
        return super().settle_escape(*args, **kw)


def test_a_leave_refused_for_an_outage_is_evaluated_again(backend):
    """A Leave mid-hand needs scoring (逃跑 settlement). Refused UNAVAILABLE while scoring is
    down, it is not remembered as a refusal: the retry with the same request id, once scoring
    is back, leaves and pays, and a repeat of it is answered the same."""
    base = inprocess_ports()
    scoring = FlakyScoring()
    ports = Ports(base.wall, base.rules, scoring)
    manager = table_manager(backend.open(), ports, seed=4, **SLOW)
    try:
        t, tokens = manager.create_table(table_spec(seats(1, "p"), first_dealer=0))
        wait_for(lambda: manager.view(t, tokens[0], 0).get("prompt"), 20, "the prompt", every=0.01)
        scoring.down = True
        with pytest.raises(Unavailable):
            manager.leave(t, tokens[0], "L1")
        scoring.down = False
        penalty = manager.leave(t, tokens[0], "L1")
        assert penalty > 0
        assert manager.leave(t, tokens[0], "L1") == penalty
    finally:
        manager.close()
