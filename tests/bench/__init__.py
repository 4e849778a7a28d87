"""Benchmarks: ``make bench`` (``python -m tests.bench``) runs every ``bench_<area>.py`` module's
``main()``. Each prints its figures and ratios; speed targets live here, never in timed tests.
``MAHJONG_BENCH_SECONDS`` sets the time per measurement (default 1.5)."""

from __future__ import annotations

import os
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
