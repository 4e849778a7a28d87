"""Matchmaking benchmark: 10,000 queued tickets formed into tables, tables per second.

Tickets are queued first (not timed); then one ``tick`` forms every table and
creates it through the allocator port (an in-process allocator, so the gateway's own speed is
not measured). Runs on the in-memory store and on SQLite (the embedded default), and times the
pure planning step alone for comparison.
"""

from __future__ import annotations

import itertools
import sys
import tempfile
import time
from pathlib import Path

from services.matchmaking import queues
from services.matchmaking.allocator import TableAllocation, TableRequest
from services.matchmaking.clock import ManualClock
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from shared.server import configure_logging
from shared.store import open_store

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
    mm = Matchmaking(store, alloc, clock, MatchmakingConfig(token_secret=b"bench"))
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
