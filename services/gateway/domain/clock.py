"""Clocks and schedulers for the table's timers, injectable so tests never sleep.

The engine and the session only ever call :meth:`Scheduler.now_ms` and
:meth:`Scheduler.call_later`. :class:`ManualScheduler` runs callbacks when told to (unit tests
advance its clock; the domain-only benchmark drains it as fast as it can);
:class:`services.gateway.runtime.ThreadScheduler` runs them on real time in the server.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Protocol


class Timer(Protocol):
    def cancel(self) -> None: ...


class Scheduler(Protocol):
    def now_ms(self) -> int: ...

    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> Timer: ...


class _Entry:
    __slots__ = ("cancelled", "fn")

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualScheduler:
    """A scheduler on a fake clock. ``advance(ms)`` moves time and runs what fell due;
    ``run_due()`` runs what is due now; ``drain()`` runs everything, moving the clock to each
    callback's time (a whole table to its end, without waiting)."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = start_ms
        self._heap: list[tuple[int, int, _Entry]] = []
        self._order = itertools.count()

    def now_ms(self) -> int:
        return self._now

    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> _Entry:
        entry = _Entry(fn)
        heapq.heappush(self._heap, (self._now + max(0, int(delay_ms)), next(self._order), entry))
        return entry

    @property
    def pending(self) -> int:
        return sum(1 for _, _, e in self._heap if not e.cancelled)

    def next_due_ms(self) -> int | None:
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def run_due(self) -> int:
        ran = 0
        while self._heap and self._heap[0][0] <= self._now:
            _, _, entry = heapq.heappop(self._heap)
            if not entry.cancelled:
                entry.fn()
                ran += 1
        return ran

    def advance(self, ms: int) -> int:
        """Move the clock ``ms`` forward, running callbacks in time order as they fall due."""
        target = self._now + ms
        ran = 0
        while True:
            due = self.next_due_ms()
            if due is None or due > target:
                break
            self._now = max(self._now, due)
            ran += self.run_due()
        self._now = target
        return ran

    def drain(self, limit: int = 10_000_000) -> int:
        """Run every callback (jumping the clock), until none is left or ``limit`` ran."""
        ran = 0
        while ran < limit:
            due = self.next_due_ms()
            if due is None:
                break
            self._now = max(self._now, due)
            ran += self.run_due()
        return ran
