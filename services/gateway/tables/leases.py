"""Table ownership: one replica runs a table, through the store's lease on it
(``gateway-table/<table id>``, :class:`shared.store.ownership.Ownership`), with an epoch that
rises on every change of owner. Every write of the table — event append, request-id record,
outbox row — carries the lease's fence and is checked by the store in the same transaction,
so a replica that was paused or cut off longer than the lease can never write once another
has taken the table over: the store refuses, not the former owner's good will. Expiry is
judged by the store's clock. A draining replica releases its leases, so the tables move at
once. Each replica advertises its address (``gateway-replica/<replica id>``) for the
NOT_OWNER redirect."""

from __future__ import annotations

from shared.errors import Unavailable
from shared.store import Store

LEASE_PREFIX = "gateway-table/"
REPLICAS = "gateway-replica"


def advertise(store: Store, replica_id: str, address: str) -> None:
    """Where clients reach ``replica_id`` (empty: through the load balancer)."""
    store.put(REPLICAS, replica_id, address.encode())


def owner_of(store: Store, table_id: str) -> str:
    """The replica whose lease on the table is running ("" for none)."""
    lease = store.get_lease(LEASE_PREFIX + table_id)
    return lease.owner if lease is not None and lease.held else ""


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
