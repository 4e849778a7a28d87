"""The ledger as tables in the SQLite store's file (the embedded default). Every write is one
transaction under the file's write lock (``SqliteStore.transaction``), so a transaction's
entries and balances are applied together or not at all, across threads and processes, and the
balances it checks cannot change before it writes."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from infra.store.sqlite import SqliteStore
from services.matchmaking.ledger import Entry, upgrade_books
from shared.errors import FailedPrecondition

from . import HandRow, TxRow, account_deltas, check_moves
from .sql import (
    COMPONENT,
    INSERT_ENTRY,
    INSERT_HAND,
    INSERT_TX,
    V1_ENTRIES,
    V1_HANDS,
    V2_RENAMES,
    V2_TABLES,
    SqlLedger,
    entry_row,
    hand_row,
)

MIGRATIONS = (  # version 1 (silver only); version 2 is :meth:`SqliteLedger._upgrade`
    """
    CREATE TABLE ledger_hands (
        hand_id TEXT PRIMARY KEY, table_id TEXT NOT NULL, tag TEXT NOT NULL,
        tag_group TEXT NOT NULL, report TEXT NOT NULL, recorded_at REAL NOT NULL
    );
    CREATE INDEX ledger_hands_table ON ledger_hands (table_id);
    CREATE INDEX ledger_hands_group ON ledger_hands (tag_group, hand_id);
    CREATE TABLE ledger_entries (
        ref TEXT NOT NULL, account TEXT NOT NULL, kind TEXT NOT NULL, amount INTEGER NOT NULL,
        tag TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (ref, account)
    );
    CREATE INDEX ledger_entries_account ON ledger_entries (account, at);
    CREATE TABLE ledger_accounts (
        account TEXT NOT NULL, stripe INTEGER NOT NULL, balance INTEGER NOT NULL,
        PRIMARY KEY (account, stripe)
    )
    """,
)
# SQLite turns an integer that overflows into a REAL: the table refuses anything but integers.
_DIALECT = {
    "text": "TEXT",
    "real": "REAL",
    "int": "INTEGER",
    "extra": ", CHECK (typeof(balance) = 'integer')",
}
_ACCOUNT = (
    "INSERT INTO ledger_accounts (account, asset, stripe, balance) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (account, asset, stripe) DO UPDATE SET balance = balance + excluded.balance"
)
_UPDATE = (
    "UPDATE ledger_accounts SET balance = balance + ? "
    "WHERE account = ? AND asset = ? AND stripe = ?"
)
_READ = "SELECT balance FROM ledger_accounts WHERE account = ? AND asset = ? AND stripe = ?"


def _q(sql: str) -> str:
    return sql.replace("%s", "?")


class SqliteLedger(SqlLedger):
    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        store.migrate("ledger", MIGRATIONS)
        store.transaction(self._upgrade)

    @staticmethod
    def _upgrade(db: sqlite3.Connection) -> bool:
        """Version 1 → 2 in place, once (under the write lock: one process does it)."""
        done = db.execute("SELECT 1 FROM store_schema WHERE component = ?", (COMPONENT,))
        if done.fetchone():
            return False
        txs, entries, rows = upgrade_books(
            db.execute(V1_ENTRIES).fetchall(), dict(db.execute(V1_HANDS).fetchall())
        )
        for statement in V2_TABLES:
            db.execute(statement.format(**_DIALECT))
        SqliteLedger._write_raw(db, txs, entries, rows, "ledger_entries_v2", "ledger_accounts_v2")
        for statement in V2_RENAMES:
            db.execute(statement)
        db.execute("INSERT INTO store_schema (component, version) VALUES (?, 1)", (COMPONENT,))
        return True

    @staticmethod
    def _write_raw(db, txs, entries, rows, entries_table, accounts_table) -> None:
        db.executemany(_q(INSERT_TX), [(t.ref, t.tag, t.digest, t.at) for t in txs])
        db.executemany(
            _q(INSERT_ENTRY.format(table=entries_table)), [entry_row(e) for e in entries]
        )
        db.executemany(
            _ACCOUNT.replace("ledger_accounts", accounts_table),
            [(a, asset, s, v) for (a, asset, s), v in sorted(rows.items())],
        )

    def transact(self, tx: TxRow, entries: Sequence[Entry], hand: HandRow | None) -> str | None:
        def run(db: sqlite3.Connection) -> str | None:
            inserted = db.execute(
                _q(INSERT_TX) + " ON CONFLICT DO NOTHING", (tx.ref, tx.tag, tx.digest, tx.at)
            )
            if inserted.rowcount == 0:
                return db.execute(
                    "SELECT digest FROM ledger_transactions WHERE ref = ?", (tx.ref,)
                ).fetchone()[0]
            deltas = account_deltas(entries)  # in (account, asset, stripe) order
            current = {}
            for account, asset, stripe, _ in deltas:
                row = db.execute(_READ, (account, asset, stripe)).fetchone()
                if row:
                    current[(account, asset, stripe)] = row[0]
            check_moves(tx.ref, current, deltas)
            try:  # an upsert would check the row it proposes (the delta) against the CHECK
                db.executemany(
                    _UPDATE, [(d, a, s, t) for a, s, t, d in deltas if (a, s, t) in current]
                )
                db.executemany(_ACCOUNT, [d for d in deltas if d[:3] not in current])
            except sqlite3.IntegrityError as exc:  # the CHECK: never reached past check_moves
                raise FailedPrecondition(
                    f"transaction {tx.ref}: the ledger's tables refused it ({exc})",
                    reason="INSUFFICIENT_FUNDS",
                    ref=tx.ref,
                ) from exc
            db.executemany(_q(INSERT_ENTRY.format(table="ledger_entries")), map(entry_row, entries))
            if hand is not None:
                db.execute(_q(INSERT_HAND), hand_row(hand))
            return None

        return self.store.transaction(run)

    def _read(self, *queries: tuple[str, tuple]) -> list[list[tuple]]:
        def tx(db: sqlite3.Connection) -> list[list[tuple]]:  # one snapshot, no write lock
            return [db.execute(_q(sql), args).fetchall() for sql, args in queries]

        return self.store.transaction(tx, read_only=True)

    def import_legacy(self, hands: Sequence[HandRow], entries: Sequence[Entry]) -> bool:
        def tx(db: sqlite3.Connection) -> bool:
            done = db.execute(
                "SELECT 1 FROM store_schema WHERE component = 'ledger-legacy-import'"
            ).fetchone()
            if done:
                return False
            db.executemany(
                _q(INSERT_HAND) + " ON CONFLICT DO NOTHING", [hand_row(h) for h in hands]
            )
            old = [(e.ref, e.account, e.kind, e.amount, e.tag, e.at) for e in entries]
            txs, made, rows = upgrade_books(old, {h.hand_id: h.report for h in hands})
            self._write_raw(db, txs, made, rows, "ledger_entries", "ledger_accounts")
            db.execute(
                "INSERT INTO store_schema (component, version) VALUES ('ledger-legacy-import', 1)"
            )
            return True

        return self.store.transaction(tx)
