"""Tournaments at scale and when things fail (issue 29): a 2,048-entrant tournament seats its
second round, tables are created in bounded batches, a failing step backs off and STALLs, an
operator retries or aborts (every entry refunded), the cut to the top N, the round deadline and
the paged reads."""

from __future__ import annotations

import random
import threading
import time

import pytest

from services.matchmaking import metrics
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tournaments import purse as tournament_purse
from services.matchmaking.domain.tournaments import rounds as tournament_rounds
from services.matchmaking.domain.tournaments import tournament as tournaments
from services.matchmaking.domain.tournaments.purse import escrow_account
from services.matchmaking.domain.tournaments.records import list_ids, running_ids
from services.matchmaking.domain.tournaments.seating import meetings
from shared.errors import FailedPrecondition, InvalidArgument, Unavailable
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import FakeAllocator, make_service, settle_round


class CountingAllocator(FakeAllocator):
    """Counts the CreateTable calls in flight at once."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()

    def create_table(self, request):
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            time.sleep(0.0005)
            return super().create_table(request)
        finally:
            with self._lock:
                self.in_flight -= 1


def bot_tournament(mm, bots: int, rounds: int = 3, hands: int = 1, **kw):
    tok = sign_in(mm, "Creator")[1]
    t = mm.create_tournament(tok, "Big Cup", "", 1, rounds, hands, bots, **kw)
    return tok, t.tournament_id


def create_all_tables(mm, tid: str, limit: int = 50) -> None:
    for _ in range(limit):
        if all(x.table_id for x in mm.tournament_tables(tid)):
            return
        mm.tick()
    raise AssertionError("the round's tables were not all created")


def test_a_2048_entrant_tournament_seats_round_two_without_repeats():
    mm, _, _ = make_service()
    alloc = CountingAllocator()
    mm.allocator.inner = alloc  # the recorder wraps the gateway port
    tok, tid = bot_tournament(mm, 2048, rounds=2)
    mm.start_tournament(tok, tid)
    first = mm.tournament_tables(tid)
    assert len(first) == 512
    # One call creates a bounded batch, a bounded number of calls at a time.
    assert sum(bool(x.table_id) for x in first) == tournament_rounds.ALLOCATE_BATCH
    assert alloc.most_in_flight <= tournament_rounds.ALLOCATE_CONCURRENCY
    create_all_tables(mm, tid)
    seats = [x.seats for x in mm.tournament_tables(tid)]
    assert sorted(p for s in seats for p in s) == sorted(
        e.player_id for e in mm.tournament(tid).entrants
    )
    settle_round(mm, alloc, tid, random.Random(3))
    t = mm.tournament(tid)
    assert t.current_round == 2 and t.state == tournaments.RUNNING
    second = [x.seats for x in mm.tournament_tables(tid)]
    assert len(second) == 512
    assert sorted(p for s in second for p in s) == sorted(p for s in seats for p in s)
    assert not meetings(second) & meetings(seats)  # nobody meets again
    # Swiss: the leader after round one heads table one.
    assert second[0][0] == mm.round_standings(tid)[0][0].player_id
    progress = t.round_summaries
    assert [r.round for r in progress] == [1, 2] and progress[0].advanced_ms
    assert progress[0].started_ms and progress[0].finished_ms


def test_a_failing_step_backs_off_then_stalls_and_an_operator_retry_recovers(clock_and_mm):
    mm, alloc, clock = clock_and_mm
    tok, tid = bot_tournament(mm, 8, rounds=1)
    alloc.down = True
    mm.start_tournament(tok, tid)  # the start itself counts no failure
    assert mm.tournament(tid).failures == 0
    seen = []
    for _ in range(tournaments.STALL_AFTER):
        calls = alloc.calls
        mm.tick()
        assert alloc.calls > calls  # tried
        t = mm.tournament(tid)
        seen.append(t.state)
        calls = alloc.calls
        mm.tick()  # within the backoff: not tried again
        assert alloc.calls == calls
        clock.advance(tournaments.backoff_s(t.failures))
    t = mm.tournament(tid)
    assert seen[-1] == tournaments.STALLED and seen[0] == tournaments.RUNNING
    assert t.state == tournaments.STALLED and "fake gateway is down" in t.stall_reason
    assert metrics.TOURNAMENTS_STALLED._value.get() >= 1
    registering = bot_tournament(mm, 4)[1]
    with pytest.raises(FailedPrecondition):
        mm.retry_tournament(registering)  # nothing to retry before the start
    alloc.down = False
    t = mm.retry_tournament(tid)
    assert t.state == tournaments.RUNNING and t.failures == 0 and not t.stall_reason
    assert all(x.table_id for x in mm.tournament_tables(tid))


def test_table_finished_is_recorded_even_when_the_next_step_fails(clock_and_mm, monkeypatch):
    mm, alloc, clock = clock_and_mm
    tok, tid = bot_tournament(mm, 8, rounds=2)
    mm.start_tournament(tok, tid)

    def broken(*_a, **_k):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(tournament_rounds, "seat_round", broken)
    settle_round(mm, alloc, tid, random.Random(1))  # TableFinished answers: no exception
    t = mm.tournament(tid)
    assert t.current_round == 1 and t.failures == 1 and "RecursionError" in t.stall_reason
    assert mm.tournament_tables(tid)[0].finished
    monkeypatch.undo()
    mm.tick()  # within the backoff
    assert mm.tournament(tid).current_round == 1
    clock.advance(1)
    mm.tick()
    t = mm.tournament(tid)
    assert t.current_round == 2 and t.failures == 0 and t.state == tournaments.RUNNING


def test_an_operator_aborts_a_running_tournament_and_every_entry_comes_back(
    clock_and_mm, monkeypatch
):
    mm, _, _ = clock_and_mm
    monkeypatch.setattr(tournament_purse, "REFUND_BATCH", 3)
    tokens = [sign_in(mm, f"P{i}")[1] for i in range(8)]
    t = mm.create_tournament(tokens[0], "Paid", "", 2, 2, 1, 0, entry_silver=100)
    tid = t.tournament_id
    for tok in tokens:
        mm.register_tournament(tok, tid)
    ids = [mm.authenticate(tok).player_id for tok in tokens]
    assert all(ledger.balance(mm.store, p) == 900 for p in ids)
    mm.start_tournament(tokens[0], tid)
    with pytest.raises(InvalidArgument):
        mm.abort_tournament(tid, " ")
    t = mm.abort_tournament(tid, "engine halted at two tables")
    assert t.state == tournaments.FINISHED and t.cancelled
    assert t.failure == "ended by an operator: engine halted at two tables"
    assert t.purse_done == 3  # the first batch; the ticker does the rest
    mm.tick()
    mm.tick()
    assert all(ledger.balance(mm.store, p) == 1000 for p in ids)
    assert ledger.balance(mm.store, escrow_account(tid)) == 0
    assert tid not in running_ids(mm.tournament_records)
    assert ledger.reconcile(mm.store) == []
    with pytest.raises(FailedPrecondition):
        mm.abort_tournament(tid, "again")


def test_the_cut_seats_the_top_n_by_standing_and_ranks_them_first():
    mm, alloc, _ = make_service()
    tok, tid = bot_tournament(mm, 32, rounds=2, cut_to=8, final_rounds=1)
    mm.start_tournament(tok, tid)
    rng = random.Random(11)
    house = sum(settle_round(mm, alloc, tid, rng) for _ in range(2))
    t = mm.tournament(tid)
    assert t.current_round == 3 and t.round_kind(3) == tournaments.FINAL
    after_two = [s.player_id for s in mm.round_standings(tid)[1]]
    final_tables = [x.seats for x in mm.tournament_tables(tid)]
    assert [p for s in final_tables for p in s] == after_two[:8]  # by standing, in order
    house += settle_round(mm, alloc, tid, rng)
    t = mm.tournament(tid)
    assert t.state == tournaments.FINISHED
    ranking = mm.final_ranking(tid)
    assert len(ranking) == 32 and {s.player_id for s in ranking[:8]} == set(after_two[:8])
    chips = ledger.chips_by_player(mm.store, f"tournament/{tid}")
    assert [s.chips for s in ranking[:8]] == sorted((chips[p] for p in after_two[:8]), reverse=True)
    # Those out at the cut keep their order and chips from the cut.
    cut = mm.round_standings(tid)[1]
    assert [(s.player_id, s.chips) for s in ranking[8:]] == [
        (s.player_id, s.chips) for s in cut[8:]
    ]
    assert sum(s.chips for s in ranking) == -house  # escapes' shares went to the house


@pytest.mark.parametrize(
    ("cut_to", "final_rounds", "field"),
    [(6, 1, "cut_to"), (-4, 1, "cut_to"), (8, 0, "final_rounds"), (0, 2, "final_rounds"),
     (8, 31, "final_rounds")],
)  # fmt: skip
def test_bad_cuts_are_refused(cut_to, final_rounds, field):
    mm, _, _ = make_service()
    tok = sign_in(mm, "C")[1]
    with pytest.raises(InvalidArgument) as err:
        mm.create_tournament(tok, "Cup", "", 1, 2, 1, 4, cut_to=cut_to, final_rounds=final_rounds)
    assert err.value.details["field"] == field
    assert list_ids(mm.tournament_records) == []


def test_a_cut_needs_more_entrants_than_it_keeps():
    mm, _, _ = make_service()
    tok, tid = bot_tournament(mm, 8, rounds=1, cut_to=8, final_rounds=1)
    with pytest.raises(FailedPrecondition) as err:
        mm.start_tournament(tok, tid)
    assert err.value.reason == "CUT_TOO_LARGE"


def test_each_table_carries_the_round_deadline(clock_and_mm):
    mm, alloc, clock = clock_and_mm
    tok, tid = bot_tournament(mm, 8, rounds=2, round_seconds=90)
    mm.start_tournament(tok, tid)
    seated = int(clock() * 1000)
    assert {r.end_by_unix_ms for r, _ in alloc.tables.values()} == {seated + 90_000}
    clock.advance(30)
    settle_round(mm, alloc, tid, random.Random(2))
    second = {r.end_by_unix_ms for r, _ in alloc.tables.values() if "/round/2/" in r.tag}
    assert second == {seated + 30_000 + 90_000}
    summary = mm.tournament(tid).round_summaries[1]
    assert summary.deadline_ms == seated + 30_000 + 90_000
    with pytest.raises(InvalidArgument):
        mm.create_tournament(tok, "Cup", "", 1, 1, 1, 4, round_seconds=-1)


def test_standings_and_tables_page_through_a_large_tournament():
    mm, alloc, _ = make_service()
    tok, tid = bot_tournament(mm, 300, rounds=2)
    mm.start_tournament(tok, tid)
    create_all_tables(mm, tid)
    t = mm.tournament(tid)
    lists, progress = mm.tournament_detail(t)
    assert lists is None and progress.tables == 75  # too many to list in one message
    settle_round(mm, alloc, tid, random.Random(5))
    seen, token = [], ""
    while True:
        page, total, final, round_no, token = mm.standings_page(tid, 1, 128, token)
        seen += page
        if not token:
            break
    assert total == 300 and not final and round_no == 1
    assert [s.rank for s in seen] == list(range(1, 301))
    assert [s.player_id for s in seen] == [s.player_id for s in mm.round_standings(tid)[0]]
    tables, token = [], ""
    while True:
        page, r, total, token = mm.tables_page(tid, 1, 40, token)
        tables += page
        if not token:
            break
    assert r == 1 and total == 75 and [x.index for x in tables] == list(range(75))
    for bad in ("x", "-1", "1" * 20):
        with pytest.raises(InvalidArgument):
            mm.standings_page(tid, 0, 10, bad)
    with pytest.raises(InvalidArgument):
        mm.tables_page(tid, 0, 501, "")
    with pytest.raises(FailedPrecondition):
        mm.standings_page(tid, 2, 10, "")  # round two is not over


def test_a_small_tournament_still_lists_everything_in_its_message():
    mm, alloc, _ = make_service()
    tok, tid = bot_tournament(mm, 8, rounds=1)
    mm.start_tournament(tok, tid)
    settle_round(mm, alloc, tid, random.Random(4))
    lists, _ = mm.tournament_detail(mm.tournament(tid))
    assert len(lists.tables) == 2 and len(lists.standings) == 1
    assert lists.final_ranking == lists.standings[0]


def test_a_hand_refused_for_good_stalls_the_round_with_why(clock_and_mm):
    mm, alloc, clock = clock_and_mm
    tok, tid = bot_tournament(mm, 4, rounds=2)
    mm.start_tournament(tok, tid)
    (table,) = mm.tournament_tables(tid)
    mm.table_finished(table.table_id, alloc.by_table(table.table_id).tag, 1)  # its hand: never
    mm.tick()
    assert mm.tournament(tid).failures == 0  # a hand may still be on its way
    clock.advance(tournament_rounds.UNSETTLED_GRACE_MS / 1000)
    mm.tick()
    t = mm.tournament(tid)
    assert t.failures == 1 and "the ledger holds 0 of them" in t.stall_reason


@pytest.fixture
def clock_and_mm():
    return make_service()


def test_unavailable_during_a_batch_stops_new_calls():
    calls = []

    class Flaky(FakeAllocator):
        def create_table(self, request):
            calls.append(request.request_id)
            if len(calls) == 3:
                raise Unavailable("gateway busy")
            return super().create_table(request)

    mm, _, _ = make_service()
    mm.allocator.inner = Flaky()
    tok, tid = bot_tournament(mm, 64, rounds=1)
    mm.start_tournament(tok, tid)  # one at a time in order when the batch stops early
    made = sum(bool(x.table_id) for x in mm.tournament_tables(tid))
    assert made < 16 and len(calls) < 16 + tournament_rounds.ALLOCATE_CONCURRENCY
