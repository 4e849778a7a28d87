"""The live tables of one gateway replica, by id: which are in memory, which are being started
or loaded, and tables leaving memory (a finished one ``finished_table_ttl_ms`` after its end)."""

from __future__ import annotations

import threading

import structlog

from services.gateway.runtime import ThreadScheduler
from services.gateway.tables.live import LiveTable

log_ = structlog.get_logger("mahjong.gateway")


class TableRegistry:
    """``tables``: table id -> :class:`LiveTable` held in memory. ``lock`` guards it and
    ``starting`` (tables whose start this replica is making); ``loading`` is held while a
    table is loaded from its log, so none leaves memory meanwhile."""

    def __init__(self, scheduler: ThreadScheduler, finished_ttl_ms: int) -> None:
        self.tables: dict[str, LiveTable] = {}
        self.lock = threading.Lock()
        self.loading = threading.RLock()
        self.starting: set[str] = set()
        self.scheduler = scheduler
        self.finished_ttl_ms = finished_ttl_ms

    def get(self, table_id: str) -> LiveTable | None:
        return self.tables.get(table_id)

    def add(self, table: LiveTable) -> None:
        with self.lock:
            self.tables[table.id] = table

    def forget(self, table: LiveTable, why: str) -> None:
        """Drop ``table`` from memory (if it is still the one held for its id)."""
        with self.loading, self.lock:
            if self.tables.get(table.id) is table:
                del self.tables[table.id]
                log_.info("table_evicted", table=table.id, why=why)

    def evict_later(self, table: LiveTable) -> None:
        """Drop a finished table from memory after ``finished_table_ttl_ms``."""
        self.scheduler.call_later(self.finished_ttl_ms, lambda: self.forget(table, "finished"))
