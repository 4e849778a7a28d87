"""The ledger as tables in the SQLite store's file (the embedded default). Every write is one
transaction under the file's write lock (``SqliteStore.transaction``), so a hand's entries and
balances are applied together or not at all, across threads and processes."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from services.matchmaking.ledger import Entry
from shared.errors import InvalidArgument
from shared.store.sqlite import SqliteStore

from . import HandRow, account_deltas, reference_taken
from .sql import SqlLedger

MIGRATIONS = (
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
_ENTRY = "INSERT INTO ledger_entries (ref, account, kind, amount, tag, at) VALUES (?,?,?,?,?,?)"
_ACCOUNT = (
    "INSERT INTO ledger_accounts (account, stripe, balance) VALUES (?, ?, ?) "
    "ON CONFLICT (account, stripe) DO UPDATE SET balance = balance + excluded.balance"
)
_HAND = (
    "INSERT INTO ledger_hands (hand_id, table_id, tag, tag_group, report, recorded_at) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)


def _entry_row(e: Entry) -> tuple:
    return (e.ref, e.account, e.kind, e.amount, e.tag, e.at)


def _hand_row(h: HandRow) -> tuple:
    return (h.hand_id, h.table_id, h.tag, h.tag_group, h.report, h.recorded_at)


class SqliteLedger(SqlLedger):
    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        store.migrate("ledger", MIGRATIONS)

    @staticmethod
    def _apply(db: sqlite3.Connection, entries: Sequence[Entry]) -> None:
        db.executemany(_ACCOUNT, account_deltas(entries))  # in (account, stripe) order
        db.executemany(_ENTRY, [_entry_row(e) for e in entries])

    def record(self, hand: HandRow, entries: Sequence[Entry]) -> str | None:
        def tx(db: sqlite3.Connection) -> str | None:
            if db.execute(_HAND, _hand_row(hand)).rowcount == 0:
                return db.execute(
                    "SELECT report FROM ledger_hands WHERE hand_id = ?", (hand.hand_id,)
                ).fetchone()[0]
            try:
                self._apply(db, entries)
            except sqlite3.IntegrityError as exc:  # (ref, account) taken: rolled back whole
                raise reference_taken(hand.hand_id) from exc
            (total,) = db.execute(
                "SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE ref = ?",
                (hand.hand_id,),
            ).fetchone()
            if total != 0:
                raise InvalidArgument(f"hand {hand.hand_id}: entries sum to {total}, not 0")
            return None

        return self.store.transaction(tx)

    def grant(self, entry: Entry) -> bool:
        def tx(db: sqlite3.Connection) -> bool:
            exists = db.execute(
                "SELECT 1 FROM ledger_entries WHERE ref = ? AND account = ?",
                (entry.ref, entry.account),
            ).fetchone()
            if exists:
                return False
            self._apply(db, [entry])
            return True

        return self.store.transaction(tx)

    def _read(self, *queries: tuple[str, tuple]) -> list[list[tuple]]:
        def tx(db: sqlite3.Connection) -> list[list[tuple]]:  # one snapshot, no write lock
            return [db.execute(sql.replace("%s", "?"), args).fetchall() for sql, args in queries]

        return self.store.transaction(tx, read_only=True)

    def import_legacy(self, hands: Sequence[HandRow], entries: Sequence[Entry]) -> bool:
        def tx(db: sqlite3.Connection) -> bool:
            done = db.execute(
                "SELECT 1 FROM store_schema WHERE component = 'ledger-legacy-import'"
            ).fetchone()
            if done:
                return False
            db.executemany(_HAND, [_hand_row(h) for h in hands])
            fresh = [
                e
                for e in entries
                if not db.execute(
                    "SELECT 1 FROM ledger_entries WHERE ref = ? AND account = ?",
                    (e.ref, e.account),
                ).fetchone()
            ]
            self._apply(db, fresh)
            db.execute(
                "INSERT INTO store_schema (component, version) VALUES ('ledger-legacy-import', 1)"
            )
            return True

        return self.store.transaction(tx)
