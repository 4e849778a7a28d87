"""The scheduler the table's timers go through, injectable so tests never sleep.

The engine and the session only ever call :meth:`Scheduler.now_ms` and
:meth:`Scheduler.call_later`. :class:`services.gateway.runtime.ThreadScheduler` runs the
callbacks on real time in the server; the tests' ``tests.doubles.scheduler.ManualScheduler``
runs them when told to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Timer(Protocol):
    def cancel(self) -> None: ...


class Scheduler(Protocol):
    def now_ms(self) -> int: ...

    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> Timer: ...
