"""Leases and takeover of a replica's tables: the lease threads (renewals every lease/3, and the
scan for orphaned tables to adopt), the fence of every write, the check that a lease is still
held, and letting a table go.

Losing a table: a replica whose lease renewal finds another replica's lease running stops
serving that table at once: the table leaves memory, its Subscribe streams end UNAVAILABLE with
reason NOT_OWNER after the events already held, and Act and every later call for it answer
UNAVAILABLE NOT_OWNER — with the new owner's address (``owner_address``) in the error's details
when it has one. Draining (:meth:`TableLeases.hand_over`) and closing release every lease at
once, so other replicas take the tables over without waiting for them to expire. The leases
themselves are :mod:`.leases`.
"""

from __future__ import annotations

import contextlib

import structlog

from infra.store.base import Fence, StoreError
from infra.store.ownership import NotOwner
from services.gateway.tables import leases
from services.gateway.tables.live import LiveTable
from shared.errors import Unavailable

log_ = structlog.get_logger("mahjong.gateway")


class TableLeases:
    """Mixed into :class:`~services.gateway.tables.manager.TableManager`, whose ``store``,
    ``settings``, ``ownership``, ``tables``, ``scheduler``, ``on_event``, ``_stop`` and lease
    threads it uses, with ``_recover`` and ``_forget`` of :mod:`.recovery`."""

    @property
    def _renew_seconds(self) -> float:
        """A third of the lease (50 ms at the least): how often leases are renewed."""
        return max(0.05, self.settings.lease_ms / 3000)

    def _renew_leases(self) -> None:
        """Renew this replica's leases every lease/3."""
        while not self._stop.wait(self._renew_seconds):
            try:
                self.ownership.renew()  # a lease another replica took: _lost_id
            except Exception as exc:  # the store is down: keep playing, retry later
                log_.warning("lease_renewal_failed", error=repr(exc))

    def _adopt_orphans(self) -> None:
        """Look for tables to take over (an owner gone, or one that released its tables when
        it drained) every lease/3, and every second at most."""
        while not self._stop.wait(min(1.0, self._renew_seconds)):
            try:
                self._take_over_expired()
            except Exception as exc:
                log_.warning("take_over_scan_failed", error=repr(exc))

    def _take_over_expired(self) -> None:
        """Adopt every table whose owner stopped renewing its lease (or released it)."""
        for table_id in self.ownership.orphans():
            if self._stop.is_set():
                return
            if table_id in self.tables:
                continue
            try:
                self._recover(table_id)
            except Exception as exc:  # one broken table must not stop the others
                log_.exception("take_over_failed", table=table_id, error=repr(exc))

    def _confirm(self, table: LiveTable) -> None:
        """Make sure this replica still owns ``table`` before serving it, when its lease is no
        longer sure by this replica's clock (it was paused, or its renewals stalled, longer
        than the lease): renewed now, or lost (let go: the caller finds the new owner). A
        store that cannot be reached: UNAVAILABLE, never an answer as a stale owner."""
        try:
            confirmed = self.ownership.confirm(table.id)
        except StoreError as exc:
            raise Unavailable(
                f"gateway replica {self.settings.replica_id} cannot confirm it still runs "
                f"table {table.id} (the store: {exc}); retry",
                reason="NOT_OWNER",
                table_id=table.id,
            ) from None
        if not confirmed and table.owned:  # on_lost has let it go, unless it was released
            self._lost(table)

    def _not_owner(self, table_id: str) -> Unavailable:
        return leases.not_owner(self.store, self.settings.replica_id, table_id)

    def _fence(self, table: LiveTable) -> Fence:
        """The fence of every write of ``table``: NOT_OWNER once this replica lost it."""
        try:
            return self.ownership.fence(table.id)
        except NotOwner:
            raise self._not_owner(table.id) from None

    def _lost_id(self, table_id: str) -> None:
        table = self.tables.get(table_id)
        if table is not None:
            self._lost(table)

    def _lost(self, table: LiveTable) -> None:
        """Another replica holds the table's lease now (this one was paused or cut off longer
        than the lease): stop serving it. Its streams end NOT_OWNER, later calls find it
        gone from memory and answer NOT_OWNER with the new owner's address; its session is
        never written to again (if the lease comes back, the table is rebuilt from the log)."""
        self._let_go(table, "lease_lost")
        log_.warning("table_lost", table=table.id, owner=leases.owner_of(self.store, table.id))

    def _let_go(self, table: LiveTable, why: str) -> None:
        """Stop serving ``table`` here (lost, or rewound to be rebuilt from its log)."""
        with table.cond:  # first: nothing of this replica's may be appended from here on
            table.owned = False
            if table.session is not None:
                table.session.detach()
        self._forget(table, why)
        if self.on_event is not None:
            self.on_event(table, None, "lost")
        with table.cond:  # then its streams end: a client reconnecting finds it gone
            table.notify()

    def hand_over(self) -> None:
        """Draining (SIGTERM, as health turns NOT_SERVING): stop playing here, end every stream
        UNAVAILABLE NOT_OWNER once it has what this replica wrote (its client resumes from its
        last event on another replica) and release every lease at once, so other replicas take
        the tables over within a second instead of after the lease expires."""
        self._stop.set()
        self._lease_thread.join(timeout=5)
        self._adopt_thread.join(timeout=5)
        self.scheduler.close()
        for table in list(self.tables.values()):
            with table.cond:  # after any step in progress: nothing more is written here
                table.owned = False
                if table.session is not None:
                    table.session.detach()
                table.notify()
        with contextlib.suppress(StoreError):
            self.ownership.release_all()
        log_.info("tables_handed_over", tables=len(self.tables))

    def close(self) -> None:
        """Stop: no more timers or steps, then hand every table over at once (the leases are
        released, so another replica takes them without waiting for them to expire)."""
        self._stop.set()
        self._lease_thread.join(timeout=5)
        self._adopt_thread.join(timeout=5)
        self.scheduler.close()
        with contextlib.suppress(StoreError):
            self.ownership.release_all()
