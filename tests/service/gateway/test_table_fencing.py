"""A table cannot split between replicas: ownership is the store's lease with an epoch, every
write of a table (event, request id, outbox row) is fenced by it in the same transaction, and
expiry is the store's clock. A replica paused past its lease (here: its renewals stopped, as a
SIGSTOP would) finds every later write refused by the store, and the log holds no event of it
after the takeover. A replica that stops hands its tables over at once; one that dies right
after creating a table leaves it to the others. On every backend."""

from __future__ import annotations

import dataclasses
import time

import pytest

from infra.store.base import StoreUnavailable
from services.gateway.bots import RandomBot, engine_policy, make_bot
from services.gateway.domain.ports import WallFenced
from services.gateway.runtime import ThreadScheduler
from services.gateway.tables import (
    LEASE_PREFIX,
    GatewaySettings,
    TableManager,
    owner_of,
    read_table_log,
)
from services.gateway.tables.records import REQUESTS
from shared.errors import Unavailable
from shared.table import Discard, Pass
from tests.support.sessions import inprocess_ports, seats
from tests.support.stacks import SEAT_SECRET, table_manager, table_spec

SLOW = {"discard_ms": 600_000, "claim_ms": 600_000}  # the player's timers never run out here


def until(cond, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def prompted(manager, t, token):
    return lambda: manager.view(t, token, 0).get("prompt") is not None


def test_a_paused_owner_can_no_longer_write_once_another_replica_took_over(backend):
    ports = inprocess_ports()
    first = table_manager(backend.open(), ports, seed=3, replica_id="gw-a", lease_ms=300, **SLOW)
    second = None
    try:
        t, tokens = first.create_table(table_spec(seats(1, "p"), first_dealer=0))
        token = tokens[0]
        until(prompted(first, t, token), "seat 0's prompt")
        # Paused: the first replica stops renewing (its memory says it still owns the table).
        first.stop.set()
        first.leases.thread.join()
        held = first.tables[t]
        head = held.head
        view = first.view(t, token, 0)
        second = table_manager(
            backend.open(), ports, seed=3, replica_id="gw-b", lease_ms=300, **SLOW
        )
        until(lambda: t in second.tables, "the second replica to take the table over")
        assert owner_of(second.store, t) == "gw-b"
        epoch = second.store.get_lease(LEASE_PREFIX + t).epoch
        assert epoch >= 2, "a takeover raises the epoch"
        # The paused replica wakes up and acts on what it held: the store refuses the write.
        tile = view["prompt"].options.discards[0]
        with pytest.raises(Unavailable) as refused:
            first.act(t, token, 0, "late-1", view["last_sequence"], Discard(tile))
        assert refused.value.reason == "NOT_OWNER"
        assert t not in first.tables and not held.owned
        log = read_table_log(second.store, t)
        assert [e.seq for e in log] == list(range(1, len(log) + 1))
        assert len(log) >= head
        assert not any(e.kind == "action" and e.seq > head and e.event.seat == 0 for e in log), (
            "an event of the stale owner reached the log"
        )
        # The new owner serves the same seat with the same token.
        assert second.view(t, token, 0)["prompt"] is not None
    finally:
        first.close()
        if second is not None:
            second.close()


class NeverClaims(RandomBot):
    """A random bot that lets every discard go: a discard is always followed by a draw."""

    def claim(self, view, options, tile):
        return Pass()


class RefusingWall:
    """The in-process wall, which refuses every draw as fenced once ``refuse`` is set (as the
    wall does once a newer owner of the table has called it: services/wall/domain/record.py)."""

    def __init__(self, wall) -> None:
        self.wall, self.refuse, self.refused = wall, False, 0

    def __getattr__(self, name):
        return getattr(self.wall, name)

    def _draw(self, fn, *args, **kw):
        if self.refuse:
            self.refused += 1
            raise WallFenced("owner epoch 1 is older than 2: another replica owns the table")
        return fn(*args, **kw)

    def draw(self, *args, **kw):
        return self._draw(self.wall.draw, *args, **kw)

    def draw_replacement(self, *args, **kw):
        return self._draw(self.wall.draw_replacement, *args, **kw)


def test_a_wall_call_refused_as_fenced_drops_the_table_and_writes_nothing(backend):
    """A step whose draw the wall refuses for a stale epoch is this replica's news that it
    lost the table: nothing of the step is written, the table leaves memory, and its caller
    (if the refusal came within its call) is answered NOT_OWNER."""
    base = inprocess_ports()
    wall = RefusingWall(base.wall)
    settings = GatewaySettings(secret=SEAT_SECRET, replica_id="gw-a", **SLOW)
    manager = TableManager(
        backend.open(),
        dataclasses.replace(base, wall=wall),
        settings,
        policy=engine_policy(NeverClaims(3)),
    )
    try:
        t, tokens = manager.create_table(table_spec(seats(1, "p"), first_dealer=0))
        until(prompted(manager, t, tokens[0]), "seat 0's prompt")
        held = manager.tables[t]
        view = manager.view(t, tokens[0], 0)
        logged = read_table_log(manager.store, t)
        wall.refuse = True
        try:  # the bots let it go: the next seat draws, within this call or just after
            manager.act(t, tokens[0], 0, "d-1", view["last_sequence"], Discard(
                view["prompt"].options.discards[0]
            ))  # fmt: skip
        except Unavailable as exc:
            assert exc.reason == "NOT_OWNER"
        until(lambda: t not in manager.tables, "the table to leave memory")
        assert wall.refused == 1 and not held.owned
        log = read_table_log(manager.store, t)
        assert log[: len(logged)] == logged
        assert not [e for e in log[len(logged) :] if e.kind == "tile_drawn"]
    finally:
        manager.close()


def test_a_slow_takeover_never_delays_the_replicas_own_renewals(backend, monkeypatch):
    """Adopting an orphaned table (its log read, its hand replayed) may take long; the
    replica's own leases are renewed meanwhile, so a third replica, watching for expired
    leases, never gets its tables."""
    ports = inprocess_ports()

    def replica(name: str) -> TableManager:
        return table_manager(backend.open(), ports, seed=3, replica_id=name, lease_ms=300, **SLOW)

    own, gone, other = replica("gw-a"), replica("gw-b"), replica("gw-c")
    try:
        mine, _ = own.create_table(table_spec(seats(1, "p"), first_dealer=0))
        orphan, _ = gone.create_table(table_spec(seats(1, "q"), first_dealer=0))
        slow: list[str] = []
        recover, recover_other = own.recovery.recover, other.recovery.recover

        def slow_recover(table_id):
            if table_id == orphan:
                slow.append(table_id)
                time.sleep(1.5)  # five leases
            return recover(table_id)

        monkeypatch.setattr(own.recovery, "recover", slow_recover)  # gw-a adopts the orphan, slowly
        monkeypatch.setattr(
            other.recovery, "recover", lambda t: None if t == orphan else recover_other(t)
        )
        gone.stop.set()  # gw-b dies: its table is orphaned once its lease runs out
        gone.leases.thread.join()
        gone.keeper.thread.join()
        epoch = own.store.get_lease(LEASE_PREFIX + mine).epoch
        until(lambda: slow, "gw-a to start adopting the orphan")
        until(lambda: orphan in own.tables, "the slow adoption to finish")
        lease = own.store.get_lease(LEASE_PREFIX + mine)
        assert (lease.owner, lease.epoch) == ("gw-a", epoch) and mine in own.tables
        assert mine not in other.tables
    finally:
        for m in (own, gone, other):
            m.close()


def test_a_stopping_replica_hands_its_tables_over_at_once(backend):
    ports = inprocess_ports()
    # A long lease: waiting for it to expire would take 30 s.
    first = table_manager(backend.open(), ports, seed=4, replica_id="gw-a", lease_ms=30_000, **SLOW)
    second = table_manager(
        backend.open(), ports, seed=4, replica_id="gw-b", lease_ms=30_000, **SLOW
    )
    try:
        t, tokens = first.create_table(table_spec(seats(1, "p"), first_dealer=0))
        until(prompted(first, t, tokens[0]), "seat 0's prompt")
        assert owner_of(first.store, t) == "gw-a"
        start = time.monotonic()
        first.close()  # SIGTERM: drained, the leases released
        until(lambda: t in second.tables, "the second replica to take the table over", 5.0)
        moved = time.monotonic() - start
        assert moved < 3.0, f"the table took {moved:.1f} s to move"
        assert owner_of(second.store, t) == "gw-b"
        assert second.view(t, tokens[0], 0)["prompt"] is not None
    finally:
        first.close()
        second.close()


def test_a_finished_table_releases_its_lease(backend):
    manager = table_manager(backend.open(), inprocess_ports(), seed=5, replica_id="gw-a")
    try:
        t, _ = manager.create_table(table_spec())
        until(
            lambda: any(e.kind == "table_finished" for e in read_table_log(manager.store, t)),
            "the bot table to finish",
            60.0,
        )
        until(lambda: owner_of(manager.store, t) == "", "the lease to be released")
        lease = manager.store.get_lease(LEASE_PREFIX + t)
        assert lease is not None and not lease.held
        spectator = manager.join(t, "", "", None, True)[1]
        assert manager.view(t, spectator, None)["phase"] == "finished"
    finally:
        manager.close()


class StoppedScheduler(ThreadScheduler):
    """A replica frozen right after it answered: nothing it schedules ever runs."""

    def call_later(self, delay_ms: int, fn):
        return super().call_later(3_600_000, fn)


def test_a_replica_that_dies_right_after_creating_a_table_leaves_it_to_another(backend):
    """CreateTable answered means the table is in the log: an owner that dies before starting
    the first hand (the start is scheduled, so CreateTable answers at once) leaves a table the
    other replicas take over and play, not a table id that leads nowhere."""
    ports = inprocess_ports()
    settings = GatewaySettings(secret=SEAT_SECRET, replica_id="gw-a", lease_ms=300)
    first = TableManager(
        backend.open(),
        ports,
        settings,
        policy=engine_policy(make_bot("random", seed=6)),
        scheduler=StoppedScheduler(1),
    )
    second = None
    try:
        t, _ = first.create_table(table_spec())
        first.stop.set()  # and its lease is renewed no more
        first.leases.thread.join()
        assert [e.kind for e in read_table_log(first.store, t)] == ["table_started"]
        second = table_manager(backend.open(), ports, seed=6, replica_id="gw-b", lease_ms=300)
        until(
            lambda: any(e.kind == "table_finished" for e in read_table_log(second.store, t)),
            "the other replica to play the table",
            60.0,
        )
        log = read_table_log(second.store, t)
        assert [e.seq for e in log] == list(range(1, len(log) + 1))
        assert [e.kind for e in log].count("table_started") == 1
    finally:
        first.close()
        if second is not None:
            second.close()


def test_a_retry_starts_a_table_whose_replica_died_before_logging_it(backend, monkeypatch):
    """The replica starting a table dies after keeping the request id (and taking the table's
    lease), before TableStarted is in the log. A retry of the CreateTable elsewhere is told the
    table is starting while that lease runs, then starts it itself from the retried request
    (the same request: its fingerprint matches), and the table plays."""
    ports = inprocess_ports()
    first = table_manager(backend.open(), ports, seed=6, replica_id="gw-a", lease_ms=300)
    second = None
    spec = table_spec(request_id="create-1")
    try:

        def dies(*args, **kw):
            raise RuntimeError("killed before TableStarted")

        monkeypatch.setattr(first.creation, "_start", dies)
        with pytest.raises(RuntimeError):
            first.create_table(spec)
        first.stop.set()  # dead: its lease is renewed no more
        first.leases.thread.join()
        monkeypatch.undo()
        second = table_manager(backend.open(), ports, seed=6, replica_id="gw-b", lease_ms=300)
        with pytest.raises(Unavailable) as starting:
            second.create_table(table_spec(request_id="create-1"))
        assert starting.value.reason == "TABLE_STARTING"
        time.sleep(0.4)  # the dead replica's lease expires
        t, tokens = second.create_table(table_spec(request_id="create-1"))
        assert second.create_table(table_spec(request_id="create-1")) == (t, tokens)
        until(
            lambda: any(e.kind == "table_finished" for e in read_table_log(second.store, t)),
            "the table to be played",
            60.0,
        )
        log = read_table_log(second.store, t)
        assert [e.kind for e in log].count("table_started") == 1
        assert [e.seq for e in log] == list(range(1, len(log) + 1))
    finally:
        first.close()
        if second is not None:
            second.close()


def test_a_decision_logged_without_its_request_record_is_not_applied_twice(backend):
    """A decision's events and its request record are one write now; a log written by an
    older release can still hold a decision whose owner died before writing the record (then
    a separate write). The replica taking over finds the request id in the decision's event:
    the client's retry is answered as applied (replayed), not evaluated again and refused as
    stale while the log holds the decision it sent."""
    ports = inprocess_ports()
    first = table_manager(backend.open(), ports, seed=7, replica_id="gw-a", lease_ms=300, **SLOW)
    second = None
    try:
        t, tokens = first.create_table(table_spec(seats(1, "p"), first_dealer=0))
        token = tokens[0]
        until(prompted(first, t, token), "seat 0's prompt")
        view = first.view(t, token, 0)
        tile = view["prompt"].options.discards[0]
        first.act(t, token, 0, "rid-1", view["last_sequence"], Discard(tile))
        first.stop.set()  # the owner dies: it renews nothing more
        first.leases.thread.join()
        key = f"{t}/0/rid-1"
        assert first.store.get(REQUESTS, key) is not None  # written with the decision
        first.store.delete(REQUESTS, key)  # as the older release's owner left it
        applied = [
            e.seq
            for e in read_table_log(first.store, t)
            if e.kind == "action" and e.event.request_id == "rid-1"
        ]
        assert len(applied) == 1
        second = table_manager(
            backend.open(), ports, seed=7, replica_id="gw-b", lease_ms=300, **SLOW
        )
        until(lambda: t in second.tables, "the second replica to take the table over")
        again = second.act(t, token, 0, "rid-1", view["last_sequence"], Discard(tile))
        assert again == (applied[0], True)
        log = read_table_log(second.store, t)
        assert [e.event.request_id for e in log if e.kind == "action"].count("rid-1") == 1
    finally:
        first.close()
        if second is not None:
            second.close()


def test_a_step_the_store_cannot_take_never_happened(backend, monkeypatch):
    """The store unreachable as a decision's step is written (all of it or none, so none):
    the Act is UNAVAILABLE with nothing in the log and no request record, no stream saw
    anything, and the table is rebuilt from its log; the client's retry with the same request
    id applies the decision once, and a repeat of it is answered as applied."""
    ports = inprocess_ports()
    manager = table_manager(backend.open(), ports, seed=7, replica_id="gw-a", **SLOW)
    try:
        t, tokens = manager.create_table(table_spec(seats(1, "p"), first_dealer=0))
        token = tokens[0]
        until(prompted(manager, t, token), "seat 0's prompt")
        view = manager.view(t, token, 0)
        held = manager.tables[t]
        before = read_table_log(manager.store, t)
        tile = view["prompt"].options.discards[0]

        def unreachable(*args, **kw):
            raise StoreUnavailable("connection lost")

        monkeypatch.setattr(manager.store, "append_many", unreachable)
        with pytest.raises(Unavailable) as refused:
            manager.act(t, token, 0, "rid-1", view["last_sequence"], Discard(tile))
        assert refused.value.reason == "STORE_UNAVAILABLE"
        monkeypatch.undo()
        assert read_table_log(manager.store, t) == before
        assert manager.store.get(REQUESTS, f"{t}/0/rid-1") is None
        assert held.head == before[-1].seq  # the streams were shown nothing of it
        until(lambda: manager.tables.get(t) not in (None, held), "the table rebuilt")
        again = manager.view(t, token, 0)
        assert again["last_sequence"] == view["last_sequence"]
        assert again["prompt"].options == view["prompt"].options
        seq, replayed = manager.act(t, token, 0, "rid-1", view["last_sequence"], Discard(tile))
        assert not replayed
        assert manager.act(t, token, 0, "rid-1", view["last_sequence"], Discard(tile)) == (
            seq,
            True,
        )
        log = read_table_log(manager.store, t)
        assert [e.event.request_id for e in log if e.kind == "action"].count("rid-1") == 1
        assert [e.seq for e in log] == list(range(1, len(log) + 1))
        assert manager.store.get(REQUESTS, f"{t}/0/rid-1") is not None
    finally:
        manager.close()


def test_the_last_player_leaving_ends_the_table_and_gets_its_answer(backend):
    """Leave of the only person at a table of bots, between hands, ends it (人走光) and
    releases its lease in the same call: the answer is the Leave's, not NOT_OWNER from writing
    its request record, and a retry with the same request id is answered the same."""
    manager = table_manager(
        backend.open(),
        inprocess_ports(),
        seed=11,
        replica_id="gw-a",
        discard_ms=20,  # the person's timer decides for them: the hand ends by itself
        claim_ms=20,
        auto_play_delay_ms=0,
        between_hands_ms=600_000,
    )
    try:
        t, tokens = manager.create_table(table_spec(seats(humans=1), max_hands=3))
        until(lambda: manager.view(t, tokens[0], 0)["phase"] == "between_hands", "a hand's end")
        assert manager.leave(t, tokens[0], "leave-1") == 0
        assert manager.view(t, tokens[0], 0)["phase"] == "finished"
        assert owner_of(manager.store, t) == ""  # the lease went with the table's end
        assert manager.leave(t, tokens[0], "leave-1") == 0
    finally:
        manager.close()
