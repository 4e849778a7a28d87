"""A tournament's rounds: seating, creating the tables, the round barrier and the standings.

Every step reads and writes only what it needs (:mod:`.records`, through the tournaments'
repository ``store``; what the ledger holds through ``books``, the ledger's store), so a round of
2,500 tables costs work in proportion to its tables, never to the tournament's history times
its tables:

* **Seating** (:func:`advance`): the standings after the round (the last round's ranking plus
  this round's hands, read from the ledger by the round's tag prefix), then the next round's
  tables (:mod:`.seating`: Swiss with no repeat meeting while avoidable; after the cut, the
  finalists by standing) written as one record, created once: a second replica or a retry
  after a crash finds the first one's and carries on from there.
* **Tables** (:func:`create_tables`): at most ``batch`` of the round's pending tables per call,
  ``concurrency`` CreateTable calls in flight (the gateways' Service spreads them over the
  replicas); the first gateway that cannot answer stops the batch (backpressure) and the rest
  waits for the next tick. Each table carries the round's deadline.
* **Barrier** (:func:`table_finished`, :func:`hand_recorded`): a table is *settled* once it
  finished and every hand it played is in the ledger; the round's record keeps the created,
  finished and settled tables as bit sets, so knowing that the last table settled is one read.
* **Standings**: after each round a ranking record (player, chips), written once; mid-round
  standings add the round's hands so far to the last ranking (:func:`live_ranking`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.queues.quick_match import Assignment
from services.matchmaking.domain.tables.allocator import (
    SeatRequest,
    TableAllocation,
    TableAllocator,
    TableRefused,
    TableRequest,
)
from services.matchmaking.domain.tables.tags import tournament_tag
from services.matchmaking.domain.tournaments.records import (
    FROZEN,
    Header,
    Ranking,
    RoundProgress,
    Seating,
    TableState,
    create_progress,
    create_ranking,
    create_seating,
    get_header,
    get_progress,
    get_seating,
    get_table,
    round_table_states,
    update_header,
    update_progress,
    update_table,
)
from services.matchmaking.domain.tournaments.seating import TABLE_SIZE, meetings, seat_round
from services.matchmaking.domain.tournaments.standings import (
    Standing,
    all_standings,
    final_ranking,
    ranking_after,
)
from services.matchmaking.domain.tournaments.tournament import (
    ACTIVE,
    FINAL,
    FINISHED,
    SWISS,
    Tournament,
    draw_order,
    fail,
    get,
)
from shared.errors import DomainError, FailedPrecondition, NotFound

ALLOCATE_BATCH = 256  # tables one call asks the gateways for
ALLOCATE_CONCURRENCY = 16  # CreateTable calls in flight at once
UNSETTLED_GRACE_MS = 60_000  # a finished table whose hands are not all in the ledger by then


# --- reading ---------------------------------------------------------------------------------
def round_tables(store, t: Tournament, round_no: int | None = None) -> list[TableState]:
    """A round's tables by index (the current round by default): those not created yet with
    their seats alone."""
    r = t.current_round if round_no is None else round_no
    seating = get_seating(store, t.tournament_id, r) if r else None
    if seating is None:
        return []
    states = round_table_states(store, t.tournament_id, r)
    return [states.get(i) or TableState(r, i, seats) for i, seats in enumerate(seating.tables)]


def _seat_index(store, tournament_id: str, round_no: int) -> dict[str, int] | None:
    seating = get_seating(store, tournament_id, round_no)
    if seating is None:
        return None

    def build() -> dict[str, int]:
        return {p: i for i, seats in enumerate(seating.tables) for p in seats}

    return FROZEN.get(store, "seat-index", f"{tournament_id}/{round_no}", build)


def seat_of(store, t: Tournament, player_id: str) -> tuple[int, Assignment | None] | None:
    """The player's table index in the current round and its seat once the table exists (two
    small reads: the round's seating is cached in-process)."""
    if t.state not in ACTIVE or not t.current_round:
        return None
    index = (_seat_index(store, t.tournament_id, t.current_round) or {}).get(player_id)
    if index is None:
        return None
    state = get_table(store, t.tournament_id, t.current_round, index)
    if state is None or not state.table_id:
        return index, None
    seat = state.seats.index(player_id)
    token = state.seat_tokens[seat] if seat < len(state.seat_tokens) else ""
    return index, Assignment(state.gateway_address, state.table_id, seat, token)


LIST_LIMIT = 256  # entrants up to which a tournament's message carries its lists


@dataclass(frozen=True, slots=True)
class TournamentLists:
    """What a small tournament's message lists: every round's tables, the standings after
    each finished round and the final ranking."""

    tables: list[TableState]
    standings: list[tuple[Standing, ...]]
    final_ranking: tuple[Standing, ...]


def lists_of(store, t: Tournament) -> TournamentLists | None:
    """A small tournament's lists; None past :data:`LIST_LIMIT` entrants (read them a page at
    a time: :func:`standings_page`, :func:`tables_page`)."""
    if len(t.entrants) > LIST_LIMIT:
        return None
    tables = [x for r in range(1, t.current_round + 1) for x in round_tables(store, t, r)]
    done = all_standings(store, t)
    final = final_ranking(store, t) if t.state == FINISHED else ()
    if t.state == FINISHED and not final and done:
        final = done[-1]  # ended early: the standings so far
    return TournamentLists(tables, done, final)


def tables_page(
    store, t: Tournament, round_no: int, offset: int, size: int
) -> tuple[list[TableState], int, int]:
    """Tables ``offset`` to ``offset + size - 1`` of a round (0: the current one), the round,
    and how many tables it has."""
    r = round_no or t.current_round
    if r > t.current_round or r < 0:
        raise NotFound(f"tournament {t.tournament_id} has no round {round_no} yet")
    tables = round_tables(store, t, r) if r else []
    return tables[offset : offset + size], r, len(tables)


# --- seating and advancing --------------------------------------------------------------------
def _met_before(store, t: Tournament, round_no: int) -> set[tuple[str, str]]:
    met: set[tuple[str, str]] = set()
    for r in range(1, min(round_no, t.rounds + 1)):
        seating = get_seating(store, t.tournament_id, r)
        if seating is not None:
            met |= meetings(seating.tables)
    return met


def _tables_for(store, t: Tournament, round_no: int, ranking: Ranking | None) -> Seating:
    if round_no == 1:
        order = draw_order(t.tournament_id, t.entrants)
    else:
        assert ranking is not None
        order = [p for p, _ in ranking.rows]
    if t.round_kind(round_no) == SWISS:
        tables = seat_round(order, _met_before(store, t, round_no))
        return Seating(round_no, SWISS, tuple(tuple(x) for x in tables))
    finalists = order[: t.cut_to]  # after the cut the ranking lists the finalists first
    groups = [tuple(finalists[i : i + TABLE_SIZE]) for i in range(0, len(finalists), TABLE_SIZE)]
    return Seating(round_no, FINAL, tuple(groups))


def advance(store, books, tournament_id: str, now_ms: int) -> str:
    """Move the tournament on if it can: seat round one after the start, seat the next round
    once every table of this one settled, or finish after the last. Returns what it did
    ("seated", "finished" or ""). Safe to run twice at once or again after a crash: each record
    is written once and the header moves only from the round it read."""
    t = get(store, tournament_id)
    if t.state not in ACTIVE:
        return ""
    r = t.current_round
    ranking = None
    if r:
        progress = get_progress(store, tournament_id, r)
        if progress is None or progress.count("settled") < progress.tables:
            return ""
        ranking = ranking_after(store, books, t, r)
    if r >= t.total_rounds:
        create_ranking(store, tournament_id, ranking, final=True)  # type: ignore[arg-type]

        def finish(h: Header) -> Header:
            if h.state not in ACTIVE or h.current_round != r:
                return h
            return _with_summary(replace(h, state=FINISHED), r, advanced_ms=now_ms)

        update_header(store, tournament_id, finish)
        if r:
            update_progress(store, tournament_id, r, lambda p: replace(p, advanced_ms=now_ms))
        return "finished"
    nxt = r + 1
    seating = create_seating(store, tournament_id, _tables_for(store, t, nxt, ranking))
    create_progress(
        store,
        tournament_id,
        RoundProgress(nxt, seating.kind, len(seating.tables), now_ms, t.deadline_ms(now_ms)),
    )
    if r:
        update_progress(
            store,
            tournament_id,
            r,
            lambda p: p if p.advanced_ms else replace(p, advanced_ms=now_ms),
        )
    seated = get_progress(store, tournament_id, nxt)
    assert seated is not None

    def move(h: Header) -> Header:
        if h.state not in ACTIVE or h.current_round != r:
            return h
        if r:
            h = _with_summary(h, r, advanced_ms=now_ms)
        return replace(h, current_round=nxt, round_summaries=(*h.round_summaries, seated.summary()))

    update_header(store, tournament_id, move)
    return "seated"


def _with_summary(h: Header, round_no: int, **changes: int) -> Header:
    summaries = tuple(
        replace(s, **{k: v for k, v in changes.items() if not getattr(s, k)})
        if s.round == round_no
        else s
        for s in h.round_summaries
    )
    return replace(h, round_summaries=summaries)


# --- creating the tables ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Created:
    created: int  # tables new on a gateway now
    error: DomainError | None  # why the batch stopped early (None: it went through)


def _request(t: Tournament, seating: Seating, index: int, deadline_ms: int) -> TableRequest:
    names = {e.player_id: e for e in t.entrants}
    seats = seating.tables[index]
    return TableRequest(
        request_id=f"tournament-{t.tournament_id}-r{seating.round}-t{index}",
        ruleset=t.ruleset,
        ruleset_options=dict(t.ruleset_options),
        stake=t.stake,
        seats=tuple(SeatRequest(p, names[p].display_name, names[p].bot) for p in seats),
        max_hands=t.hands_per_round,
        tag=tournament_tag(t.tournament_id, seating.round, index),
        end_by_unix_ms=deadline_ms,
    )


def _calls(
    allocator: TableAllocator, requests: Sequence[tuple[int, TableRequest]], concurrency: int
) -> Iterator[tuple[int, TableAllocation | DomainError]]:
    """CreateTable for each request, ``concurrency`` at a time, results as they come; after
    the first failure no new call starts (those in flight finish)."""
    if concurrency <= 1 or len(requests) <= 1:
        for index, request in requests:
            try:
                yield index, allocator.create_table(request)
            except DomainError as exc:
                yield index, exc
                return
        return

    def call(request: TableRequest) -> TableAllocation | DomainError:
        try:
            return allocator.create_table(request)
        except DomainError as exc:
            return exc

    pending = list(requests)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="tournament-tables") as ex:
        running: dict[Future, int] = {}
        stopped = False
        while pending or running:
            while pending and not stopped and len(running) < concurrency:
                index, request = pending.pop(0)
                running[ex.submit(call, request)] = index
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in done:
                result = f.result()
                stopped |= isinstance(result, DomainError)
                yield running.pop(f), result


def create_tables(
    store,
    allocator: TableAllocator,
    tournament_id: str,
    clock_ms: Callable[[], int],
    batch: int = ALLOCATE_BATCH,
    concurrency: int = ALLOCATE_CONCURRENCY,
) -> Created:
    """Create up to ``batch`` of the current round's pending tables. A gateway's refusal of
    the table itself (:class:`TableRefused`) ends the tournament with the reason (entries
    refunded); any other failure stops the batch and is returned. ``clock_ms`` stamps when
    the round's last table was created."""
    t = get(store, tournament_id)
    if t.state not in ACTIVE or not t.current_round:
        return Created(0, None)
    r = t.current_round
    progress = get_progress(store, tournament_id, r)
    seating = get_seating(store, tournament_id, r)
    if progress is None or seating is None:
        return Created(0, None)
    pending = progress.missing("created")[:batch]
    if not pending:
        return Created(0, None)
    requests = [(i, _request(t, seating, i, progress.deadline_ms)) for i in pending]
    done: list[int] = []
    new = 0
    error: DomainError | None = None
    for index, result in _calls(allocator, requests, concurrency):
        if isinstance(result, TableRefused):
            fail(store, tournament_id, result.message)
            return Created(new, None)
        if isinstance(result, DomainError):
            if result.reason != "TABLE_BEING_CREATED":  # another call is at it: no failure
                error = error or result
            continue
        _record_created(store, tournament_id, r, index, seating.tables[index], result)
        done.append(index)
        new += not result.reused
    if done:
        now_ms = clock_ms()
        flipped = [False]  # whether the committed update created the round's last table

        def mark(p: RoundProgress) -> RoundProgress:
            p = p.with_bits("created", done)
            flipped[0] = p.count("created") == p.tables and not p.started_ms
            return replace(p, started_ms=now_ms) if flipped[0] else p

        update_progress(store, tournament_id, r, mark)
        if flipped[0]:
            update_header(store, tournament_id, lambda h: _with_summary(h, r, started_ms=now_ms))
    return Created(new, error)


def _record_created(store, tid: str, r: int, index: int, seats, alloc: TableAllocation) -> None:
    def fn(s: TableState | None) -> TableState:
        s = s or TableState(r, index, tuple(seats))
        if s.table_id:
            return s  # reported finished first, or another replica's
        return replace(
            s,
            table_id=alloc.table_id,
            gateway_address=alloc.gateway_address,
            seat_tokens=tuple(alloc.seat_tokens),
        )

    update_table(store, tid, r, index, fn)


# --- the round barrier --------------------------------------------------------------------
def table_finished(
    store,
    books,
    tournament_id: str,
    round_no: int,
    index: int,
    table_id: str,
    hands: int,
    now_ms: int,
) -> Settled:
    """The gateway says a table of the tournament finished after ``hands`` hands: recorded
    (idempotent), and settled if its hands are all in the ledger."""
    get_header(store, tournament_id)
    seating = get_seating(store, tournament_id, round_no)
    if seating is None or not 0 <= index < len(seating.tables):
        raise NotFound(f"tournament {tournament_id} has no round {round_no} table {index}")

    def fn(s: TableState | None) -> TableState:
        s = s or TableState(round_no, index, seating.tables[index], table_id=table_id)
        if s.table_id and s.table_id != table_id:
            raise FailedPrecondition(
                f"table {table_id} is not round {round_no} table {index} of "
                f"{tournament_id} ({s.table_id} is)"
            )
        return replace(
            s,
            table_id=table_id,
            finished=True,
            hands_played=max(hands, s.hands_played),
            finished_ms=s.finished_ms or now_ms,
        )

    state = update_table(store, tournament_id, round_no, index, fn)
    update_progress(store, tournament_id, round_no, lambda p: p.with_bits("finished", [index]))
    return settle(store, books, tournament_id, state, now_ms)


def hand_recorded(store, books, tournament_id: str, round_no: int, index: int, now_ms: int) -> bool:
    """A hand of a tournament table reached the ledger: a table that finished before its last
    hand did settles now. True when that settled the round's last table."""
    state = get_table(store, tournament_id, round_no, index)
    if state is None or not state.finished or state.settled:
        return False
    return settle(store, books, tournament_id, state, now_ms).round_done


@dataclass(frozen=True, slots=True)
class Settled:
    state: TableState
    round_done: bool  # this call settled the round's last table: the round can move on


def settle(store, books, tournament_id: str, state: TableState, now_ms: int) -> Settled:
    """Settle a finished table whose hands are all in the ledger (else nothing changes)."""
    if state.settled or not state.finished:
        return Settled(state, False)
    if ledger.hands_of_table(books, state.table_id) < state.hands_played:
        return Settled(state, False)
    state = update_table(
        store, tournament_id, state.round, state.index, lambda s: replace(s, settled=True)
    )

    flipped = [False]  # whether the committed update completed the round (fn may run twice)

    def mark(p: RoundProgress) -> RoundProgress:
        was_done = p.count("settled") == p.tables
        p = p.with_bits("settled", [state.index])
        flipped[0] = not was_done and p.count("settled") == p.tables
        if flipped[0] and not p.finished_ms:
            p = replace(p, finished_ms=now_ms)
        return p

    update_progress(store, tournament_id, state.round, mark)
    done = flipped[0]
    if done:
        update_header(
            store, tournament_id, lambda h: _with_summary(h, state.round, finished_ms=now_ms)
        )
    return Settled(state, done)


def unsettled(store, books, tournament_id: str, round_no: int, now_ms: int) -> list[TableState]:
    """Finished tables of the round not settled yet, each tried again; those still short of
    their hands :data:`UNSETTLED_GRACE_MS` after they finished (a report refused for good) are
    returned, so the caller can say why the round does not end."""
    progress = get_progress(store, tournament_id, round_no)
    if progress is None:
        return []
    waiting = int(progress.finished, 16) & ~int(progress.settled, 16)
    stuck = []
    index = 0
    while waiting:
        if waiting & 1:
            state = get_table(store, tournament_id, round_no, index)
            if state is not None:
                state = settle(store, books, tournament_id, state, now_ms).state
                if not state.settled and now_ms - state.finished_ms >= UNSETTLED_GRACE_MS:
                    stuck.append(state)
        waiting >>= 1
        index += 1
    return stuck
