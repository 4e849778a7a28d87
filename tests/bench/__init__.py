"""Benchmarks: ``make bench`` (``python -m tests.bench``) runs every ``bench_<area>.py`` module's
``main()``. Each prints its figures and ratios; speed targets live here, never in timed tests.
``MAHJONG_BENCH_SECONDS`` sets the time per measurement (default 1.5)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable


def bench_seconds() -> float:
    return float(os.environ.get("MAHJONG_BENCH_SECONDS", "1.5"))


def rate(fn: Callable[[], int], seconds: float | None = None) -> tuple[float, int]:
    """Run ``fn`` (which returns how many units it did) repeatedly for about ``seconds``;
    returns (units per second, units)."""
    budget = bench_seconds() if seconds is None else seconds
    fn()  # warm up
    done = 0
    start = time.perf_counter()
    while True:
        done += fn()
        elapsed = time.perf_counter() - start
        if elapsed >= budget:
            return done / elapsed, done


def concurrent_rate(make_worker: Callable[[int], Callable[[], int]], clients: int) -> float:
    """Units per second with ``clients`` threads. ``make_worker(i)`` runs in thread ``i`` (open
    its own channel there) and returns the unit of work, a function returning units done."""
    stop = threading.Event()
    counts = [0] * clients
    ready = threading.Barrier(clients + 1)

    def run(i: int) -> None:
        work = make_worker(i)
        work()  # warm up
        ready.wait()
        while not stop.is_set():
            counts[i] += work()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    ready.wait()
    base = sum(counts)
    start = time.perf_counter()
    stop.wait(bench_seconds())
    done = sum(counts) - base
    elapsed = time.perf_counter() - start
    stop.set()
    for t in threads:
        t.join()
    return done / elapsed
