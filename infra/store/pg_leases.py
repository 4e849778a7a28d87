"""The SQL of the PostgreSQL store's leases: one row each in ``store_leases``, judged by the
server's clock (``clock_timestamp()``).

``acquire`` and ``renew`` lock the row ``FOR UPDATE``; every fenced write first reads it
``FOR SHARE`` in its own transaction (:func:`lease_row`), so a takeover and a write under the
old epoch are strictly ordered. Each function runs inside the caller's transaction.
"""

from __future__ import annotations

from typing import Any

import psycopg

from infra.store.base import Lease, next_lease, renewed_lease

# The server's clock in ms since the Unix epoch: clock_timestamp(), not now() (the start of the
# transaction, which may have waited on a lock), so expiry is judged when the row is locked.
NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"


def now_ms(conn: psycopg.Connection) -> int:
    return conn.execute(f"SELECT {NOW_MS}").fetchone()[0]


def lease_row(conn: psycopg.Connection, name: str, lock: str = "") -> Lease | None:
    row = conn.execute(
        f"SELECT owner, epoch, expires_ms FROM store_leases WHERE name = %s {lock}", (name,)
    ).fetchone()
    return Lease(name, row[0], row[1], row[2]) if row else None


def locked_lease(conn: psycopg.Connection, name: str) -> Lease | None:
    """The lease row locked FOR UPDATE (created empty first if absent, so that two first
    acquirers queue on one row instead of racing to insert it)."""
    conn.execute(
        "INSERT INTO store_leases (name, owner, epoch, expires_ms) VALUES (%s, '', 0, 0) "
        "ON CONFLICT DO NOTHING",
        (name,),
    )
    lease = lease_row(conn, name, "FOR UPDATE")
    return None if lease is None or lease.epoch == 0 else lease


def write_lease(conn: psycopg.Connection, lease: Lease) -> Lease:
    conn.execute(
        "UPDATE store_leases SET owner = %s, epoch = %s, expires_ms = %s WHERE name = %s",
        (lease.owner, lease.epoch, lease.expires_ms, lease.name),
    )
    return lease


def acquire(conn: psycopg.Connection, name: str, owner: str, ttl_ms: int) -> Lease:
    current = locked_lease(conn, name)
    return write_lease(conn, next_lease(current, name, owner, ttl_ms, now_ms(conn)))


def renew(conn: psycopg.Connection, lease: Lease, ttl_ms: int) -> Lease:
    current = lease_row(conn, lease.name, "FOR UPDATE")
    current = None if current is None or current.epoch == 0 else current
    return write_lease(conn, renewed_lease(current, lease, ttl_ms, now_ms(conn)))


def release(conn: psycopg.Connection, lease: Lease) -> bool:
    cur = conn.execute(
        f"UPDATE store_leases SET owner = '', expires_ms = {NOW_MS} "
        "WHERE name = %s AND epoch = %s AND owner = %s AND owner != ''",
        (lease.name, lease.epoch, lease.owner),
    )
    return cur.rowcount == 1


def read_leases(conn: psycopg.Connection, where: str, args: tuple) -> list[Lease]:
    """The leases held or once held (epoch > 0) that ``where`` selects, each with whether it
    expired by the server's clock."""
    rows: list[Any] = conn.execute(
        f"SELECT name, owner, epoch, expires_ms, owner = '' OR expires_ms <= {NOW_MS} "
        f"FROM store_leases WHERE epoch > 0 AND {where} ORDER BY name",
        args,
    ).fetchall()
    return [Lease(n, o, e, x, expired) for n, o, e, x, expired in rows]
