"""Table ownership: one replica runs a table, through a lease record in the store
(``gateway-lease``) that it renews every lease/3. A replica whose renewal finds another
replica's lease running (it was paused or cut off longer than the lease) stops serving the
table at once. Taking or renewing a lease is one atomic store update, so two replicas never
both hold a running lease on a table."""

from __future__ import annotations

import time

from services.gateway.tables.records import LEASES, Lease
from shared.errors import Unavailable
from shared.store import Store


def now_ms() -> int:
    return int(time.time() * 1000)


def read_lease(store: Store, table_id: str) -> Lease | None:
    rec = store.get(LEASES, table_id)
    return Lease.decode(rec.value) if rec else None


def take_lease(store: Store, table_id: str, owner: str, address: str, lease_ms: int) -> None:
    """The lease of a table this replica has just created."""
    store.put(LEASES, table_id, Lease(owner, address, now_ms() + lease_ms).encode())


def claim_lease(
    store: Store, table_id: str, owner: str, address: str, lease_ms: int, now: int | None = None
) -> bool:
    """Take or renew ``owner``'s lease on a table; False while another replica's lease is still
    running."""
    now = now_ms() if now is None else now

    def claim(raw: bytes | None) -> tuple[bytes | None, bool]:
        cur = Lease.decode(raw) if raw else None
        if cur is not None and cur.owner != owner and cur.expires_ms > now:
            return None, False
        return Lease(owner, address, now + lease_ms).encode(), True

    return store.update(LEASES, table_id, claim)


def expired_leases(store: Store, owner: str) -> list[str]:
    """Tables whose lease has run out (or is ``owner``'s own from an earlier run)."""
    now = now_ms()
    out = []
    for table_id, rec in store.scan(LEASES):
        lease = Lease.decode(rec.value)
        if lease.expires_ms <= now or lease.owner == owner:
            out.append(table_id)
    return out


def not_owner(replica_id: str, table_id: str, lease: Lease | None) -> Unavailable:
    """UNAVAILABLE NOT_OWNER: another replica runs the table now; its address (from the lease
    record, when it advertises one) is in the details, to reconnect there."""
    where = lease.address if lease is not None else ""
    details = {"table_id": table_id}
    if where:
        details["owner_address"] = where
    return Unavailable(
        f"gateway replica {replica_id} does not run table {table_id} (any more); "
        f"{'reconnect to ' + where if where else 'retry through the load balancer'}",
        reason="NOT_OWNER",
        **details,
    )
