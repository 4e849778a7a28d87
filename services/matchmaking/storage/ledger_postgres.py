"""The ledger as tables in the PostgreSQL store's database (the cluster). A transaction is one
database transaction of five statements: the transaction row (``ON CONFLICT DO NOTHING``: a
repeat writes nothing and reads the stored digest), the balance rows it moves read ``FOR
UPDATE`` in (account, asset, stripe) order (so concurrent transactions lock shared rows in one
order and never deadlock, and the balances checked cannot change before the write), the
balance rows upserted in one statement, the entries inserted in one statement, and a hand's
row. Serialization failures and deadlocks are retried by the store; a lost connection leaves
nothing half-written. The table's CHECK and bigint range back the domain's refusals: a
violation is FAILED_PRECONDITION, never INTERNAL."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import errors as pg_errors

from infra.store.postgres import PostgresStore
from services.matchmaking.domain.economy.books import HandRow, TxRow, account_deltas, check_moves
from services.matchmaking.domain.economy.ledger import Entry
from services.matchmaking.storage.ledger_sql import (
    INSERT_HAND,
    INSERT_TX,
    SCHEMA,
    SqlLedger,
    columns,
    hand_row,
)
from shared.errors import FailedPrecondition

_DIALECT = {"text": 'text COLLATE "C"', "real": "double precision", "int": "bigint", "extra": ""}
MIGRATIONS = (SCHEMA.format(**_DIALECT),)
_LOCK = (
    "SELECT a.account, a.asset, a.stripe, a.balance FROM ledger_accounts a "
    "JOIN unnest(%s::text[], %s::text[], %s::smallint[]) AS k(account, asset, stripe) "
    "USING (account, asset, stripe) ORDER BY 1, 2, 3 FOR UPDATE OF a"
)
_ACCOUNTS = (
    "INSERT INTO ledger_accounts AS a (account, asset, stripe, balance) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::smallint[], %s::bigint[]) ORDER BY 1, 2, 3 "
    "ON CONFLICT (account, asset, stripe) DO UPDATE SET balance = a.balance + EXCLUDED.balance"
)
_UPDATE = (
    "UPDATE ledger_accounts a SET balance = a.balance + d.amount "
    "FROM unnest(%s::text[], %s::text[], %s::smallint[], %s::bigint[]) "
    "AS d(account, asset, stripe, amount) "
    "WHERE a.account = d.account AND a.asset = d.asset AND a.stripe = d.stripe"
)
_ENTRIES = (
    "INSERT INTO ledger_entries (ref, seq, account, asset, kind, amount, tag, at, note) "
    "SELECT * FROM unnest(%s::text[], %s::int[], %s::text[], %s::text[], %s::text[], "
    "%s::bigint[], %s::text[], %s::float8[], %s::text[])"
)
_REFUSED = (pg_errors.CheckViolation, pg_errors.NumericValueOutOfRange)


def _entry_columns(entries: Sequence[Entry]) -> list[list]:
    rows = [
        (e.ref, e.seq, e.account, e.asset, e.kind, e.amount, e.tag, e.at, e.note) for e in entries
    ]
    return columns(rows) or [[]] * 9


class PostgresLedger(SqlLedger):
    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        store.migrate("ledger", MIGRATIONS)

    def transact(self, tx: TxRow, entries: Sequence[Entry], hand: HandRow | None) -> str | None:
        def run(conn: psycopg.Connection) -> str | None:
            inserted = conn.execute(
                INSERT_TX + " ON CONFLICT DO NOTHING RETURNING ref",
                (tx.ref, tx.tag, tx.digest, tx.at),
            ).fetchone()
            if inserted is None:
                return conn.execute(
                    "SELECT digest FROM ledger_transactions WHERE ref = %s", (tx.ref,)
                ).fetchone()[0]
            deltas = account_deltas(entries)
            keys = columns([(a, asset, s) for a, asset, s, _ in deltas])
            current = {(a, asset, s): b for a, asset, s, b in conn.execute(_LOCK, keys)}
            check_moves(tx.ref, current, deltas)
            # Rows that exist are updated (an upsert checks the row it proposes, the delta, against
            # the CHECK); new ones inserted (never below zero past check_moves, but the house's).
            old = [d for d in deltas if d[:3] in current]
            new = [d for d in deltas if d[:3] not in current]
            if old:
                conn.execute(_UPDATE, columns(old))
            if new:
                conn.execute(_ACCOUNTS, columns(new))
            conn.execute(_ENTRIES, _entry_columns(entries))
            if hand is not None:
                conn.execute(INSERT_HAND, hand_row(hand))
            return None

        try:
            return self.store.transaction(run)
        except _REFUSED as exc:  # a race check_moves could not see: the tables refuse it
            raise FailedPrecondition(
                f"transaction {tx.ref}: the ledger's tables refused it ({exc.sqlstate})",
                reason="INSUFFICIENT_FUNDS"
                if isinstance(exc, pg_errors.CheckViolation)
                else "BALANCE_OVERFLOW",
                ref=tx.ref,
            ) from exc

    def _read(self, *queries: tuple[str, tuple]) -> list[list[tuple]]:
        if len(queries) == 1:  # one statement: its own snapshot, no BEGIN/COMMIT
            sql, args = queries[0]
            return [
                self.store.transaction(
                    lambda conn: conn.execute(sql, args).fetchall(), read_only=True
                )
            ]

        def tx(conn: psycopg.Connection) -> list[list[tuple]]:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one snapshot
            return [conn.execute(sql, args).fetchall() for sql, args in queries]

        return self.store.transaction(tx)
