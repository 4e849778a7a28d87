"""The ledger as tables in the SQLite store's file (the embedded default). Every write is one
transaction under the file's write lock (``SqliteStore.transaction``), so a transaction's
entries and balances are applied together or not at all, across threads and processes, and the
balances it checks cannot change before it writes."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from infra.store.sqlite import SqliteStore
from services.matchmaking.domain.economy.books import HandRow, TxRow, account_deltas, check_moves
from services.matchmaking.domain.economy.ledger import Entry
from services.matchmaking.storage.ledger_sql import (
    INSERT_ENTRY,
    INSERT_HAND,
    INSERT_TX,
    SCHEMA,
    SqlLedger,
    entry_row,
    hand_row,
)
from shared.errors import FailedPrecondition

# SQLite turns an integer that overflows into a REAL: the table refuses anything but integers.
_DIALECT = {
    "text": "TEXT",
    "real": "REAL",
    "int": "INTEGER",
    "extra": ", CHECK (typeof(balance) = 'integer')",
}
MIGRATIONS = (SCHEMA.format(**_DIALECT),)
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
            db.executemany(_q(INSERT_ENTRY), map(entry_row, entries))
            if hand is not None:
                db.execute(_q(INSERT_HAND), hand_row(hand))
            return None

        return self.store.transaction(run)

    def _read(self, *queries: tuple[str, tuple]) -> list[list[tuple]]:
        def tx(db: sqlite3.Connection) -> list[list[tuple]]:  # one snapshot, no write lock
            return [db.execute(_q(sql), args).fetchall() for sql, args in queries]

        return self.store.transaction(tx, read_only=True)
