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
from services.matchmaking.ledger import Entry, upgrade_books
from shared.errors import FailedPrecondition

from . import HandRow, TxRow, account_deltas, check_moves
from .sql import (
    COMPONENT,
    INSERT_HAND,
    INSERT_TX,
    V1_ENTRIES,
    V1_HANDS,
    V2_RENAMES,
    V2_TABLES,
    SqlLedger,
    columns,
    hand_row,
)

MIGRATIONS = (  # version 1 (silver only); version 2 is :meth:`PostgresLedger._upgrade`
    """
    CREATE TABLE ledger_hands (
        hand_id text COLLATE "C" PRIMARY KEY, table_id text NOT NULL, tag text NOT NULL,
        tag_group text NOT NULL, report text NOT NULL, recorded_at double precision NOT NULL
    );
    CREATE INDEX ledger_hands_table ON ledger_hands (table_id);
    CREATE INDEX ledger_hands_group ON ledger_hands (tag_group, hand_id);
    CREATE TABLE ledger_entries (
        ref text COLLATE "C" NOT NULL, account text COLLATE "C" NOT NULL, kind text NOT NULL,
        amount bigint NOT NULL, tag text NOT NULL, at double precision NOT NULL,
        PRIMARY KEY (ref, account)
    );
    CREATE INDEX ledger_entries_account ON ledger_entries (account, at);
    CREATE TABLE ledger_accounts (
        account text COLLATE "C" NOT NULL, stripe smallint NOT NULL, balance bigint NOT NULL,
        PRIMARY KEY (account, stripe)
    );
    """,
)
_DIALECT = {"text": 'text COLLATE "C"', "real": "double precision", "int": "bigint", "extra": ""}
_LOCK = (
    "SELECT a.account, a.asset, a.stripe, a.balance FROM ledger_accounts a "
    "JOIN unnest(%s::text[], %s::text[], %s::smallint[]) AS k(account, asset, stripe) "
    "USING (account, asset, stripe) ORDER BY 1, 2, 3 FOR UPDATE OF a"
)
_ACCOUNTS = (
    "INSERT INTO {table} AS a (account, asset, stripe, balance) "
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
    "INSERT INTO {table} (ref, seq, account, asset, kind, amount, tag, at, note) "
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
        store.transaction(self._upgrade)

    @staticmethod
    def _upgrade(conn: psycopg.Connection) -> bool:
        """Version 1 → 2 in place, once (under an advisory lock: one replica does it)."""
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (COMPONENT,))
        done = conn.execute("SELECT 1 FROM store_schema WHERE component = %s", (COMPONENT,))
        if done.fetchone():
            return False
        txs, entries, rows = upgrade_books(
            conn.execute(V1_ENTRIES).fetchall(), dict(conn.execute(V1_HANDS).fetchall())
        )
        for statement in V2_TABLES:
            conn.execute(statement.format(**_DIALECT))
        PostgresLedger._write_raw(
            conn, txs, entries, rows, "ledger_entries_v2", "ledger_accounts_v2"
        )
        for statement in V2_RENAMES:
            conn.execute(statement)
        conn.execute("INSERT INTO store_schema (component, version) VALUES (%s, 1)", (COMPONENT,))
        return True

    @staticmethod
    def _write_raw(conn, txs, entries, rows, entries_table, accounts_table) -> None:
        if txs:
            conn.cursor().executemany(INSERT_TX, [(t.ref, t.tag, t.digest, t.at) for t in txs])
        if entries:
            conn.execute(_ENTRIES.format(table=entries_table), _entry_columns(entries))
        if rows:
            keys = sorted(rows.items())
            conn.execute(
                _ACCOUNTS.format(table=accounts_table),
                columns([(a, asset, s, v) for (a, asset, s), v in keys]),
            )

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
                conn.execute(_ACCOUNTS.format(table="ledger_accounts"), columns(new))
            conn.execute(_ENTRIES.format(table="ledger_entries"), _entry_columns(entries))
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

    def import_legacy(self, hands: Sequence[HandRow], entries: Sequence[Entry]) -> bool:
        def tx(conn: psycopg.Connection) -> bool:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('ledger-legacy-import'))")
            done = conn.execute(
                "SELECT 1 FROM store_schema WHERE component = 'ledger-legacy-import'"
            ).fetchone()
            if done:
                return False
            for h in hands:
                conn.execute(INSERT_HAND + " ON CONFLICT DO NOTHING", hand_row(h))
            old = [(e.ref, e.account, e.kind, e.amount, e.tag, e.at) for e in entries]
            txs, made, rows = upgrade_books(old, {h.hand_id: h.report for h in hands})
            self._write_raw(conn, txs, made, rows, "ledger_entries", "ledger_accounts")
            conn.execute(
                "INSERT INTO store_schema (component, version) VALUES ('ledger-legacy-import', 1)"
            )
            return True

        return self.store.transaction(tx)
