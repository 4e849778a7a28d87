"""Clocks: the service reads time only through a ``Clock`` so tests control it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

Clock = Callable[[], float]  # seconds since the epoch


def system_clock() -> float:
    """Wall-clock seconds (the production clock)."""
    return time.time()


class ManualClock:
    """A clock that moves only when told (unit tests): ``clock.advance(15)``."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("a clock does not go back")
        with self._lock:
            self._now += seconds
            return self._now
