"""Real-time scheduling for the server: one timer thread and a small worker pool.

:class:`ThreadScheduler` keeps a heap of due times; the timer thread hands each due callback to
a worker pool. :class:`LockedScheduler` is one table's view of it: its callbacks run under the
table's lock, each as one step of the table (its events written at once), and their errors
are logged, never lost silently and never killing the thread.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

import structlog

from shared.errors import DomainError

log = structlog.get_logger("mahjong.gateway.runtime")


class _Handle:
    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ThreadScheduler:
    def __init__(self, workers: int = 4) -> None:
        self._heap: list[tuple[float, int, _Handle, Callable[[], None]]] = []
        self._cv = threading.Condition()
        self._order = itertools.count()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="table")
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="table-timers", daemon=True)
        self._thread.start()

    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> _Handle:
        handle = _Handle()
        due = time.monotonic() + max(0, delay_ms) / 1000
        entry = (due, next(self._order), handle, fn)
        with self._cv:
            heapq.heappush(self._heap, entry)
            if self._heap[0] is entry:  # due before all others: the timer thread waits less
                self._cv.notify()
        return handle

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._stop and (not self._heap or self._heap[0][0] > time.monotonic()):
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cv.wait(timeout)
                if self._stop:
                    return
                _, _, handle, fn = heapq.heappop(self._heap)
            if not handle.cancelled:
                try:
                    self._pool.submit(fn)
                except RuntimeError:  # pool shut down
                    return

    def close(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()
        self._pool.shutdown(wait=False, cancel_futures=True)


class LockedScheduler:
    """One table's scheduler: callbacks run under ``lock``; errors are logged."""

    def __init__(
        self,
        base: ThreadScheduler,
        lock: threading.RLock,
        step: Callable[[], AbstractContextManager[None]],
        table_id: str,
    ) -> None:
        self.base = base
        self.lock = lock
        self.step = step  # what a callback runs in: one step of the table (its writes at once)
        self.table_id = table_id

    def now_ms(self) -> int:
        return self.base.now_ms()

    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> _Handle:
        return self.base.call_later(
            delay_ms, lambda: run_logged(self.lock, self.step, self.table_id, fn)
        )


def run_logged(
    lock: threading.RLock,
    step: Callable[[], AbstractContextManager[None]],
    table_id: str,
    fn: Callable[..., None],
    *args: Any,
) -> None:
    """Run ``fn(*args)`` under a table's ``lock`` as one ``step`` of it, for nobody waiting on
    its answer (a timer, the engine steps after an answered action): its errors are logged,
    never raised."""
    with lock:
        try:
            with step():
                fn(*args)
        except DomainError as exc:  # its step's events were not written (logged there)
            log.warning("table_callback_failed", table=table_id, error=repr(exc))
        except Exception as exc:  # a timer must never die silently
            log.exception("table_callback_failed", table=table_id, error=repr(exc))
