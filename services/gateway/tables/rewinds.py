"""Tables rewound: a step the store could not take (unreachable; written whole or not at all,
so not at all) never happened. The session is ahead of its log, so the table is let go and
rebuilt from the log, which still holds the lease: the caller was answered UNAVAILABLE and
retries with the same request id, a bot or timer decides again, and a wall draw asked again
under its number gives the same tile. Streams end (they resume from their last event).

The table is rebuilt by the next call for it, or by the keeper (:mod:`.keeper`), which takes
the rebuilds that are due from here: 0.2 s after a table's first rewind, twice as long after
each rewind or failed rebuild in a row (5 s at most), one at a time.
"""

from __future__ import annotations

import threading
import time

import structlog

from services.gateway.tables.leases import TableLeases
from services.gateway.tables.live import LiveTable

log_ = structlog.get_logger("mahjong.gateway")


class Rewinds:
    """The rebuilds due of rewound tables: rewinds in a row per table (for the backoff), and
    when each pending rebuild is due (``time.monotonic``). ``due`` is set whenever a rebuild
    is added, to wake the keeper."""

    def __init__(self, leases: TableLeases) -> None:
        self.leases = leases
        self._lock = threading.Lock()
        self._tries: dict[str, int] = {}
        self._pending: dict[str, float] = {}
        self.due = threading.Event()

    def rewind(self, table: LiveTable, exc: Exception) -> None:
        """A step of ``table`` the store could not take: let it go, rebuild it later."""
        log_.warning("table_step_unwritten", table=table.id, error=str(exc))
        self.leases.let_go(table, "step_unwritten")
        self.later(table.id)

    def later(self, table_id: str) -> None:
        """Rebuild ``table_id`` after the backoff of its rewinds (and failed rebuilds) in a row,
        unless a rebuild is pending already."""
        with self._lock:
            if table_id in self._pending:
                return
            tries = self._tries[table_id] = self._tries.get(table_id, 0) + 1
            self._pending[table_id] = time.monotonic() + min(5000, 100 * 2**tries) / 1000
        self.due.set()

    def written(self, table_id: str) -> None:
        """A step of the table was written: its next rewind starts the backoff anew."""
        if table_id in self._tries:
            with self._lock:
                self._tries.pop(table_id, None)

    def next_due(self) -> float | None:
        """When the next rebuild is due (``time.monotonic``), None for none."""
        with self._lock:
            return min(self._pending.values(), default=None)

    def take_due(self) -> list[str]:
        """The tables whose rebuild is due now (no longer pending)."""
        now = time.monotonic()
        with self._lock:
            due = [t for t, at in self._pending.items() if at <= now]
            for t in due:
                del self._pending[t]
        return due
