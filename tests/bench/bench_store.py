"""Store and ledger benchmark, the backends side by side (memory for reference, SQLite, and
PostgreSQL in a throw-away database of the test server: as configured, and with
``synchronous_commit`` off, the durability class of the SQLite default).

* store operations per second, one thread: ``update`` (read-modify-write of one record),
  ``append`` (to one log), ``append_many`` (a table step: 4 entries and a record in one
  transaction, counted in entries), ``get`` (one record); and ``update`` from 4 threads on 4
  keys;
* the ledger: a balance read's latency (median of repeated reads) with 10 and with 10,000
  entries on the account — the goal is that it does not depend on the count;
* the ledger's RecordHand (``ledger.record_hand``: a new hand with 4 entries, one transaction)
  per second, 1 thread and 4 threads.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from collections.abc import Callable

from infra.store import Store, open_store
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HandReport
from tests.bench import bench_seconds, concurrent_rate, postgres_url, rate

NO_SYNC_COMMIT = "options=-c%20synchronous_commit%3Doff"
PLAYERS = ("a", "b", "c", "d")
BIG = 10_000


def store_ops(store: Store) -> dict[str, float]:
    store.put("bench", "k", b"0")
    store.append("bench-log", b"x")
    n = iter(range(10**9))

    def update() -> int:
        store.update("bench", "k", lambda old: (old, None))
        return 1

    def step() -> int:  # a table step: 4 events and a request record, one transaction
        i = next(n)
        entries = [b"entry %d/%d" % (i, k) for k in range(4)]
        store.append_many("bench-log", entries, records=[("bench-req", str(i), b"r")])
        return len(entries)

    out = {
        "update": rate(update)[0],
        "append": rate(lambda: (store.append("bench-log", b"entry %d" % next(n)), 1)[1])[0],
        "append_many (entries)": rate(step)[0],
        "get": rate(lambda: (store.get("bench", "k"), 1)[1])[0],
    }

    def worker(i: int) -> Callable[[], int]:
        key = f"k{i}"
        store.put("bench", key, b"0")
        return lambda: (store.update("bench", key, lambda old: (old, None)), 1)[1]

    out["update x4"] = concurrent_rate(worker, 4)
    return out


def report(hand_id: str, winner: str = "a") -> HandReport:
    payments = tuple(3 if p == winner else -1 for p in PLAYERS)
    return HandReport(hand_id, "t", "quick/m", PLAYERS, payments)


def fill(store: Store, prefix: str, hands: int, threads: int = 4) -> None:
    """``hands`` hands on the four players, recorded from ``threads`` threads."""

    def work(i: int) -> None:
        for j in range(i, hands, threads):
            ledger.record_hand(store, report(f"{prefix}-{j}", PLAYERS[j % 4]), float(j))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def read_latency_us(store: Store, account: str, reads: int = 300) -> float:
    ledger.balance(store, account)
    times = []
    for _ in range(reads):
        t0 = time.perf_counter()
        ledger.balance(store, account)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def ledger_figures(store: Store, fill_store: Store) -> dict[str, float]:
    """``fill_store``: the same database, for filling it (PostgreSQL without commit waits)."""
    few = [
        HandReport(f"few-{j}", "t", "quick/m", ("f1", "f2", "f3", "f4"), (3, -1, -1, -1))
        for j in range(10)
    ]
    for j, r in enumerate(few):
        ledger.record_hand(store, r, float(j))
    fill(fill_store, "many", BIG)
    assert len(ledger.entries(store, "a")) == BIG
    assert ledger.reconcile(store) == []
    out = {
        "balance 10 entries (us)": read_latency_us(store, "f1"),
        f"balance {BIG:,} entries (us)": read_latency_us(store, "a"),
    }
    n = iter(range(10**9))
    out["RecordHand/s"] = rate(
        lambda: (ledger.record_hand(store, report(f"r-{next(n)}"), 1.0), 1)[1]
    )[0]
    out["RecordHand/s x4"] = concurrent_rate(
        lambda i: lambda: (ledger.record_hand(store, report(f"c{i}-{next(n)}"), 1.0), 1)[1], 4
    )
    return out


def main() -> int:
    print(f"store operations per second; ledger balance reads; RecordHand ({bench_seconds()} s)")
    columns: dict[str, tuple[dict[str, float], dict[str, float]]] = {}
    memory = open_store("memory://")
    columns["memory"] = (store_ops(memory), ledger_figures(memory, memory))
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = open_store(f"sqlite:///{tmp}/bench.db")
        columns["SQLite"] = (store_ops(sqlite), ledger_figures(sqlite, sqlite))
        sqlite.close()
    with postgres_url() as url:
        if url is not None:
            pg = open_store(url)
            lazy = open_store(f"{url}?{NO_SYNC_COMMIT}")
            columns["PostgreSQL"] = (store_ops(pg), ledger_figures(pg, lazy))
            pg.close()
            lazy.close()
    with postgres_url() as url:
        if url is not None:
            lazy = open_store(f"{url}?{NO_SYNC_COMMIT}")
            columns["PG no sync"] = (store_ops(lazy), ledger_figures(lazy, lazy))
            lazy.close()
    names = list(columns)
    print(f"  {'':<28}" + "".join(f"{n:>13}" for n in names))
    for part in (0, 1):
        for row in columns[names[0]][part]:
            unit = "" if "(us)" in row else "/s" if part == 0 else ""
            cells = "".join(f"{columns[n][part][row]:>13,.0f}" for n in names)
            print(f"  {row + unit:<28}{cells}", flush=True)
    for n in names:
        few, many = (columns[n][1][k] for k in list(columns[n][1])[:2])
        print(f"  {n}: balance read with {BIG:,} entries / with 10: {many / few:.2f}x")
    for n in names:
        ops = columns[n][0]
        print(
            f"  {n}: entries per second in batches of 4 (with a record) / one by one: "
            f"{ops['append_many (entries)'] / ops['append']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
