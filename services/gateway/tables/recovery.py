"""Rebuilding a table from its event log, and tables leaving memory.

A table whose owner's lease expired (or that this replica rewound) is rebuilt from its log
(:meth:`TableRecovery._recover`): its session and any hand in progress, its subscribers'
history, its spectators and request ids; then it plays on here. A step the store could not take
(unreachable) never happened: the table is dropped and rebuilt from the log, later, with
backoff (:meth:`TableRecovery._rewind`).

Finished tables leave memory: ``--finished-table-ttl-seconds`` (GatewaySettings
``finished_table_ttl_ms``, default 300 s) after ``table_finished`` the table is dropped from
:attr:`TableManager.tables`. A later Subscribe, GetTableState or JoinSeat loads it again,
read-only, from its log (no lease is taken, nothing is scheduled or written) and drops it again
after the same time. Such a view has the table's final seats, chips and counters but no
``hand``. The log, the seats (``gateway-table``), ``gateway-create`` and ``gateway-reported``
stay: replay export and CreateTable retries need them. A halted table (its engine failed on a
bug) stays in memory, read-only, its log untouched.
"""

from __future__ import annotations

import structlog

from services.gateway.domain.events import kinds as K
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import FINISHED, HALTED
from services.gateway.runtime import LockedScheduler
from services.gateway.tables import requests, spectators
from services.gateway.tables.live import LiveTable
from services.gateway.tables.log import read_table_log
from services.gateway.tables.records import REPORTED

log_ = structlog.get_logger("mahjong.gateway")


class TableRecovery:
    """Mixed into :class:`~services.gateway.tables.manager.TableManager`, whose ``store``,
    ``settings``, ``ownership``, ``scheduler``, ``tables``, ``on_event``, ``_lock``,
    ``_recover_lock``, ``_rewinds``, ``_reload_pending`` and ``_stop`` it uses, with ``step``,
    ``_timers``, ``_wiring`` and ``_let_go`` of the other parts."""

    def _recover(self, table_id: str) -> LiveTable | None:
        """Rebuild a table from its event log when its lease has expired (or is ours from an
        earlier run): the session and any hand in progress, its subscribers' history and its
        request ids; then it plays on here. A finished table is loaded read-only: no lease,
        nothing scheduled, dropped again from memory after ``finished_table_ttl_ms``. None when
        there is no such table or another live replica owns it."""
        with self._recover_lock:
            if table_id in self.tables:
                return self.tables[table_id]
            log = read_table_log(self.store, table_id)
            if not log:
                return None
            over = any(isinstance(e.event, K.TableFinished | K.TableHalted) for e in log)
            if not over and self.ownership.claim(table_id) is None:
                return None  # another replica's lease is running
            started = next(e.event for e in log if isinstance(e.event, K.TableStarted))
            assert isinstance(started, K.TableStarted)
            reported = self.store.get(REPORTED, table_id)
            table = LiveTable(
                table_id, started.tag, reported is not None and reported.value == b"1"
            )
            for e in log:
                table.keep(e)
            spectators.load(self.store, table)
            if not over:
                requests.load(self.store, table)
                requests.load_from_log(table, log)
            requests.prune(self.store, table, None if over else self.ownership.fence(table_id))
            sched = LockedScheduler(self.scheduler, table.lock, lambda: self.step(table), table_id)
            with table.lock:
                session = restore_session(
                    table_id, log, timers=self._timers(), **self._wiring(table, sched)
                )
                table.session = session
            self.tables[table_id] = table
            if session.phase == FINISHED:
                self._evict_later(table)
            elif self.on_event is not None and session.phase != HALTED:
                self.on_event(table, None, "taken_over")
            log_.info("table_taken_over", table=table_id, events=len(log), phase=session.phase)
            return table

    def _rewind(self, table: LiveTable, exc: Exception) -> None:
        """A step the store could not take (unreachable; written whole or not at all, so not
        at all): the session is ahead of its log, so it is dropped and the table rebuilt from
        the log, which still holds the lease. What was not written did not happen: the caller
        was answered UNAVAILABLE and retries with the same request id, a bot or timer decides
        again, and a wall draw asked again under its number gives the same tile. Streams end
        (they resume from their last event); the table is rebuilt by the next call for it, or
        by a retry here, with backoff, while the store stays away."""
        log_.warning("table_step_unwritten", table=table.id, error=str(exc))
        self._let_go(table, "step_unwritten")
        self._reload_later(table.id)

    def _reload_later(self, table_id: str) -> None:
        """Rebuild a rewound table from its log, later: 0.2 s after its first rewind, twice as
        long after each rewind or failed rebuild in a row (5 s at most), one at a time."""
        with self._lock:
            if table_id in self._reload_pending:
                return
            self._reload_pending.add(table_id)
            tries = self._rewinds[table_id] = self._rewinds.get(table_id, 0) + 1

        def reload() -> None:
            with self._lock:
                self._reload_pending.discard(table_id)
            if self._stop.is_set() or table_id in self.tables:
                return
            try:
                self._recover(table_id)
            except Exception as exc:  # the store is still away: again, a little later
                log_.warning("table_reload_failed", table=table_id, error=repr(exc))
                self._reload_later(table_id)

        self.scheduler.call_later(min(5000, 100 * 2**tries), reload)

    def _evict_later(self, table: LiveTable) -> None:
        """Drop a finished table from memory after ``finished_table_ttl_ms``."""
        self.scheduler.call_later(
            self.settings.finished_table_ttl_ms, lambda: self._forget(table, "finished")
        )

    def _forget(self, table: LiveTable, why: str) -> None:
        """Drop ``table`` from memory (if it is still the one held for its id)."""
        with self._recover_lock, self._lock:
            if self.tables.get(table.id) is table:
                del self.tables[table.id]
                log_.info("table_evicted", table=table.id, why=why)
