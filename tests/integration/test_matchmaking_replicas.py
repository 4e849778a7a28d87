"""Matchmaking and the gateway's outbox at more than one replica on one PostgreSQL database,
every replica a real process.

* Two matchmaking replicas started at once on an empty database: players registered and
  queued through both, a room whose four players press Start on both replicas at once, a
  bot tournament created on one and started on the other; every quick-match, room and
  tournament table is formed once (one allocation per table, tables counted over both
  replicas' metrics), the ledger reconciles. Then the replica holding the ticker duty is
  SIGKILLed: the other takes the duty within the lease and forms the next tables; stopped
  with SIGTERM, a holder hands the duty over at once.
* Three gateway replicas' outbox senders (spawned processes) on one store deliver 240 reports
  to a matchmaking process's internal port (mutual TLS, the gateway's certificate): each is
  delivered once (matchmaking counts no repeat), every hand
  is in the ledger once, the books reconcile.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.request_ids import with_request_ids
from infra.store import open_store
from infra.supervisor import ServiceProcess, run_token, stop_all
from services.gateway.outbox import CLAIM_PREFIX
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.storage import queue_records, table_records
from services.matchmaking.storage.duty import PREFIX, TICKER
from services.matchmaking.storage.table_records import TableRecords
from tests.support import outbox_workers, probes
from tests.support.address_book import AddressBook
from tests.support.concurrency import run_processes
from tests.support.identity import sign_in
from tests.support.probes import fetch_metrics, metric_value
from tests.support.stacks import backend_flags, service_process, start_services
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

TIMEOUT = 10.0
LEASE_MS = 2000
HANDS_TOTAL = "mahjong_matchmaking_hands_recorded_total"
TABLES_TOTAL = "mahjong_matchmaking_tables_total"


class Replicas:
    """wall, rules, scoring and a gateway (SQLite) as processes; matchmaking replicas ``mm-a``
    and ``mm-b`` on one PostgreSQL database. Every process binds ports the OS picks; the gateway
    and matchmaking, which call each other, are given each other's address files (``book``,
    tests/support/address_book.py)."""

    def __init__(self, tmp: Path, url: str) -> None:
        self.tmp, self.url = tmp, url
        self.procs: dict[str, ServiceProcess] = {}
        self.book = AddressBook(tmp / "addresses")
        self.mm = ("mm-a", "mm-b")

    def start(self) -> Replicas:
        start_services(self.procs, self.tmp)
        for name in self.mm:  # at once, on an empty database
            self.procs[name] = self._matchmaking(name).start()
        for name in ("wall", "rules", "scoring"):
            self.procs[name].wait_ready(60)
        gw_args = [
            *backend_flags(self.procs),
            "--matchmaking-addr", self.book.service_target("matchmaking"),
            "--discard-ms", "5000", "--claim-ms", "2000", "--auto-play-delay-ms", "0",
            "--max-workers", "48", "--drain-seconds", "0", "--grace-seconds", "1",
        ]  # fmt: skip
        gateway = service_process(
            "gateway", self.tmp, store_url=f"sqlite:///{self.tmp / 'gateway.db'}", extra=gw_args
        )
        self.procs["gateway"] = gateway.start()
        for name in (*self.mm, "gateway"):
            self.book.list(name, self.procs[name].wait_ready(60))
        return self

    def _matchmaking(self, name: str) -> ServiceProcess:
        args = [
            "--gateway-addr", self.book.service_target("gateway"), "--replica-id", name,
            "--lease-ms", str(LEASE_MS), "--tick-seconds", "0.1", "--bot-fill-seconds", "600",
            "--queue-one-per-address", "off",  # every player joins from loopback
            "--max-workers", "48", "--drain-seconds", "0", "--grace-seconds", "1",
        ]  # fmt: skip
        return service_process(
            "matchmaking", self.tmp, store_url=self.url, extra=args, metrics=True, log_name=name
        )

    def stub(self, name: str) -> pb_grpc.MatchmakingServiceStub:
        return pb_grpc.MatchmakingServiceStub(with_request_ids(as_player(self.procs[name].address)))

    def metric(self, name: str, sample: str, **labels: str) -> float:
        return metric_value(fetch_metrics(self.procs[name].ports.metrics), sample, **labels)

    def logs(self) -> str:
        out = []
        for name in (*self.mm, "gateway"):
            path = self.tmp / f"{name}.log"
            if path.exists():
                out.append(f"--- {name}\n{path.read_text(errors='replace')[-2500:]}")
        return "\n".join(out)

    def stop(self) -> None:
        stop_all(reversed(list(self.procs.values())))


@pytest.fixture
def replicas(tmp_path, postgres_url):
    r = Replicas(tmp_path, postgres_url)
    try:
        yield r.start()
    finally:
        r.stop()


def wait_for(predicate, timeout: float, what: str, replicas: Replicas):
    return probes.wait_for(predicate, timeout, what, replicas.logs)


def register(stub, name: str) -> str:
    return sign_in(stub, name)[1]


def assignment(stub, token: str, ticket_id: str) -> pb.Ticket:
    """The ticket once assigned, watched on ``stub``'s replica."""
    req = pb.WatchAssignmentsRequest(session_token=token, ticket_id=ticket_id)
    for msg in stub.WatchAssignments(req, timeout=30):
        if msg.ticket.state == pb.TICKET_STATE_ASSIGNED:
            return msg.ticket
    raise AssertionError(f"ticket {ticket_id} ended unassigned")


def allocations(store, prefix: str) -> list[allocated_tables.AllocatedTable]:
    found = [
        allocated_tables.find(TableRecords(store), key)
        for key, _ in store.scan(table_records.TABLES)
    ]
    return [t for t in found if t is not None and t.tag.startswith(prefix)]


def queue_through(replicas: Replicas, players: int) -> list[pb.Ticket]:
    """``players`` people registered and queued alternately through both replicas, each
    ticket watched on the other replica until it is assigned."""
    stubs = [replicas.stub(n) for n in replicas.mm]
    joined = []
    for i in range(players):
        stub = stubs[i % 2]
        token = register(stub, f"Q{i}")
        req = pb.JoinQueueRequest(session_token=token, stake=1)
        joined.append((token, stub.JoinQueue(req, timeout=TIMEOUT).ticket.ticket_id))
    return [assignment(stubs[(i + 1) % 2], tok, tid) for i, (tok, tid) in enumerate(joined)]


def check_quick_tables(tickets: list[pb.Ticket]) -> set[str]:
    by_table: dict[str, set[int]] = {}
    for t in tickets:
        by_table.setdefault(t.assignment.table_id, set()).add(t.assignment.seat)
    assert all(len(seats) == 4 for seats in by_table.values()), by_table
    assert len(by_table) == len(tickets) // 4
    return set(by_table)


def press_start_at_once(replicas: Replicas) -> str:
    """A room of four people (joined through both replicas) whose members all press Start at
    the same moment, two on each replica; the room's table id as everyone sees it."""
    a, b = (replicas.stub(n) for n in replicas.mm)
    owner = register(a, "Host")
    opened = a.OpenRoom(pb.OpenRoomRequest(session_token=owner, max_hands=1), timeout=TIMEOUT)
    code = opened.room.code
    guests = [register(s, f"Guest {i}") for i, s in enumerate((b, a, b))]
    for tok, stub in zip(guests, (b, a, b), strict=True):
        stub.JoinRoom(pb.JoinRoomRequest(session_token=tok, code=code), timeout=TIMEOUT)
    b.SetRoomStake(pb.SetRoomStakeRequest(session_token=owner, code=code, stake=1), timeout=TIMEOUT)
    for tok in guests:
        a.AnswerRoomStake(pb.AnswerRoomStakeRequest(session_token=tok, code=code, accept=True))
    go = threading.Barrier(4)
    seen: list[str] = []

    def press(token: str, stub) -> None:
        go.wait(10)
        stub.PressStart(pb.PressStartRequest(session_token=token, code=code), timeout=TIMEOUT)

    threads = [
        threading.Thread(target=press, args=(tok, stub))
        for tok, stub in zip([owner, *guests], (a, b, a, b), strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)

    def playing():
        for tok, stub in zip([owner, *guests], (a, b, a, b), strict=True):
            room = stub.GetRoom(pb.GetRoomRequest(session_token=tok, code=code)).room
            if room.state != pb.ROOM_STATE_PLAYING:
                return None
            seen.append(room.assignment.table_id)
        return True

    wait_for(playing, 30, "the room to play", replicas)
    assert len(set(seen[-4:])) == 1 and seen[-1]
    return code


def test_two_matchmaking_replicas_form_every_table_once(replicas):
    store = open_store(replicas.url, pool_size=2)
    try:
        a, b = (replicas.stub(n) for n in replicas.mm)
        # Quick match: 12 people through both replicas make three tables, each formed once.
        quick = check_quick_tables(queue_through(replicas, 12))
        assert {t.table_id for t in allocations(store, "quick/")} == quick
        assert not list(store.scan(queue_records.MATCHES))  # no match left half-formed
        # A room whose four members press Start on both replicas at once: one table.
        code = press_start_at_once(replicas)
        assert len(allocations(store, f"room/{code}")) == 1
        # A bot tournament created on one replica and started on the other: 4 tables per
        # round, 2 rounds, each table formed once, every hand recorded once.
        creator = register(a, "Organiser")
        t = a.CreateTournament(
            pb.CreateTournamentRequest(
                session_token=creator, name="Two replicas", stake=1, rounds=2,
                hands_per_round=1, bots=16,
            ),
            timeout=TIMEOUT,
        ).tournament  # fmt: skip
        b.StartTournament(
            pb.StartTournamentRequest(session_token=creator, tournament_id=t.tournament_id),
            timeout=TIMEOUT,
        )

        def finished():
            got = b.GetTournament(
                pb.GetTournamentRequest(tournament_id=t.tournament_id, session_token=creator)
            )
            return got.tournament if got.tournament.state == pb.TOURNAMENT_STATE_FINISHED else None

        final = wait_for(finished, 180, "the tournament's final ranking", replicas)
        tables = allocations(store, f"tournament/{t.tournament_id}/")
        assert len(tables) == 8 == len(final.tables)
        assert {x.table_id for x in final.tables} == {x.table_id for x in tables}
        for x in tables:
            assert ledger.hands_of_table(store, x.table_id) == 1
        assert ledger.reconcile(store) == []
        counted = {
            kind: sum(replicas.metric(n, TABLES_TOTAL, kind=kind) for n in replicas.mm)
            for kind in ("quick", "room", "tournament")
        }
        assert counted == {"quick": 3, "room": 1, "tournament": 8}, counted
        assert sum(replicas.metric(n, HANDS_TOTAL, result="repeat") for n in replicas.mm) == 0

        # The replica holding the ticker duty dies: the other takes it within the lease.
        lease = store.get_lease(PREFIX + TICKER)
        assert lease is not None and lease.held and lease.owner in replicas.mm
        killed = replicas.procs[lease.owner]
        replicas.book.unlist(lease.owner)  # the gateway reports to the other meanwhile
        killed.proc.kill()
        killed.proc.wait()
        gone = time.monotonic()
        other = next(n for n in replicas.mm if n != lease.owner)

        def taken():
            now = store.get_lease(PREFIX + TICKER)
            return now if now.owner == other and now.held else None

        after = wait_for(taken, LEASE_MS / 1000 + 5, "the ticker duty to move", replicas)
        took = time.monotonic() - gone
        assert took <= LEASE_MS / 1000 + 0.5, f"took {took:.2f} s for a {LEASE_MS} ms lease"
        assert after.epoch > lease.epoch
        # The survivor ticks: four more people queued through it get their table.
        stub = replicas.stub(other)
        joined = []
        for i in range(4):
            token = register(stub, f"Late {i}")
            ticket = stub.JoinQueue(pb.JoinQueueRequest(session_token=token, stake=1)).ticket
            joined.append((token, ticket.ticket_id))
        late = [assignment(stub, tok, tid) for tok, tid in joined]
        assert len(check_quick_tables(late)) == 1
        assert len(allocations(store, "quick/")) == 4

        # The killed one comes back; the holder stops (SIGTERM) and hands the duty over at
        # once, without waiting for the lease.
        replicas.procs[lease.owner] = replicas._matchmaking(lease.owner).start().wait_ready(60)
        replicas.book.list(lease.owner, replicas.procs[lease.owner])
        held = store.get_lease(PREFIX + TICKER)
        assert held.owner == other
        stopped = time.monotonic()
        replicas.book.unlist(other)
        replicas.procs[other].stop()
        wait_for(
            lambda: store.get_lease(PREFIX + TICKER).owner == lease.owner, 5, "handover", replicas
        )
        handover = time.monotonic() - stopped
        assert handover < LEASE_MS / 1000, f"handover took {handover:.2f} s"
        print(
            f"ticker duty: SIGKILL to takeover {took:.2f} s, SIGTERM to handover {handover:.2f} s"
        )
    finally:
        store.close()


def test_outbox_senders_of_three_gateway_replicas_deliver_each_report_once(tmp_path, postgres_url):
    tables, hands = 40, 5
    store = open_store(postgres_url, pool_size=2)
    mm = service_process(
        "matchmaking",
        tmp_path,
        store_url=postgres_url,
        metrics=True,
        extra=["--gateway-addr", "127.0.0.1:1", "--drain-seconds", "0"],
    )
    try:
        mm.start().wait_ready(60)
        outbox_workers.seed(store, tables, hands)  # the tables' owners wrote their reports
        results = run_processes(
            outbox_workers.send_process, postgres_url, 3, extra=(mm.internal_address, run_token())
        )
        sent = {name: count for name, count in results}
        assert outbox_workers.pending(store) == 0
        assert sum(sent.values()) == tables * (hands + 1), sent
        text = fetch_metrics(mm.ports.metrics)
        assert metric_value(text, HANDS_TOTAL, result="new") == tables * hands
        assert metric_value(text, HANDS_TOTAL, result="repeat") == 0
        outbox_workers.check_books(store, tables, hands)
        assert not [x for x in store.scan_leases(CLAIM_PREFIX) if x.held]  # claims released
    finally:
        mm.stop()
        store.close()
