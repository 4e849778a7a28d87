"""A scheduler on a fake clock for the table's timers (:class:`ManualScheduler`): unit tests
advance its clock; the domain-only benchmark and the arena drain it as fast as they can. It
implements :class:`services.gateway.domain.clock.Scheduler`."""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable


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
        # Callbacks due now (delay 0), in call order: a queue instead of the heap (the engine
        # defers a step or a bot's turn twice a decision). Running order is unchanged: every
        # heap entry due now was scheduled before the clock reached now, so before any of
        # these, and runs first; the clock never moves while this queue holds anything.
        self._now_queue: deque[_Entry] = deque()

    def now_ms(self) -> int:
        return self._now

    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> _Entry:
        entry = _Entry(fn)
        delay = int(delay_ms)
        if delay <= 0:
            self._now_queue.append(entry)
        else:
            heapq.heappush(self._heap, (self._now + delay, next(self._order), entry))
        return entry

    @property
    def pending(self) -> int:
        return sum(1 for _, _, e in self._heap if not e.cancelled) + sum(
            1 for e in self._now_queue if not e.cancelled
        )

    def next_due_ms(self) -> int | None:
        queue = self._now_queue
        while queue and queue[0].cancelled:
            queue.popleft()
        if queue:
            return self._now
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def run_due(self) -> int:
        ran = 0
        heap, queue, pop, popleft = (
            self._heap,
            self._now_queue,
            heapq.heappop,
            self._now_queue.popleft,
        )
        while True:
            if heap and heap[0][0] <= self._now:
                entry = pop(heap)[2]
            elif queue:
                entry = popleft()
            else:
                return ran
            if not entry.cancelled:
                entry.fn()
                ran += 1

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
