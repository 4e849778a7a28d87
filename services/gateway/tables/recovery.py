"""Rebuilding a table from its event log.

A table whose owner's lease expired (or that this replica rewound) is rebuilt from its log
(:meth:`TableRecovery.recover`): its session and any hand in progress, its subscribers'
history, its spectators and request ids; then it plays on here. A step the store could not take
(unreachable) never happened: the table is dropped and rebuilt from the log, later, with
backoff (:mod:`.rewinds`).

Finished tables leave memory: ``--finished-table-ttl-seconds`` (GatewaySettings
``finished_table_ttl_ms``, default 300 s) after ``table_finished`` the table is dropped from
the registry (:mod:`.registry`). A later Subscribe, GetTableState or JoinSeat loads it again,
read-only, from its log (no lease is taken, nothing is scheduled or written) and drops it again
after the same time. Such a view has the table's final seats, chips and counters but no
``hand``. The log, the seats (``gateway-table``), ``gateway-create`` and ``gateway-reported``
stay: replay export and CreateTable retries need them. A halted table (its engine failed on a
bug) stays in memory, read-only, its log untouched.
"""

from __future__ import annotations

import structlog

from infra.store import Store
from infra.store.ownership import Ownership
from services.gateway.domain.events import kinds as K
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import FINISHED, HALTED, presence
from services.gateway.tables import requests, spectators
from services.gateway.tables.leases import OnEvent
from services.gateway.tables.live import LiveTable
from services.gateway.tables.log import read_table_log
from services.gateway.tables.records import REPORTED
from services.gateway.tables.registry import TableRegistry
from services.gateway.tables.wiring import SessionWiring

log_ = structlog.get_logger("mahjong.gateway")


class TableRecovery:
    """Tables loaded from their logs (``store``) into the ``registry``: their leases claimed
    (``ownership``), their sessions connected (``wiring``); ``on_event`` is told of each table
    taken over."""

    def __init__(
        self,
        store: Store,
        ownership: Ownership,
        registry: TableRegistry,
        wiring: SessionWiring,
        on_event: OnEvent | None,
    ) -> None:
        self.store = store
        self.ownership = ownership
        self.registry = registry
        self.wiring = wiring
        self.on_event = on_event

    def recover(self, table_id: str) -> LiveTable | None:
        """Rebuild a table from its event log when its lease has expired (or is ours from an
        earlier run): the session and any hand in progress, its subscribers' history and its
        request ids; then it plays on here. A finished table is loaded read-only: no lease,
        nothing scheduled, dropped again from memory after ``finished_table_ttl_ms``. None when
        there is no such table or another live replica owns it."""
        tables = self.registry.tables
        with self.registry.loading:
            if table_id in tables:
                return tables[table_id]
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
            sched = self.wiring.table_scheduler(table)
            with table.lock:
                session = restore_session(
                    table_id, log, timers=self.wiring.timers(), **self.wiring.connect(table, sched)
                )
                table.session = session
                if session.phase not in (FINISHED, HALTED):
                    presence.watch(session)  # 掉线: the streams move here, the grace restarts
            tables[table_id] = table
            if session.phase == FINISHED:
                self.registry.evict_later(table)
            elif self.on_event is not None and session.phase != HALTED:
                self.on_event(table, None, "taken_over")
            log_.info("table_taken_over", table=table_id, events=len(log), phase=session.phase)
            return table
