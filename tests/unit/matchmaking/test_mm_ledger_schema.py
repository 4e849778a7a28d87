"""The ledger's tables on SQLite and PostgreSQL: the CHECK that no balance but the house's goes
below zero is in the database itself (a raw UPDATE is refused)."""

import sqlite3

import psycopg
import pytest

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HOUSE


def _raw(store, sql, *args):
    """Run one statement on the store's database directly, as a bug or an intruder would."""
    if store.__class__.__name__ == "SqliteStore":
        return store.transaction(lambda db: db.execute(sql.replace("%s", "?"), args).fetchall())
    return store.transaction(lambda conn: conn.execute(sql, args).rowcount)


def test_the_database_refuses_a_balance_below_zero(shared_backend):
    store = shared_backend.open()
    ledger.welcome_grant(store, "p1", "iss|p1", 100, 1, 1.0)
    refused = (sqlite3.IntegrityError, psycopg.errors.CheckViolation)
    for asset in ("silver", "room_card"):
        with pytest.raises(refused, match=r"ledger_balance_not_negative|CHECK"):
            _raw(
                store,
                "UPDATE ledger_accounts SET balance = -1 WHERE account = %s AND asset = %s",
                "p1",
                asset,
            )
        with pytest.raises(refused):
            _raw(
                store,
                "INSERT INTO ledger_accounts (account, asset, stripe, balance) "
                "VALUES (%s, %s, 0, -5)",
                "escrow/T",
                asset,
            )
    # The house alone may be below zero (it funds every grant).
    _raw(store, "UPDATE ledger_accounts SET balance = balance - 1 WHERE account = %s", HOUSE)
    assert ledger.balance(store, "p1") == 100 and ledger.balance(store, "p1", "room_card") == 1
