"""The SQL of the PostgreSQL store's logs: an append is one statement (:func:`append_statement`).

Each log is numbered from its head row (``store_log_heads``), moved on by an upsert that locks
it, never ``MAX(seq)+1``: concurrent appenders get distinct numbers with no gaps.
"""

from __future__ import annotations

from typing import Any

from infra.store.base import Fence


def append_statement(
    log: str,
    entries: list[bytes],
    expected_seq: int | None,
    fence: Fence | None,
    records: dict[tuple[str, str], bytes],
) -> tuple[str, dict[str, Any]]:
    """The statement of an append and its arguments.

    One statement (its own transaction, one round trip): the fence's lease row read FOR SHARE,
    the head row moved on by the entries' count (only from ``expected_seq``, when given), the
    entries inserted under the numbers it passed; back: their numbers, with no entry. Otherwise
    fenced or not at ``expected_seq``: back, with ``expected_seq``, the entries after it (as of
    the statement's snapshot: one whose writer committed while this waited may be missing)."""
    args: dict[str, Any] = {
        "log": log,
        "entries": entries,
        "n": len(entries),
        "expected": expected_seq,
    }
    ctes = []
    gate = ""
    if fence is not None:
        ctes.append(
            "f AS (SELECT 1 FROM store_leases WHERE name = %(lease)s AND epoch = %(epoch)s"
            " AND owner <> '' FOR SHARE)"
        )
        args.update(lease=fence.lease, epoch=fence.epoch)
        gate = " WHERE EXISTS (SELECT 1 FROM f)"
    if expected_seq is None:
        head = (
            f"INSERT INTO store_log_heads AS h (log, last) SELECT %(log)s, %(n)s{gate} "
            "ON CONFLICT (log) DO UPDATE SET last = h.last + %(n)s RETURNING last"
        )
    elif expected_seq == 0:
        head = (
            f"INSERT INTO store_log_heads (log, last) SELECT %(log)s, %(n)s{gate} "
            "ON CONFLICT DO NOTHING RETURNING last"
        )
    else:
        head = (
            "UPDATE store_log_heads SET last = last + %(n)s WHERE log = %(log)s "
            "AND last = %(expected)s"
            + (" AND EXISTS (SELECT 1 FROM f)" if fence else "")
            + " RETURNING last"
        )
    ctes.append(f"head AS ({head})")
    if records:  # written only with the entries (FROM head: no row, no write)
        ctes.append(
            "recs AS (INSERT INTO store_records (namespace, key, value, version) "
            "SELECT r.ns, r.k, r.v, 1 FROM head, unnest(%(rns)s::text[], %(rkeys)s::text[], "
            "%(rvals)s::bytea[]) AS r(ns, k, v) ON CONFLICT (namespace, key) DO UPDATE "
            "SET value = EXCLUDED.value, version = store_records.version + 1)"
        )
        args.update(
            rns=[ns for ns, _ in records],
            rkeys=[k for _, k in records],
            rvals=list(records.values()),
        )
    insert = (
        "INSERT INTO store_logs (log, seq, entry) SELECT %(log)s, head.last - %(n)s + u.i, "
        "u.entry FROM head, unnest(%(entries)s::bytea[]) WITH ORDINALITY AS u(entry, i)"
    )
    if expected_seq is None:
        sql = f"WITH {', '.join(ctes)} {insert} RETURNING seq, NULL::bytea"
    else:
        ctes.append(f"ins AS ({insert} RETURNING seq)")
        sql = (
            f"WITH {', '.join(ctes)} SELECT seq, NULL::bytea FROM ins UNION ALL "
            "SELECT seq, entry FROM store_logs WHERE log = %(log)s AND seq > %(expected)s "
            "AND NOT EXISTS (SELECT 1 FROM head)"
        )
    return sql, args
