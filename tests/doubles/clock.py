"""A clock that moves only when told: what the matchmaking tests pass where the service takes a
:data:`~services.matchmaking.domain.clock.Clock`."""

from __future__ import annotations

import threading


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
