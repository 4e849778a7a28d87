"""A tournament with a cut and a round deadline, through real processes (issue 29's "done
when"): wall, rules, scoring, matchmaking and gateway as processes on loopback ports the OS
picks (tests.support.stacks), the gateway and matchmaking finding each other through address
files (tests.support.address_book), everything over TLS as deployed and through the protos
only (the ledger is read from matchmaking's SQLite file once, at the end, as a cross-check).

64 entrants — 60 of matchmaking's bots and 4 signed-in people, each played by a scripted client
that follows WatchTournament (tests.support.cluster.Entrant) — play 2 Swiss rounds of 2 hands,
then the top 16 play one final round; every round has a time limit of ROUND_SECONDS.

The slow table, made deterministic: person 1 dawdles in round one — every decision prompted
before the table's deadline (TableView.end_by_unix_ms) is answered only once the deadline has
passed, and every later one at once (the gateway's own timers are longer than the round, so
they never act for them). So that table's first hand cannot end before the deadline, whatever
the tiles; the gateway deals no second hand and ends the table (reason "deadline") with one hand
played. Everyone else answers at once and the bots play at full speed, so every other table
plays both its hands well within the limit.

Checked: the tournament finishes (never STALLED, no failure); rounds 1-2 have 16 tables each
with every entrant seated once, round 3 (FINAL) 4 tables holding the top 16 after round 2 by
standing (table 0 = ranks 1-4 …); round_progress has the three rounds with their deadline =
seated + round_seconds; the slow table played fewer hands than hands_per_round, and its round
still advanced within a few seconds of the deadline; the final ranking (GetStandings, paged)
ranks all 64 once, the finalists first by chips, then the others as they stood at the cut, chips
summing to zero; and the chips agree with the ledger (the people's entries, and every
entrant's hands in matchmaking's books).
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from pathlib import Path

import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.request_ids import with_request_ids
from infra.store import open_store
from infra.supervisor import ServiceProcess, stop_all
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tables.tags import tournament_group
from tests.support import probes
from tests.support.address_book import AddressBook
from tests.support.cluster import Entrant, NotingPlayer, Played, player_channel
from tests.support.identity import sign_in
from tests.support.stacks import backend_flags, service_process, start_services
from tests.support.tls import as_player

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TIMEOUT = 10.0
PEOPLE, BOTS = 4, 60
ENTRANTS = PEOPLE + BOTS
ROUNDS, CUT_TO, FINAL_ROUNDS, HANDS = 2, 16, 1, 2
# Each round's limit: a Swiss round's 16 all-bot tables play their 2 hands in about 8-10 s on
# an idle 2-core machine (14-17 s at a load average near 20) and must stay within it, so three
# times the idle figure; only the slow round lasts this long.
ROUND_SECONDS = 30
STARTING_SILVER = 1_000_000  # no seat ever runs short of a hand's payment
# the gateway's discard and claim timers: longer than a round, so the dawdler's held prompts
# are never answered by the gateway (a prompt issued before the deadline keeps its own timer)
TIMER_MS = 60_000
ADVANCE_SLACK_MS = 10_000  # the slow round advances within this after its deadline (about 2 s)
PLAY_SECONDS = 150  # the whole tournament, at most (about 35 s on a 2-core machine)
STALLED = pb.TOURNAMENT_STATE_STALLED


# --- the stack --------------------------------------------------------------------------------
class Stack:
    """One process of each service: wall, rules and scoring on memory stores, matchmaking and
    the gateway on SQLite files under ``tmp`` (their logs there too)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: dict[str, ServiceProcess] = {}
        self.book = AddressBook(tmp / "addresses")
        self.mm_target = self.book.player_target("matchmaking")

    def start(self) -> Stack:
        start_services(self.procs, self.tmp)
        mm_args = [
            "--gateway-addr", self.book.service_target("gateway"),
            "--tick-seconds", "0.1", "--starting-silver", str(STARTING_SILVER),
            "--max-workers", "48", "--drain-seconds", "0", "--grace-seconds", "1",
        ]  # fmt: skip
        self.procs["matchmaking"] = service_process(
            "matchmaking", self.tmp, store_url=self.mm_url, extra=mm_args
        ).start()
        for name in ("wall", "rules", "scoring"):
            self.procs[name].wait_ready(60)
        gw_args = [
            *backend_flags(self.procs),
            "--matchmaking-addr", self.book.service_target("matchmaking"),
            "--discard-ms", str(TIMER_MS), "--claim-ms", str(TIMER_MS),
            "--bot-delay-ms", "0", "--auto-play-delay-ms", "0",
            "--seat-secret", "cut-secret", "--max-workers", "48",
            "--drain-seconds", "0", "--grace-seconds", "1",
            # scripted players answer every prompt at once (see test_matchmaking_stack)
            "--seat-calls-per-second", "1000", "--seat-call-burst", "1000",
        ]  # fmt: skip
        self.procs["gateway"] = service_process(
            "gateway", self.tmp, store_url=f"sqlite:///{self.tmp / 'gateway.db'}", extra=gw_args
        ).start()
        for name in ("matchmaking", "gateway"):
            self.book.list(name, self.procs[name].wait_ready(60))
        return self

    @property
    def mm_url(self) -> str:
        return f"sqlite:///{self.tmp / 'matchmaking.db'}"

    def logs(self, chars: int = 4000) -> str:
        out = []
        for name in ("matchmaking", "gateway"):
            path = self.tmp / f"{name}.log"
            text = path.read_text(errors="replace")[-chars:] if path.exists() else ""
            out.append(f"--- {name}\n{text}")
        return "\n".join(out)

    def grep(self, name: str, *words: str) -> list[str]:
        """The lines of a service's log holding any of ``words``."""
        path = self.tmp / f"{name}.log"
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        return [line for line in lines if any(w in line for w in words)]

    def stop(self) -> None:
        stop_all(reversed(list(self.procs.values())))


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    s = Stack(tmp_path_factory.mktemp("cut-and-deadline"))
    try:
        yield s.start()
    finally:
        s.stop()


# --- the people's clients ---------------------------------------------------------------------
class Dawdler(NotingPlayer):
    """A player who answers no decision before the table's deadline (TableView.end_by_unix_ms):
    each prompt issued before it is held until it has passed, then answered at once, as is
    every later one. ``held`` counts the prompts held."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.held = 0
        self.end_by_ms = 0

    def decide(self, prompt):
        if not self.end_by_ms:
            self.end_by_ms = self.state().end_by_unix_ms
        wait = (self.end_by_ms - time.time() * 1000) / 1000
        if wait > 0:
            self.held += 1
            time.sleep(wait + 0.2)  # past the deadline on the gateway's clock too
        return super().decide(prompt)


class Person(Entrant):
    """An entrant who plays each of their tables at once (the planning bot's choices), but
    dawdles (:class:`Dawdler`) at their first table when ``slow``."""

    def __init__(self, *args, slow: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.slow = slow

    def _play(self, a: pb.Assignment) -> None:
        kind = Dawdler if self.slow and not self.played else NotingPlayer
        with player_channel(self.gateway or a.gateway_address) as channel:
            player = kind(
                channel, a.table_id, a.seat_token, seat=a.seat - 1, name=self.label,
                timeout=4.0, reconnect_for=60.0,
            )  # fmt: skip
            player.run()
        self.played.append(Played(a.table_id, a.seat - 1, player))
        self.note(f"played {a.table_id}: {len(player.log.hand_results)} hands")


# --- reading through the protos ---------------------------------------------------------------
def standings(stub, tid: str, token: str, round_no: int) -> tuple[list[pb.Standing], bool]:
    """Every page of GetStandings after ``round_no`` (0: the final ranking), and its final flag."""
    out: list[pb.Standing] = []
    page, final, total = "", False, -1
    while True:
        resp = stub.GetStandings(
            pb.GetStandingsRequest(
                tournament_id=tid, session_token=token, round=round_no, page_size=25,
                page_token=page,
            ),
            timeout=TIMEOUT,
        )  # fmt: skip
        out.extend(resp.standings)
        final, total = resp.final, resp.total
        assert resp.round == round_no or round_no == 0, resp.round
        page = resp.next_page_token
        if not page:
            break
    assert len(out) == total, (len(out), total)
    return out, final


def tables(stub, tid: str, token: str, round_no: int) -> list[pb.TournamentTable]:
    """Every page of ListTournamentTables for one round."""
    out: list[pb.TournamentTable] = []
    page, total = "", -1
    while True:
        resp = stub.ListTournamentTables(
            pb.ListTournamentTablesRequest(
                tournament_id=tid, session_token=token, round=round_no, page_size=5,
                page_token=page,
            ),
            timeout=TIMEOUT,
        )  # fmt: skip
        assert resp.round == round_no
        out.extend(resp.tables)
        total = resp.total
        page = resp.next_page_token
        if not page:
            break
    assert len(out) == total, (len(out), total)
    assert [x.index for x in out] == list(range(total))
    return out


# --- the test ---------------------------------------------------------------------------------
def test_a_cut_and_a_round_deadline(stack):
    channel = as_player(stack.mm_target)
    try:
        run_and_check(stack, pb_grpc.MatchmakingServiceStub(with_request_ids(channel)))
    finally:
        channel.close()


def run_and_check(stack: Stack, stub) -> None:
    persons = [sign_in(stub, f"Person {i + 1}") for i in range(PEOPLE)]
    creator = persons[0][1]
    t = stub.CreateTournament(
        pb.CreateTournamentRequest(
            session_token=creator, name="Cut Cup", stake=1, rounds=ROUNDS,
            hands_per_round=HANDS, bots=BOTS, cut_to=CUT_TO, final_rounds=FINAL_ROUNDS,
            round_seconds=ROUND_SECONDS,
        ),
        timeout=TIMEOUT,
    ).tournament  # fmt: skip
    tid = t.tournament_id
    assert (t.cut_to, t.final_rounds, t.round_seconds) == (CUT_TO, FINAL_ROUNDS, ROUND_SECONDS)
    for _, token in persons:
        join = pb.JoinTournamentRequest(session_token=token, tournament_id=tid)
        t = stub.JoinTournament(join, timeout=TIMEOUT).tournament
    assert t.entrant_count == ENTRANTS and len(t.entrants) == ENTRANTS and not t.lists_paged
    ids = {e.player_id for e in t.entrants}
    people = {p.player_id for p, _ in persons}
    assert people <= ids
    slow_id = persons[0][0].player_id

    deadline = time.monotonic() + PLAY_SECONDS
    clients = [
        Person(stack.mm_target, tid, token, f"Person {i + 1}", deadline, slow=i == 0)
        for i, (_, token) in enumerate(persons)
    ]
    for c in clients:
        c.start()
    stub.StartTournament(
        pb.StartTournamentRequest(session_token=creator, tournament_id=tid), timeout=TIMEOUT
    )

    def over():
        got = stub.GetTournament(
            pb.GetTournamentRequest(tournament_id=tid, session_token=creator), timeout=TIMEOUT
        ).tournament
        return got if got.state in (pb.TOURNAMENT_STATE_FINISHED, STALLED) else None

    final = probes.wait_for(over, PLAY_SECONDS, "the tournament to end", stack.logs, every=0.25)

    def report() -> str:
        traces = "\n".join(f"{c.label}: {c.error!r} {c.trace}" for c in clients)
        failed = stack.grep("matchmaking", "tournament_step_failed", "stall_reason", "Traceback")
        return f"{traces}\n{failed[-20:]}\n{stack.logs()}"

    assert final.state == pb.TOURNAMENT_STATE_FINISHED, (
        f"{pb.TournamentState.Name(final.state)}: {final.stall_reason}\n{report()}"
    )
    assert not final.failure and not final.cancelled, f"{final.failure}\n{report()}"
    for c in clients:
        c.join(30)
        assert not c.is_alive() and c.error is None, report()

    # --- the rounds: 16, 16 and 4 tables; the Swiss rounds seat everyone once -----------------
    by_round = {r: tables(stub, tid, creator, r) for r in (1, 2, 3)}
    assert [len(by_round[r]) for r in (1, 2, 3)] == [16, 16, CUT_TO // 4]
    for r in (1, 2):
        seated = Counter(p for x in by_round[r] for p in x.player_ids)
        assert set(seated) == ids and set(seated.values()) == {1}, (r, seated)
    for r, round_tables in by_round.items():
        for x in round_tables:
            assert (x.round, len(x.player_ids)) == (r, 4)
            assert x.table_id and x.finished, x
    # the small tournament's message lists the same tables
    assert list(final.tables) == [x for r in (1, 2, 3) for x in by_round[r]]

    # --- the slow table: ended by the deadline, one hand short; every other table full -------
    (slow,) = [x for x in by_round[1] if slow_id in x.player_ids]
    assert 1 <= slow.hands_played < HANDS, slow
    others = [x for r in (1, 2, 3) for x in by_round[r] if x.table_id != slow.table_id]
    assert all(x.hands_played == HANDS for x in others), [
        (x.round, x.index, x.hands_played) for x in others if x.hands_played != HANDS
    ]
    dawdler = clients[0].played[0].player
    assert isinstance(dawdler, Dawdler) and dawdler.held >= 1
    assert dawdler.end_by_ms > 0
    assert dawdler.log.table_finished is not None
    assert dawdler.log.table_finished.reason == "deadline"
    assert dawdler.log.table_finished.hands_played == slow.hands_played
    for c in clients:  # what the people's clients were told (another person may sit with them)
        for p in c.played:
            finished = p.player.log.table_finished
            want = "deadline" if p.table_id == slow.table_id else "max_hands"
            assert finished is not None and finished.reason == want, (c.label, p.table_id)
    # each person played every Swiss round, and the final when they made the cut
    after_two, final_flag = standings(stub, tid, creator, ROUNDS)
    assert not final_flag
    top = [s.player_id for s in after_two[:CUT_TO]]
    for (p, _), c in zip(persons, clients, strict=True):
        want = ROUNDS + (p.player_id in top)
        assert len(c.played) == want, (c.label, c.trace)

    # --- round progress -------------------------------------------------------------------
    progress = list(final.round_progress)
    assert [x.round for x in progress] == [1, 2, 3]
    assert [x.kind for x in progress] == [
        pb.ROUND_KIND_SWISS,
        pb.ROUND_KIND_SWISS,
        pb.ROUND_KIND_FINAL,
    ]
    for x in progress:
        assert x.tables == len(by_round[x.round]), x
        assert x.seated_at_unix_ms > 0
        assert x.deadline_unix_ms == x.seated_at_unix_ms + ROUND_SECONDS * 1000, x
        assert x.seated_at_unix_ms <= x.started_at_unix_ms <= x.finished_at_unix_ms, x
        assert x.finished_at_unix_ms <= x.advanced_at_unix_ms, x
    for before, after in itertools.pairwise(progress):
        assert before.advanced_at_unix_ms <= after.seated_at_unix_ms, (before, after)
    assert slow.round == 1
    one = progress[0]
    # the slow table outlived the deadline, and the round advanced within a few seconds of it
    assert one.finished_at_unix_ms >= one.deadline_unix_ms, one
    assert one.advanced_at_unix_ms - one.deadline_unix_ms <= ADVANCE_SLACK_MS, one
    assert dawdler.end_by_ms == one.deadline_unix_ms  # the table carried the round's deadline

    # --- the cut: the top 16 after round 2, seated by standing ---------------------------
    assert [s.rank for s in after_two] == list(range(1, ENTRANTS + 1))
    assert {s.player_id for s in after_two} == ids
    for i, x in enumerate(by_round[3]):
        assert set(x.player_ids) == set(top[4 * i : 4 * i + 4]), (i, x, top)
    assert list(final.standings[ROUNDS - 1].standings) == after_two

    # --- the final ranking ----------------------------------------------------------------
    ranking, final_flag = standings(stub, tid, creator, 0)
    assert final_flag
    assert [s.rank for s in ranking] == list(range(1, ENTRANTS + 1))
    assert Counter(s.player_id for s in ranking) == Counter(ids)
    assert {s.player_id for s in ranking[:CUT_TO]} == set(top)  # the finalists first
    chips = [s.chips for s in ranking[:CUT_TO]]
    assert chips == sorted(chips, reverse=True)
    # everyone else as they stood at the cut
    rest = [(s.player_id, s.chips) for s in ranking[CUT_TO:]]
    assert rest == [(s.player_id, s.chips) for s in after_two[CUT_TO:]]
    assert sum(s.chips for s in ranking) == 0
    assert list(final.final_ranking) == ranking
    assert {s.player_id for s in ranking if not s.bot} == people

    # --- the ledger: the people's entries, and every entrant's hands in the books -----------
    by_player = {s.player_id: s.chips for s in ranking}
    prefix = f"tournament/{tid}/"
    for player, token in persons:
        entries = stub.ListLedgerEntries(
            pb.ListLedgerEntriesRequest(session_token=token, page_size=200), timeout=TIMEOUT
        )
        mine = sum(e.amount for e in entries.entries if e.tag.startswith(prefix))
        assert mine == by_player[player.player_id], player.display_name
        account = stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=TIMEOUT)
        assert account.player.silver == STARTING_SILVER + by_player[player.player_id]
    store = open_store(stack.mm_url)
    try:
        group = tournament_group(tid)
        books = ledger.chips_by_player(store, group)
        assert {p: books.get(p, 0) for p in ids} == by_player
        swiss = Counter()
        for r in range(1, ROUNDS + 1):
            swiss.update(ledger.chips_by_player(store, group, f"{prefix}round/{r}/table/"))
        assert {p: swiss.get(p, 0) for p in ids} == {s.player_id: s.chips for s in after_two}
        reports = ledger.hand_reports(store, group)
        per_table = Counter(r.table_id for r in reports)
        for r in (1, 2, 3):
            for x in by_round[r]:
                assert per_table[x.table_id] == x.hands_played, x
        assert ledger.reconcile(store) == []
    finally:
        store.close()
    # every round's tables all created and settled (TournamentRound's counts), the past
    # rounds' too: matchmaking shows them for the current round only (convert.round_to_proto
    # gets no progress for a past round), so rounds 1 and 2 read 0 of 16 started and finished
    counts = [(x.tables, x.tables_started, x.tables_finished) for x in progress]
    assert counts == [(len(by_round[r]),) * 3 for r in (1, 2, 3)], counts
