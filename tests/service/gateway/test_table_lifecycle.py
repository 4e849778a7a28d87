"""What a gateway replica holds over a table's life: a finished table leaves memory after
``finished_table_ttl_ms`` and is then served read-only from its log (no lease, nothing written);
request ids are kept for the current and the previous hand only, and none once the table has
finished; a replica that loses a table's lease to another ends its streams UNAVAILABLE
NOT_OWNER, naming the new owner, and stops counting the table as active."""

from __future__ import annotations

import queue
import threading
import time
import uuid

import pytest

from infra.store.memory import MemoryStore
from mahjong_client.player import same_prompt
from services.gateway import metrics
from services.gateway.convert.events import event_to_proto
from services.gateway.convert.views import view_to_proto
from services.gateway.domain.events.kinds import Prompt
from services.gateway.domain.events.views import project
from services.gateway.domain.session import FINISHED, Seat
from services.gateway.domain.tokens import sign_seat_token
from services.gateway.tables import (
    REQUESTS,
    TableManager,
    TableSpec,
    owner_of,
    read_table_log,
)
from services.gateway.tables.log import LOG_PREFIX
from shared.errors import DomainError, FailedPrecondition, Unavailable
from shared.table import Discard, Pass
from tests.support.sessions import inprocess_ports
from tests.support.stacks import SEAT_SECRET, table_manager, table_spec


def _manager(store, replica="gw-a", ports=None, on_event=None, **settings) -> TableManager:
    return table_manager(
        store,
        ports or inprocess_ports(),
        seed=5,
        replica_id=replica,
        on_event=on_event,
        **settings,
    )


SLOW = {"discard_ms": 60_000, "claim_ms": 60_000}  # humans' timers that never run out here


def _spec(humans: int = 0, max_hands: int = 1) -> TableSpec:
    seats = [Seat(player_id=f"p{i}", display_name=f"p{i}") for i in range(humans)]
    seats += [Seat(player_id=f"b{i}", bot=True) for i in range(humans, 4)]
    return table_spec(seats, max_hands=max_hands)


def _taken_over(manager: TableManager, table_id: str) -> bool:
    """Whether ``manager`` runs the table now (taken over from the log if its lease ran out;
    False while another replica's lease runs)."""
    try:
        return manager.table(table_id).owned
    except Unavailable as exc:
        assert exc.reason == "NOT_OWNER", exc
        return False


def _until(cond, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _finished(store, table_id: str) -> bool:
    return any(e.kind == "table_finished" for e in read_table_log(store, table_id))


def _spectator(manager, table_id: str) -> str:
    """A spectator's token of ``table_id``, from ``manager`` (JoinSeat as a spectator)."""
    return manager.join(table_id, "", "", None, True)[1]


# --- finished tables leave memory ----------------------------------------------------------


def test_finished_tables_leave_memory_and_are_then_served_read_only_from_the_log():
    store = MemoryStore()
    m = _manager(store, finished_table_ttl_ms=0)
    try:
        ids = [m.create_table(_spec())[0] for _ in range(6)]
        _until(lambda: all(_finished(store, t) for t in ids), "the tables to finish")
        _until(lambda: not m.tables, "the finished tables to leave memory")

        t = ids[0]
        log = read_table_log(store, t)
        end = log[-1].event
        assert log[-1].kind == "table_finished"
        # GetTableState: the final seats and chips, from the log.
        watcher = _spectator(m, t)
        view = m.view(t, watcher, None)
        assert view["phase"] == FINISHED
        assert tuple(s["chips"] for s in view["seats"]) == end.chips
        assert view["hands_played"] == end.hands_played == 1
        assert view["last_sequence"] == len(log)
        # Subscribe from the start: every event a spectator may see, then the stream ends.
        got = [ev.seq for ev, _ in m.subscribe(t, watcher, 0, lambda: True)]
        assert got and got[-1] == len(log) and got == sorted(got)
        assert [ev.kind for ev, _ in m.subscribe(t, watcher, len(log) - 1, lambda: True)] == [
            "table_finished"
        ]
        # Read-only: no lease taken, nothing written, nothing remembered for an Act.
        with pytest.raises(FailedPrecondition) as refused:
            m.act(t, sign_seat_token(SEAT_SECRET, t, 0), 0, "r1", len(log), Pass())
        assert refused.value.reason == "TABLE_FINISHED"
        assert m.leave(t, sign_seat_token(SEAT_SECRET, t, 1), "") == 0
        assert owner_of(store, t) == ""
        assert list(store.scan(REQUESTS, f"{t}/")) == []
        assert len(store.read_log(LOG_PREFIX + t)) == len(log)
        # ... and it leaves memory again.
        _until(lambda: not m.tables, "the reloaded table to leave memory again")
    finally:
        m.close()


def test_another_replica_serves_a_finished_table_without_taking_it():
    store = MemoryStore()
    first = _manager(store, "gw-a", finished_table_ttl_ms=60_000)
    second = _manager(store, "gw-b", finished_table_ttl_ms=60_000)
    try:
        t, _ = first.create_table(_spec())
        _until(lambda: _finished(store, t), "the table to finish")
        assert t in first.tables  # kept for the time-to-live
        view = second.view(t, _spectator(second, t), None)
        assert view["phase"] == FINISHED
        assert owner_of(store, t) == ""
        assert len(store.read_log(LOG_PREFIX + t)) == view["last_sequence"]
    finally:
        first.close()
        second.close()


# --- request ids -----------------------------------------------------------------------------


def _play_seat_zero(
    m: TableManager, store, table_id: str, until_hand: int = 0
) -> tuple[dict[int, int], int]:
    """Play seat 0 through Act (first discard offered, pass every claim) until the table
    finishes (or hand ``until_hand`` starts); returns the requests accepted per hand number and
    the most request records the store held for the table at any time."""
    token = sign_seat_token(SEAT_SECRET, table_id, 0)
    per_hand: dict[int, int] = {}
    most = 0
    deadline = time.monotonic() + 120
    while m.tables[table_id].session.phase != FINISHED:
        assert time.monotonic() < deadline, "the table did not finish"
        view = m.view(table_id, token, 0)
        prompt = view.get("prompt")
        if prompt is None:
            time.sleep(0.002)
            continue
        discards = prompt.options.discards
        action = Discard(discards[0]) if discards else Pass()
        try:
            m.act(table_id, token, 0, uuid.uuid4().hex, view["last_sequence"], action)
        except DomainError:
            continue  # the prompt moved on meanwhile (a claim window closed): refused
        n = view["hand"]["hand_number"]
        if n == until_hand:
            break
        per_hand[n] = per_hand.get(n, 0) + 1
        most = max(most, len(list(store.scan(REQUESTS, f"{table_id}/"))))
    return per_hand, most


def test_request_ids_are_kept_for_two_hands_and_dropped_when_the_table_finishes():
    store = MemoryStore()
    m = _manager(store, finished_table_ttl_ms=60_000, **SLOW)
    try:
        t, _ = m.create_table(_spec(humans=1, max_hands=5))
        per_hand, most = _play_seat_zero(m, store, t)
        assert len(per_hand) == 5
        two_hands = max(per_hand.get(n - 1, 0) + per_hand[n] for n in per_hand)
        # Requests refused after being sent (claim windows closing) are kept too: some slack.
        assert most <= two_hands + 4 < sum(per_hand.values()), (per_hand, most)
        table = m.tables[t]
        assert 0 < len(table.requests) <= two_hands + 4  # in memory until the table goes
        assert list(store.scan(REQUESTS, f"{t}/")) == []  # none in the store once finished
    finally:
        m.close()


def test_a_taken_over_table_forgets_request_ids_older_than_the_previous_hand():
    store = MemoryStore()
    ports = inprocess_ports()
    first = _manager(store, "gw-a", ports=ports, lease_ms=0, **SLOW)
    try:
        t, _ = first.create_table(_spec(humans=1, max_hands=5))
        _play_seat_zero(first, store, t, until_hand=3)
    finally:
        first.close()
    # Records left in the store from the first hand (as by a replica that died before pruning)
    # and from the last one: a replica taking the table over keeps the last and deletes the
    # first.
    starts = [e.seq for e in read_table_log(store, t) if e.kind == "hand_started"]
    assert len(starts) == 3
    store.put(REQUESTS, f"{t}/0/old", b'{"result": 5, "at": %d}' % starts[0])
    store.put(REQUESTS, f"{t}/0/new", b'{"result": 9, "at": %d}' % starts[-1])
    taken_over = metrics.OWNERSHIP.labels("taken_over")
    before = _gauge(taken_over)
    second = _manager(store, "gw-b", ports=ports, on_event=metrics.observe, **SLOW)
    try:
        kept = second.table(t).requests
        assert _gauge(taken_over) == before + 1  # mahjong_gateway_table_ownership_changes_total
        assert (0, "new") in kept and (0, "old") not in kept
        assert store.get(REQUESTS, f"{t}/0/old") is None
        assert all(rec.at >= starts[-2] for rec in kept.values())
    finally:
        second.close()


def test_a_prompt_taken_over_is_still_the_seats_prompt_to_its_client():
    """The new owner starts the seat's timer afresh, so the seat's view shows a later deadline
    than the Prompt event its client holds, and the timer runs out when the view says. The
    client still answers that prompt: before, it took the moved deadline for a newer prompt,
    waited for one that never came, and the table waited on it (a failover test's flake)."""
    store = MemoryStore()
    ports = inprocess_ports()
    first = _manager(store, "gw-a", ports, address="10.0.0.1:50054", lease_ms=0, **SLOW)
    second = None
    try:
        t, tokens = first.create_table(_spec(humans=1))
        _until(lambda: first.view(t, tokens[0], 0).get("prompt") is not None, "seat 0's prompt")
        logged = next(
            e
            for e in reversed(first.tables[t].window[1])
            if isinstance(e.event, Prompt) and e.event.seat == 0
        )
        held = event_to_proto(logged, project(logged.event, 0)).prompt
        time.sleep(0.05)  # the takeover comes later than the prompt
        second = _manager(store, "gw-b", ports, address="10.0.0.2:50054", **SLOW)
        view = view_to_proto(second.view(t, tokens[0], 0))
        assert view.prompt.deadline_unix_ms > held.deadline_unix_ms  # a fresh timer
        pending = second.tables[t].session.hand.pending[0]
        assert pending.deadline_ms == view.prompt.deadline_unix_ms  # the timer the view shows
        assert same_prompt(view, held)
    finally:
        first.close()
        if second is not None:
            second.close()


# --- losing the lease ------------------------------------------------------------------------


def _gauge(g) -> float:
    return g._value.get()


def test_a_replica_that_lost_the_lease_ends_its_streams_with_not_owner():
    store = MemoryStore()
    ports = inprocess_ports()
    # The first replica's lease lapses at once (as if the process were paused), the seat it
    # prompts first is a human that does not answer: nothing happens on the table meanwhile.
    first = _manager(
        store, "gw-a", ports, metrics.observe, address="10.0.0.1:50054", lease_ms=0, **SLOW
    )
    active_before = _gauge(metrics.ACTIVE_TABLES)
    lost_before = _gauge(metrics.OWNERSHIP.labels("lost"))
    second = None
    try:
        t, tokens = first.create_table(_spec(humans=1))
        token = tokens[0]
        _until(lambda: first.view(t, token, 0).get("prompt") is not None, "seat 0's prompt")
        assert _gauge(metrics.ACTIVE_TABLES) == active_before + 1
        head = first.tables[t].head

        out: queue.Queue = queue.Queue()
        stop = threading.Event()

        def follow() -> None:
            try:
                for ev, _ in first.subscribe(t, token, 0, lambda: not stop.is_set()):
                    out.put(ev.seq)
                out.put("ended")
            except DomainError as exc:
                out.put(exc)

        threading.Thread(target=follow, daemon=True).start()
        second = _manager(store, "gw-b", ports=ports, address="10.0.0.2:50054", **SLOW)
        # The first replica's lease lasts 1 ms (lease_ms 0: the shortest), and it renews it
        # every 50 ms and whenever a call finds it unsure (the stream just opened): for that
        # millisecond its lease runs, and a call landing in it is rightly told NOT_OWNER. The
        # takeover comes at the next look once it has run out.
        _until(lambda: _taken_over(second, t), "the second replica's takeover", timeout=10)

        got = []
        deadline = time.monotonic() + 10
        while True:
            item = out.get(timeout=max(0.01, deadline - time.monotonic()))
            if not isinstance(item, int):
                break
            got.append(item)
        stop.set()
        assert got == list(range(1, head + 1))  # every event held, then the end
        assert isinstance(item, Unavailable), item
        assert item.reason == "NOT_OWNER"
        assert item.details["owner_address"] == "10.0.0.2:50054"
        # The lost table left the first replica, which answers every call NOT_OWNER.
        assert t not in first.tables
        assert _gauge(metrics.ACTIVE_TABLES) == active_before
        assert _gauge(metrics.OWNERSHIP.labels("lost")) == lost_before + 1
        for call in (
            lambda: first.view(t, token, 0),
            lambda: list(first.subscribe(t, token, 0, lambda: True)),
            lambda: first.act(t, token, 0, "r1", head, Pass()),
        ):
            with pytest.raises(Unavailable) as err:
                call()
            assert err.value.reason == "NOT_OWNER"
            assert err.value.details["owner_address"] == "10.0.0.2:50054"
        # The new owner serves the same events to a reconnecting subscriber.
        resumed = second.subscribe(t, token, head - 1, lambda: True)
        assert next(resumed)[0].seq == head
    finally:
        first.close()
        if second is not None:
            second.close()
