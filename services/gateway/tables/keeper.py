"""Keeping a replica's tables: adopting orphaned tables (their owner's lease expired, or it
released them as it drained) and rebuilding rewound ones (:mod:`.rewinds`), on a thread of
their own beside the lease renewals (:mod:`.leases`), so however long adopting a table takes
(a log read and a replay each), this replica's leases are renewed; and draining and closing.

Draining (:meth:`TableKeeper.hand_over`) and closing release every lease at once, so other
replicas take the tables over without waiting for them to expire.
"""

from __future__ import annotations

import contextlib
import threading
import time

import structlog

from infra.store.base import StoreError
from services.gateway.runtime import ThreadScheduler
from services.gateway.tables.leases import TableLeases
from services.gateway.tables.recovery import TableRecovery
from services.gateway.tables.registry import TableRegistry
from services.gateway.tables.rewinds import Rewinds

log_ = structlog.get_logger("mahjong.gateway")


class TableKeeper:
    """The thread that adopts orphaned tables (every lease/3, every second at most) and
    rebuilds rewound ones when due; :meth:`hand_over` and :meth:`close` stop it, the lease
    renewals and the timers."""

    def __init__(
        self,
        registry: TableRegistry,
        leases: TableLeases,
        recovery: TableRecovery,
        rewinds: Rewinds,
        scheduler: ThreadScheduler,
        stop: threading.Event,
    ) -> None:
        self.registry = registry
        self.leases = leases
        self.recovery = recovery
        self.rewinds = rewinds
        self.scheduler = scheduler
        self.stop = stop
        self.thread = threading.Thread(target=self._run, name="gateway-adopt", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        every = min(1.0, self.leases.renew_seconds)
        next_scan = time.monotonic() + every
        while not self.stop.is_set():
            self.rewinds.due.clear()  # before looking: a rebuild added after sets it again
            wake_at = next_scan
            due = self.rewinds.next_due()
            if due is not None:
                wake_at = min(wake_at, due)
            self.rewinds.due.wait(max(0.0, wake_at - time.monotonic()))
            if self.stop.is_set():
                return
            for table_id in self.rewinds.take_due():
                self._rebuild(table_id)
            if time.monotonic() >= next_scan:
                try:
                    self._take_over_expired()
                except Exception as exc:
                    log_.warning("take_over_scan_failed", error=repr(exc))
                next_scan = time.monotonic() + every

    def _take_over_expired(self) -> None:
        """Adopt every table whose owner stopped renewing its lease (or released it)."""
        for table_id in self.leases.ownership.orphans():
            if self.stop.is_set():
                return
            if table_id in self.registry.tables:
                continue
            try:
                self.recovery.recover(table_id)
            except Exception as exc:  # one broken table must not stop the others
                log_.exception("take_over_failed", table=table_id, error=repr(exc))

    def _rebuild(self, table_id: str) -> None:
        """A rewound table from its log (unless a call rebuilt it first); again later while
        the store stays away."""
        if self.stop.is_set() or table_id in self.registry.tables:
            return
        try:
            self.recovery.recover(table_id)
        except Exception as exc:  # the store is still away: again, a little later
            log_.warning("table_reload_failed", table=table_id, error=repr(exc))
            self.rewinds.later(table_id)

    def _stop(self) -> None:
        self.stop.set()
        self.rewinds.due.set()
        self.leases.thread.join(timeout=5)
        self.thread.join(timeout=5)
        self.scheduler.close()

    def hand_over(self) -> None:
        """Draining (SIGTERM, as health turns NOT_SERVING): stop playing here, end every stream
        UNAVAILABLE NOT_OWNER once it has what this replica wrote (its client resumes from its
        last event on another replica) and release every lease at once, so other replicas take
        the tables over within a second instead of after the lease expires."""
        self._stop()
        for table in list(self.registry.tables.values()):
            with table.cond:  # after any step in progress: nothing more is written here
                table.owned = False
                if table.session is not None:
                    table.session.detach()
                table.notify()
        with contextlib.suppress(StoreError):
            self.leases.ownership.release_all()
        log_.info("tables_handed_over", tables=len(self.registry.tables))

    def close(self) -> None:
        """Stop: no more timers or steps, then hand every table over at once (the leases are
        released, so another replica takes them without waiting for them to expire)."""
        self._stop()
        with contextlib.suppress(StoreError):
            self.leases.ownership.release_all()
