"""Table ownership: one replica runs a table, through the store's lease on it
(``gateway-table/<table id>``, :class:`infra.store.ownership.Ownership`), with an epoch that
rises on every change of owner. Every write of the table — event append, request-id record,
outbox row — carries the lease's fence and is checked by the store in the same transaction,
so a replica that was paused or cut off longer than the lease can never write once another
has taken the table over: the store refuses, not the former owner's good will. Expiry is
judged by the store's clock. A draining replica releases its leases, so the tables move at
once. Each replica advertises its address (``gateway-replica/<replica id>``) for the
NOT_OWNER redirect, and its mutual-TLS internal port's (``gateway-replica-internal/<replica
id>``), where the other replicas send it the operator's console calls
(:mod:`services.gateway.console`).

:class:`TableLeases` is a replica's hold on its tables: the leases (renewed every lease/3 on a
thread of their own), the fence of every write, the check that a lease is still held, and
letting a table go. Losing a table: a replica whose lease renewal finds another replica's lease
running stops serving that table at once: the table leaves memory, its Subscribe streams end
UNAVAILABLE with reason NOT_OWNER after the events already held, and Act and every later call
for it answer UNAVAILABLE NOT_OWNER — with the new owner's address (``owner_address``) in the
error's details when it has one. Adopting orphaned tables, draining and closing are
:mod:`.keeper`'s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import structlog

from infra.store import Store
from infra.store.base import Fence, Lease, StoreError
from infra.store.ownership import NotOwner, Ownership
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.settings import GatewaySettings
from services.gateway.tables.live import LiveTable
from services.gateway.tables.registry import TableRegistry
from shared.errors import Unavailable

log_ = structlog.get_logger("mahjong.gateway")

# Told of every event appended (the server's metrics), and of a table taken over or lost
# (event None, what happened: "taken_over", "lost").
OnEvent = Callable[[LiveTable, LoggedEvent | None, str], None]

LEASE_PREFIX = "gateway-table/"
REPLICAS = "gateway-replica"
INTERNAL_REPLICAS = "gateway-replica-internal"


def advertise(store: Store, replica_id: str, address: str, internal_address: str = "") -> None:
    """Where clients reach ``replica_id`` (empty: through the load balancer), and where the
    other replicas reach its internal port (none advertised when empty)."""
    store.put(REPLICAS, replica_id, address.encode())
    if internal_address:
        store.put(INTERNAL_REPLICAS, replica_id, internal_address.encode())


def internal_address_of(store: Store, replica_id: str) -> str:
    """Where the other replicas reach ``replica_id``'s internal port ("" for none known)."""
    rec = store.get(INTERNAL_REPLICAS, replica_id) if replica_id else None
    return rec.value.decode() if rec is not None else ""


def owner_of(store: Store, table_id: str) -> str:
    """The replica whose lease on the table is running ("" for none)."""
    lease = running_lease(store, table_id)
    return lease.owner if lease is not None else ""


def running_lease(store: Store, table_id: str) -> Lease | None:
    """The table's lease while an owner holds it (None: expired, released or none)."""
    lease = store.get_lease(LEASE_PREFIX + table_id)
    return lease if lease is not None and lease.held else None


class LeaseWatch:
    """The running lease of each table whose stream this replica relays from its owner, read
    from the store at most once every ``every_s`` per table, however many streams ask: a relay
    compares it with the lease it attached under to notice an owner that stopped renewing (a
    paused or cut-off process answers nothing, and its connection may stay open)."""

    def __init__(self, store: Store, every_s: float) -> None:
        self.store = store
        self.every_s = every_s
        self._seen: dict[str, tuple[float, Lease | None]] = {}
        self._lock = threading.Lock()

    def running(self, table_id: str) -> Lease | None:
        now = time.monotonic()
        with self._lock:
            seen = self._seen.get(table_id)
        if seen is not None and now - seen[0] < self.every_s:
            return seen[1]
        lease = running_lease(self.store, table_id)
        with self._lock:
            self._seen[table_id] = (now, lease)
            if len(self._seen) > 4 * 4096:  # tables no longer relayed: forget the oldest
                for old in sorted(self._seen, key=lambda t: self._seen[t][0])[:4096]:
                    del self._seen[old]
        return lease

    def forget(self, table_id: str) -> None:
        """Read the table's lease afresh next time (it was just taken over here)."""
        with self._lock:
            self._seen.pop(table_id, None)

    def moved(self, table_id: str, epoch: int) -> bool:
        """Whether the table's lease is no longer the one of ``epoch`` (expired, released or
        taken over): the owner a stream was relayed from no longer runs it."""
        lease = self.running(table_id)
        return lease is None or lease.epoch != epoch


def address_of(store: Store, replica_id: str) -> str:
    rec = store.get(REPLICAS, replica_id) if replica_id else None
    return rec.value.decode() if rec is not None else ""


def not_owner(store: Store, replica_id: str, table_id: str) -> Unavailable:
    """UNAVAILABLE NOT_OWNER: another replica runs the table now; its address (when it
    advertises one) is in the details, to reconnect there."""
    owner = owner_of(store, table_id)
    where = address_of(store, owner) if owner and owner != replica_id else ""
    details = {"table_id": table_id}
    if where:
        details["owner_address"] = where
    return Unavailable(
        f"gateway replica {replica_id} does not run table {table_id} (any more); "
        f"{'reconnect to ' + where if where else 'retry through the load balancer'}",
        reason="NOT_OWNER",
        **details,
    )


class TableLeases:
    """The leases of the tables this replica owns (``ownership``: the store's leases, renewed
    every lease/3 by :meth:`start`'s thread); a table another replica took over is let go and
    every write is fenced by its lease."""

    def __init__(
        self,
        store: Store,
        settings: GatewaySettings,
        registry: TableRegistry,
        on_event: OnEvent | None,
        stop: threading.Event,
    ) -> None:
        self.store = store
        self.settings = settings
        self.registry = registry
        self.on_event = on_event
        self.stop = stop
        self.ownership = Ownership(
            store, settings.replica_id, ttl_ms=max(1, settings.lease_ms), prefix=LEASE_PREFIX
        )
        advertise(store, settings.replica_id, settings.address, settings.internal_address)
        self.thread = threading.Thread(target=self._renew, name="gateway-leases", daemon=True)

    @property
    def renew_seconds(self) -> float:
        """A third of the lease (50 ms at the least): how often leases are renewed."""
        return max(0.05, self.settings.lease_ms / 3000)

    def start(self) -> None:
        self.thread.start()

    def _renew(self) -> None:
        """Renew this replica's leases every lease/3; a table whose lease another replica
        took is let go."""
        while not self.stop.wait(self.renew_seconds):
            try:
                lost = self.ownership.renew()
            except Exception as exc:  # the store is down: keep playing, retry later
                log_.warning("lease_renewal_failed", error=repr(exc))
                continue
            for table_id in lost:
                table = self.registry.get(table_id)
                if table is not None:
                    self.lost(table)

    def confirm(self, table: LiveTable) -> None:
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
        if not confirmed and table.owned:
            self.lost(table)

    def not_owner(self, table_id: str) -> Unavailable:
        return not_owner(self.store, self.settings.replica_id, table_id)

    def fence(self, table: LiveTable) -> Fence:
        """The fence of every write of ``table``: NOT_OWNER once this replica lost it."""
        try:
            return self.ownership.fence(table.id)
        except NotOwner:
            raise self.not_owner(table.id) from None

    def lost(self, table: LiveTable) -> None:
        """Another replica holds the table's lease now (this one was paused or cut off longer
        than the lease): stop serving it. Its streams end NOT_OWNER, later calls find it
        gone from memory and answer NOT_OWNER with the new owner's address; its session is
        never written to again (if the lease comes back, the table is rebuilt from the log)."""
        self.let_go(table, "lease_lost")
        log_.warning("table_lost", table=table.id, owner=owner_of(self.store, table.id))

    def let_go(self, table: LiveTable, why: str) -> None:
        """Stop serving ``table`` here (lost, or rewound to be rebuilt from its log)."""
        with table.cond:  # first: nothing of this replica's may be appended from here on
            table.owned = False
            if table.session is not None:
                table.session.detach()
        self.registry.forget(table, why)
        if self.on_event is not None:
            self.on_event(table, None, "lost")
        with table.cond:  # then its streams end: a client reconnecting finds it gone
            table.notify()
