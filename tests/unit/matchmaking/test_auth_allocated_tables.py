"""The ledger accepts gateway reports only for tables matchmaking allocated, with exactly the
players it seated there (and the tag): a forged or foreign report changes nothing. Replicas
creating the same table at once ask the gateway once; a replica that dies creating one holds it
back for one claim (its lease) at most, a living one keeps its claim however slow the gateway."""

from __future__ import annotations

import threading
import time

import pytest

from infra.store.memory import MemoryStore
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HandReport
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.domain.tables.allocator import SeatRequest, TableRequest
from services.matchmaking.domain.tournaments import tournament as tournaments
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from services.matchmaking.storage import table_records
from services.matchmaking.storage.table_claims import RecordingAllocator
from services.matchmaking.storage.table_records import TableRecords
from shared.errors import FailedPrecondition, NotFound, Unavailable
from tests.doubles.clock import ManualClock
from tests.support.concurrency import run_threads
from tests.support.identity import issuer_config, sign_in
from tests.unit.matchmaking.mm_fakes import FakeAllocator, make_service


def quick_table(mm, alloc):
    """Four registered players matched in a quick-match queue: (table id, tag, player ids)."""
    players = [sign_in(mm, n) for n in "ABCD"]
    for _, tok in players:
        mm.join_queue(tok, "", 0)
    mm.tick()
    ((request, table),) = alloc.tables.values()
    return table.table_id, request.tag, tuple(s.player_id for s in request.seats)


def one_table_tournament(mm):
    """A started one-round tournament of four players: one table allocated."""
    tokens = [sign_in(mm, f"H{i}")[1] for i in range(4)]
    t = mm.create_tournament(tokens[0], "Cup", "", 2, 1, 1, 0)
    for tok in tokens:
        mm.register_tournament(tok, t.tournament_id)
    return mm.start_tournament(tokens[0], t.tournament_id)


def balances(mm, ids):
    """The players' silver and the house's, less the four welcome grants it paid."""
    house = ledger.balance(mm.store, ledger.HOUSE) + 1000 * len(ids)
    return [*(ledger.balance(mm.store, p) for p in ids), house]


def test_a_report_for_an_allocated_table_with_its_seating_is_recorded():
    mm, alloc, _ = make_service()
    table_id, tag, ids = quick_table(mm, alloc)
    assert mm.record_hand(HandReport("h1", table_id, tag, ids, (-6, 2, 2, 2))) is True
    assert balances(mm, ids) == [994, 1002, 1002, 1002, 0]
    mm.table_finished(table_id, tag, 1)


def test_a_forged_allocation_is_refused_and_changes_nothing():
    """'player X pays 10^9 to id a' for a table matchmaking never allocated."""
    mm, alloc, _ = make_service()
    _, _, ids = quick_table(mm, alloc)
    before = balances(mm, ids)
    forged = HandReport(
        "h-x", "t-forged", "quick/x", (ids[0], "a", "b", "c"), (-(10**9), 10**9, 0, 0)
    )
    with pytest.raises(NotFound) as err:
        mm.record_hand(forged)
    assert err.value.reason == "TABLE_NOT_ALLOCATED" and "t-forged" in err.value.message
    assert balances(mm, ids) == before
    assert ledger.balance(mm.store, "a") == 0
    assert not ledger.has_hand(mm.store, "h-x")  # the hand id stays unused


@pytest.mark.parametrize(
    "seating",
    [
        lambda ids: (ids[1], ids[0], ids[2], ids[3]),  # right players, wrong seats
        lambda ids: ("attacker", ids[1], ids[2], ids[3]),  # a stranger in a seat
    ],
)
def test_an_allocated_table_with_another_seating_is_refused(seating):
    mm, alloc, _ = make_service()
    table_id, tag, ids = quick_table(mm, alloc)
    before = balances(mm, ids)
    with pytest.raises(FailedPrecondition) as err:
        mm.record_hand(HandReport("h1", table_id, tag, seating(ids), (-30, 10, 10, 10)))
    assert err.value.reason == "TABLE_SEATING_MISMATCH"
    assert balances(mm, ids) == before and ledger.balance(mm.store, "attacker") == 0
    assert not ledger.has_hand(mm.store, "h1")


def test_an_allocated_table_with_another_tag_is_refused():
    mm, alloc, _ = make_service()
    table_id, _tag, ids = quick_table(mm, alloc)
    with pytest.raises(FailedPrecondition) as err:
        mm.record_hand(HandReport("h1", table_id, "tournament/T/round/1/table/0", ids, (0,) * 4))
    assert err.value.reason == "TABLE_TAG_MISMATCH"
    with pytest.raises(FailedPrecondition):
        mm.table_finished(table_id, "room/123456", 1)


def test_table_finished_for_an_unknown_table_is_refused_and_advances_nothing():
    mm, _alloc, _ = make_service()
    t = one_table_tournament(mm)
    tag = f"tournament/{t.tournament_id}/round/1/table/0"
    with pytest.raises(NotFound):
        mm.table_finished("t-forged", tag, 0)
    (table,) = mm.tournament_tables(t.tournament_id)
    assert not table.finished and mm.tournament(t.tournament_id).state == tournaments.RUNNING


def test_room_and_tournament_tables_are_allocated_tables_too():
    mm, alloc, _ = make_service()
    t = one_table_tournament(mm)
    (table,) = mm.tournament_tables(t.tournament_id)
    tag = alloc.by_table(table.table_id).tag
    mm.record_hand(HandReport("h1", table.table_id, tag, tuple(table.seats), (3, -1, -1, -1)))
    mm.table_finished(table.table_id, tag, 1)
    mm.tick()
    assert mm.tournament(t.tournament_id).state == tournaments.FINISHED


def test_allocations_survive_a_restart():
    store, alloc, clock = MemoryStore(), FakeAllocator(), ManualClock()
    cfg = MatchmakingConfig(issuers=(issuer_config(),), token_secret=b"s")
    mm = Matchmaking(store, alloc, clock, cfg)
    table_id, tag, ids = quick_table(mm, alloc)
    again = Matchmaking(store, alloc, clock, cfg)
    # the table's room service fee (台费: its level's, 8 at stake 8) survives the restart too
    with pytest.raises(FailedPrecondition) as err:
        again.record_hand(HandReport("h1", table_id, tag, ids, (1, -1, 0, 0)))
    assert err.value.reason == "FEE_MISMATCH"
    fees = (8, 8, 8, 8)
    assert again.record_hand(HandReport("h1", table_id, tag, ids, (1, -1, 0, 0), fees=fees))


def test_request_ids_sent_to_the_gateway_are_sealed_and_deterministic():
    """A guessable request id would let anyone pre-create matchmaking's table (seats and stake of
    their choosing) or fetch its seat tokens from the gateway's idempotent CreateTable."""
    mm, alloc, _ = make_service()
    t = one_table_tournament(mm)
    (request_id,) = alloc.tables
    logical = f"tournament-{t.tournament_id}-r1-t0"
    assert request_id.startswith(logical + "-") and len(request_id) == len(logical) + 33
    assert request_id == allocated_tables.sealed_request_id(b"test-secret", logical)
    assert request_id != allocated_tables.sealed_request_id(b"other-secret", logical)
    assert len(request_id) <= 128  # the gateway's limit for ids


def test_a_table_created_but_not_yet_recorded_is_retried_not_dropped():
    """Matchmaking stopped after the gateway created the table and before it recorded it: the
    gateway's report is UNAVAILABLE (retried), and accepted once the next tick records it."""
    mm, alloc, _ = make_service()
    inner = alloc.create_table
    lost = []

    def answer_lost(request: TableRequest):
        table = inner(request)
        if not lost:
            lost.append(table)
            raise Unavailable("answer lost")
        return table

    alloc.create_table = answer_lost
    players = [sign_in(mm, n) for n in "ABCD"]
    for _, tok in players:
        mm.join_queue(tok, "", 0)
    mm.tick()
    ((request, table),) = alloc.tables.values()
    ids = tuple(s.player_id for s in request.seats)
    report = HandReport("h1", table.table_id, request.tag, ids, (2, -2, 0, 0))
    with pytest.raises(Unavailable) as err:
        mm.record_hand(report)
    assert err.value.reason == "TABLE_ALLOCATION_PENDING"
    with pytest.raises(NotFound):  # a stranger's seating matches no pending allocation
        mm.record_hand(HandReport("h2", table.table_id, request.tag, ("x", *ids[1:]), (0,) * 4))
    mm.tick()
    assert mm.record_hand(report) is True
    assert list(mm.store.scan(table_records.PENDING)) == []


def test_recording_allocator_records_the_requested_seating():
    store, fake = MemoryStore(), FakeAllocator()
    rec = RecordingAllocator(store, fake, b"k")
    seats = tuple(SeatRequest(f"p{i}", f"P{i}", bot=i == 3) for i in range(4))
    got = rec.create_table(TableRequest("quick-m1", "", 2, seats, tag="quick/m1"))
    found = allocated_tables.find(TableRecords(store), got.table_id)
    assert found.player_ids == ("p0", "p1", "p2", "p3") and found.tag == "quick/m1"
    tables = TableRecords(store)
    assert (
        allocated_tables.find(tables, "nope") is None and allocated_tables.find(tables, "") is None
    )


class SlowAllocator(FakeAllocator):
    """A gateway that takes a while to answer, so concurrent creations overlap."""

    def create_table(self, request):
        time.sleep(0.05)
        return super().create_table(request)


def test_replicas_creating_the_same_table_at_once_ask_the_gateway_once(backend):
    gateway = SlowAllocator()
    replicas = [RecordingAllocator(backend.open(), gateway, b"secret") for _ in range(2)]
    request = TableRequest(
        "room-123456-1", "shanghai-qiaoma", 1, tuple(SeatRequest(p, p) for p in "abcd")
    )
    answers: list = []

    def create(i: int) -> None:
        try:
            answers.append(replicas[i % 2].create_table(request))
        except Unavailable as exc:
            answers.append(exc.reason)

    run_threads(create, 6, with_index=True)
    assert gateway.calls == 1
    made = [a for a in answers if not isinstance(a, str)]
    assert [a.reused for a in made].count(False) == 1
    assert {a.table_id for a in made} == {"tbl-1"}
    assert set(answers) - set(made) <= {"TABLE_BEING_CREATED"}
    again = replicas[1].create_table(request)  # later: the recorded table, nothing created
    assert (again.table_id, again.reused, gateway.calls) == ("tbl-1", True, 1)
    assert again.seat_tokens == made[0].seat_tokens


class Died(Exception):
    """The replica's process ended here."""


class DeadReplicaStore:
    """A replica's view of the store that dies with it: it releases nothing."""

    def __init__(self, store) -> None:
        self._store = store

    def release_lease(self, lease) -> bool:
        return False

    def __getattr__(self, name):
        return getattr(self._store, name)


CLAIM_MS = 300
REQUEST = TableRequest(
    "tournament-t1-r2-t0", "shanghai-qiaoma", 1, tuple(SeatRequest(p, p) for p in "abcd")
)


def create_when_free(replica: RecordingAllocator, timeout: float = 10.0):
    """``replica.create_table(REQUEST)`` once no other replica holds its claim."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return replica.create_table(REQUEST)
        except Unavailable as exc:
            assert exc.reason == "TABLE_BEING_CREATED"
            assert time.monotonic() < deadline, "the claim was never freed"
            time.sleep(0.02)


def test_a_replica_that_died_creating_a_table_hides_it_for_one_claim_at_most(backend):
    """The gateway creates (and starts) the table, then the replica that asked dies before it
    records it: its players cannot know their table until another replica records it. That
    happens one claim (the replicas' lease) after the death, not after some longer timeout
    during which the table, even the tournament's round, is played by the players' timers."""
    gateway = FakeAllocator()

    class CreatesThenDies:
        def create_table(self, request):
            gateway.create_table(request)
            raise Died

    dead = RecordingAllocator(
        DeadReplicaStore(backend.open()), CreatesThenDies(), b"secret", claim_ms=CLAIM_MS
    )
    alive = RecordingAllocator(backend.open(), gateway, b"secret", claim_ms=CLAIM_MS)
    with pytest.raises(Died):
        dead.create_table(REQUEST)
    died = time.monotonic()
    with pytest.raises(Unavailable) as held:  # its claim stands a while
        alive.create_table(REQUEST)
    assert held.value.reason == "TABLE_BEING_CREATED"
    table = create_when_free(alive)
    hidden = time.monotonic() - died
    assert hidden < 10 * CLAIM_MS / 1000, f"hidden {hidden:.2f} s for a {CLAIM_MS} ms claim"
    assert (table.table_id, gateway.calls) == ("tbl-1", 2)  # the same table, asked again
    found = allocated_tables.find(alive.tables, table.table_id)
    assert found is not None and found.player_ids == tuple("abcd")


def test_a_claim_is_kept_while_its_replica_waits_on_a_slow_gateway(backend):
    """A living claimant renews its claim: however long the gateway takes, no other replica
    creates the table meanwhile. The claim is renewed every third of its term, so a renewal
    stalled past two thirds of it lets the other replica in (idempotent, but not what is tested
    here): this test's claim is long enough for the stalls of a loaded 2-core machine (a
    300 ms one lapsed there, under PostgreSQL)."""

    claim_ms = 1000
    asked = threading.Event()

    class VerySlow(FakeAllocator):
        def create_table(self, request):
            asked.set()
            time.sleep(2.5 * claim_ms / 1000)  # several claims long
            return super().create_table(request)

    gateway = VerySlow()
    first, second = (
        RecordingAllocator(backend.open(), gateway, b"secret", claim_ms=claim_ms) for _ in range(2)
    )
    refused: list[str] = []

    def other_replica() -> None:
        asked.wait(10)  # the first replica is on the gateway
        while not gateway.tables:
            try:
                second.create_table(REQUEST)
            except Unavailable as exc:
                refused.append(exc.reason)
            time.sleep(0.02)

    helper = threading.Thread(target=other_replica)
    helper.start()
    made = first.create_table(REQUEST)
    helper.join()
    assert not made.reused and gateway.calls == 1
    assert refused and set(refused) == {"TABLE_BEING_CREATED"}
    assert second.create_table(REQUEST).table_id == made.table_id  # recorded: reused
