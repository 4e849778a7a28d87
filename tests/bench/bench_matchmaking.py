"""Matchmaking benchmark: 10,000 queued tickets formed into tables, tables per second; and the
ledger behind real matchmaking processes on PostgreSQL.

Tickets are queued first (not timed); then one ``tick`` forms every table and
creates it through the allocator port (an in-process allocator, so the gateway's own speed is
not measured). Runs on the in-memory store and on SQLite (the embedded default), and times the
pure planning step alone for comparison.

The replicas part (when the test PostgreSQL server is reachable): RecordHand calls per second
over gRPC from 8 client threads (each its own table and players) to 1 matchmaking process,
then to 2 on the same database in the same run; and GetBalances' latency (median) for an
account with 10 entries and one with 10,000 (the balance is one row: it should not grow). The
replicas start first; the readers sign in over gRPC (a player reads their own silver with their
session), and every account is funded before its hands are recorded (a loser pays only what
they hold), none of it timed.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mahjong.matchmaking.v1 import matchmaking_pb2 as mpb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as mpb_grpc

from services.matchmaking import allocated_tables, ledger, queues
from services.matchmaking.allocator import TableAllocation, TableRequest
from services.matchmaking.clock import ManualClock
from services.matchmaking.ledger import HandReport
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from shared.request_ids import with_request_ids
from shared.server import configure_logging, internal_metadata
from shared.store import open_store
from shared.supervisor import ServiceProcess, run_token
from tests.bench import concurrent_rate, postgres_url
from tests.support.identity import issuer_config, sign_in
from tests.support.tls import as_player, to_process

TICKETS = 10_000
STAKES = (1, 2, 4, 8)  # four queues of one ruleset, by level


class CountingAllocator:
    """Hands out table ids in memory (the bench measures matchmaking, not the gateway)."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.created = 0

    def create_table(self, request: TableRequest) -> TableAllocation:
        self.created += 1
        table_id = f"t{next(self._ids)}"
        return TableAllocation(table_id, tuple(f"tok-{table_id}-{i}" for i in range(4)), "gw:1")


def run(store_url: str, tickets: int = TICKETS) -> dict[str, float]:
    store = open_store(store_url)
    clock = ManualClock()
    alloc = CountingAllocator()
    mm = Matchmaking(
        store, alloc, clock, MatchmakingConfig(issuers=(issuer_config(),), token_secret=b"bench")
    )
    t0 = time.perf_counter()
    for i in range(tickets):
        # Straight into the queues (registration and level checks are not what is measured).
        stake = STAKES[i % len(STAKES)]
        queues.join(store, f"tk-{i}", f"p-{i}", f"player {i}", "shanghai-qiaoma", stake, clock())
        if i % 97 == 0:
            clock.advance(0.01)
    queued = time.perf_counter() - t0
    t1 = time.perf_counter()
    mm.tick()
    formed = time.perf_counter() - t1
    assigned = sum(1 for _, rec in store.scan(queues.TICKETS) if b'"state":"assigned"' in rec.value)
    store.close()
    return {
        "tables": alloc.created,
        "assigned": assigned,
        "seconds": formed,
        "tables_per_s": alloc.created / formed,
        "join_per_s": tickets / queued,
    }


def plan_only(tickets: int = TICKETS) -> dict[str, float]:
    waiting = [(f"t{i}", i * 0.001) for i in range(tickets)]
    t0 = time.perf_counter()
    reps = 20
    for _ in range(reps):
        tables = queues.plan_tables(waiting, 1e9, 30.0)
    seconds = (time.perf_counter() - t0) / reps
    return {"tables": len(tables), "seconds": seconds, "tables_per_s": len(tables) / seconds}


CLIENTS = 8
BIG = 10_000
FUNDS = 10**9  # silver granted to each bench account before the hands
NO_SYNC_COMMIT = "options=-c%20synchronous_commit%3Doff"


def _table(i: int) -> tuple[str, str, tuple[str, ...]]:
    return f"bench-t{i}", f"quick/bench{i}", tuple(f"bench-p{i}-{s}" for s in range(4))


def _replica(url: str, log_dir: Path, name: str):
    from tests.support.stacks import service_process

    args = ["--gateway-addr", "127.0.0.1:1", "--replica-id", name, "--drain-seconds", "0"]
    args += ["--log-level", "warning", "--max-workers", "32"]
    args += ["--flood-player-rate", "0", "--flood-address-rate", "0"]  # one player reads 300x
    return service_process("matchmaking", log_dir, store_url=url, extra=args, log_name=name)


def record_hand_rate(procs: list[ServiceProcess], run: str) -> float:
    """RecordHand calls per second, ``CLIENTS`` threads spread over ``procs``, each calling as
    the gateway does (its certificate on the internal port, and the internal token)."""
    metadata = internal_metadata(run_token())
    counter = itertools.count()

    def worker(i: int):
        channel = to_process(procs[i % len(procs)], "gateway")
        stub = mpb_grpc.MatchmakingServiceStub(channel)
        table_id, tag, ids = _table(i)

        def one() -> int:
            n = next(counter)
            pay = [-1, -1, -1, -1]
            pay[n % 4] = 3
            req = mpb.RecordHandRequest(
                hand_id=f"{run}-{n}", table_id=table_id, tag=tag, player_ids=ids, payments=pay
            )
            stub.RecordHand(req, timeout=10, metadata=metadata)
            return 1

        return one

    return concurrent_rate(worker, CLIENTS)


def balance_latency_us(address: str, reader: tuple[str, str], reads: int = 300) -> float:
    """GetBalances' median latency for a player reading their own silver with their session."""
    channel = as_player(address)  # a player's read, on the public port (server TLS)
    stub = mpb_grpc.MatchmakingServiceStub(channel)
    player_id, session = reader
    req = mpb.GetBalancesRequest(session_token=session, player_ids=[player_id])
    (own,) = stub.GetBalances(req, timeout=10).balances
    assert own.own and own.silver > 0, own
    times = []
    for _ in range(reads):
        t0 = time.perf_counter()
        stub.GetBalances(req, timeout=10)
        times.append(time.perf_counter() - t0)
    channel.close()
    return statistics.median(times) * 1e6


def _signed_in(address: str, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(player_id, session_token)`` of each name, signed in over gRPC as a new identity."""
    channel = with_request_ids(as_player(address))
    stub = mpb_grpc.MatchmakingServiceStub(channel)
    try:
        out = []
        for name in names:
            player, session = sign_in(stub, name)
            out.append((player.player_id, session))
        return out
    finally:
        channel.close()


def _hands(store, prefix: str, ids: tuple[str, ...], count: int) -> None:
    """``count`` settled hands of the four players (seat 0 wins 3), not timed."""
    for j in range(count):
        report = HandReport(f"{prefix}-{j}", "t", "x", ids, (3, -1, -1, -1))
        ledger.record_hand(store, report, 1.0)


def replicas_figures(url: str, log_dir: Path) -> dict[str, float]:
    store = open_store(url, pool_size=2)
    lazy = open_store(f"{url}?{NO_SYNC_COMMIT}", pool_size=4)
    procs = []
    try:
        for i in range(CLIENTS):
            table_id, tag, ids = _table(i)
            allocated_tables.record(store, allocated_tables.AllocatedTable(table_id, tag, ids, ""))
            for pid in ids:  # a loser pays only what they hold: every seat is funded
                ledger.grant(store, pid, "bench", FUNDS, 1.0)
        procs = [_replica(url, log_dir, n).start() for n in ("mm-a", "mm-b")]
        for p in procs:
            p.wait_ready(60)
        a = procs[0].address
        # Players sign in over gRPC (GetBalances needs a session; a player sees their own
        # silver), then are funded and given their hands (not timed).
        few = _signed_in(a, tuple(f"bench-f{s}" for s in range(4)))
        many = _signed_in(a, tuple(f"bench-m{s}" for s in range(4)))
        for pid, _ in few + many:
            ledger.grant(lazy, pid, "bench", FUNDS, 1.0)
        _hands(lazy, "few", tuple(pid for pid, _ in few), 10)
        _hands(lazy, "many", tuple(pid for pid, _ in many), BIG)  # 10,000 entries to read
        out = {
            "RecordHand/s, 1 replica": record_hand_rate(procs[:1], "one"),
            "RecordHand/s, 2 replicas": record_hand_rate(procs, "two"),
            "balance, 10 entries (us)": balance_latency_us(a, few[0]),
            f"balance, {BIG:,} entries (us)": balance_latency_us(a, many[0]),
        }
        assert ledger.balance(store, many[0][0]) > FUNDS  # seat 0 won every hand
        assert len(ledger.entries(store, many[0][0])) >= BIG  # + the grants
        assert all(ledger.hands_of_table(store, _table(i)[0]) for i in range(CLIENTS))
        assert ledger.reconcile(store) == []
        return out
    finally:
        for p in procs:
            p.stop()
        lazy.close()
        store.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.bench.bench_matchmaking [TICKETS]``; the bench runner calls main()."""
    tickets = int(argv[0]) if argv else TICKETS
    configure_logging("warning")  # one info line per table would be measured too
    print(f"matchmaking: {tickets} queued tickets in {len(STAKES)} queues formed into tables")
    pure = plan_only(tickets)
    print(
        f"  planning only (pure)      {pure['tables']:>6} tables  {pure['seconds'] * 1000:8.2f} ms"
        f"  {pure['tables_per_s']:>12,.0f} tables/s"
    )
    results = {"memory": run("memory://", tickets)}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = run(f"sqlite:///{Path(tmp) / 'bench.db'}", tickets)
    for name, r in results.items():
        assert r["assigned"] == tickets, r
        print(
            f"  {name:<6} store, full path {r['tables']:>6} tables  {r['seconds'] * 1000:8.1f} ms"
            f"  {r['tables_per_s']:>12,.0f} tables/s   (queueing {r['join_per_s']:,.0f} tickets/s)"
        )
    mem, sql = results["memory"]["tables_per_s"], results["sqlite"]["tables_per_s"]
    print(
        f"  ratio memory/sqlite {mem / sql:.1f}x; "
        f"pure planning is {pure['tables_per_s'] / mem:.0f}x the full path on memory"
    )
    print(f"matchmaking replicas on PostgreSQL: RecordHand over gRPC, {CLIENTS} client threads")
    with postgres_url() as url, tempfile.TemporaryDirectory() as logs:
        if url is not None:
            r = replicas_figures(url, Path(logs))
            for name, value in r.items():
                print(f"  {name:<30}{value:>12,.0f}")
            one, two = r["RecordHand/s, 1 replica"], r["RecordHand/s, 2 replicas"]
            few, many = r["balance, 10 entries (us)"], r[f"balance, {BIG:,} entries (us)"]
            print(f"  RecordHand 2 replicas / 1: {two / one:.2f}x")
            print(f"  balance read with {BIG:,} entries / with 10: {many / few:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
