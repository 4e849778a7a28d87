"""Table ownership: one replica runs a table, through the store's lease on it
(``gateway-table/<table id>``, :class:`infra.store.ownership.Ownership`), with an epoch that
rises on every change of owner. Every write of the table — event append, request-id record,
outbox row — carries the lease's fence and is checked by the store in the same transaction,
so a replica that was paused or cut off longer than the lease can never write once another
has taken the table over: the store refuses, not the former owner's good will. Expiry is
judged by the store's clock. A draining replica releases its leases, so the tables move at
once. Each replica advertises its address (``gateway-replica/<replica id>``) for the
NOT_OWNER redirect."""

from __future__ import annotations

import threading
import time

from infra.store import Store
from infra.store.base import Lease
from shared.errors import Unavailable

LEASE_PREFIX = "gateway-table/"
REPLICAS = "gateway-replica"


def advertise(store: Store, replica_id: str, address: str) -> None:
    """Where clients reach ``replica_id`` (empty: through the load balancer)."""
    store.put(REPLICAS, replica_id, address.encode())


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
