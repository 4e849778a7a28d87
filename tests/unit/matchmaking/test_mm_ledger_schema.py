"""The ledger's tables on SQLite and PostgreSQL: the CHECK that no balance but the house's goes
below zero is in the database itself (a raw UPDATE is refused), and a database of the
silver-only version (schema 1) is upgraded in place, once, to the assets ledger."""

import sqlite3

import psycopg
import pytest

from infra.store import open_store
from services.matchmaking import ledger
from services.matchmaking.ledger import HOUSE, HandReport
from services.matchmaking.ledger_store import ledger_for
from services.matchmaking.ledger_store import postgres as pg_ledger
from services.matchmaking.ledger_store import sqlite as sqlite_ledger


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


def _write_v1(store, kind):
    """A database as the silver-only version left it: grants that created silver, a hand with
    a bot seat, and a player whose balance went below zero."""
    rows = [
        ("registration", "p1", "grant", 1000, "", 1.0),
        ("registration", "p2", "grant", 1000, "", 1.0),
        ("h1", "p1", "hand", 300, "quick/m", 2.0),
        ("h1", "p2", "hand", -1200, "quick/m", 2.0),
        ("h1", "bot-m-2", "hand", 600, "quick/m", 2.0),
        ("h1", "p3", "escape_penalty", -400, "quick/m", 2.0),
        ("h1", HOUSE, "house_share", 700, "quick/m", 2.0),
    ]
    body = ledger.records.dump(
        {
            "hand_id": "h1",
            "table_id": "t1",
            "tag": "quick/m",
            "player_ids": ["p1", "p2", "bot-m-2", "p3"],
            "payments": [300, -1200, 600, -400],
            "house": 700,
            "escaped_seat": 3,
        }
    ).decode()
    balances: dict[str, int] = {}
    for _, account, _, amount, _, _ in rows:
        balances[account] = balances.get(account, 0) + amount
    if kind == "sqlite":
        store.migrate("ledger", sqlite_ledger.MIGRATIONS)

        def fill(db):
            db.executemany("INSERT INTO ledger_entries VALUES (?, ?, ?, ?, ?, ?)", rows)
            db.executemany("INSERT INTO ledger_accounts VALUES (?, 0, ?)", list(balances.items()))
            db.execute(
                "INSERT INTO ledger_hands VALUES ('h1', 't1', 'quick/m', 'quick/m', ?, 2.0)",
                (body,),
            )

    else:
        store.migrate("ledger", pg_ledger.MIGRATIONS)

        def fill(conn):
            cur = conn.cursor()
            cur.executemany("INSERT INTO ledger_entries VALUES (%s, %s, %s, %s, %s, %s)", rows)
            cur.executemany(
                "INSERT INTO ledger_accounts VALUES (%s, 0, %s)", list(balances.items())
            )
            conn.execute(
                "INSERT INTO ledger_hands VALUES ('h1', 't1', 'quick/m', 'quick/m', %s, 2.0)",
                (body,),
            )

    store.transaction(fill)
    return balances


def test_a_silver_only_database_is_upgraded_in_place_once(shared_backend):
    first = open_store(shared_backend.url)  # no ledger opened on it yet: schema 1 written raw
    try:
        before = _write_v1(first, shared_backend.kind)
    finally:
        first.close()
    assert before == {"p1": 1300, "p2": -200, "bot-m-2": 600, "p3": -400, HOUSE: 700}
    store = shared_backend.open()
    # Every entry is silver; grants got the house's side; the bot's 600 went to the house; the
    # balances below zero were written off by the house.
    assert ledger.balances(store, "p1") == {
        "silver": 1300,
        "room_card": 0,
        "double_card": 0,
        "match_card": 0,
    }
    assert ledger.balance(store, "p2") == 0 and ledger.balance(store, "p3") == 0
    assert ledger.balance(store, "bot-m-2") == 0
    assert ledger.balance(store, HOUSE) == 700 - 2000 + 600 - 200 - 400
    sweep = [e for e in ledger.entries(store, HOUSE) if e.ref == ledger.BOT_SWEEP_REF]
    assert [e.amount for e in sweep] == [600]
    assert [(e.kind, e.amount) for e in ledger.entries(store, "p2")] == [
        ("grant", 1000),
        ("hand", -1200),
        ("migration", 200),
    ]
    assert ledger.reconcile(store) == []
    # The hand's report is still its digest: the outbox's redelivery is a repeat.
    seats = ("p1", "p2", "bot-m-2", "p3")
    again = HandReport("h1", "t1", "quick/m", seats, (300, -1200, 600, -400), 700, 3)
    assert ledger.record_hand(store, again, 9.0) is False
    # A second replica opening the upgraded database changes nothing.
    other = shared_backend.open()
    assert ledger_for(other) is not ledger_for(store)
    assert ledger.balance(other, HOUSE) == ledger.balance(store, HOUSE)
    assert len(ledger.entries(other, HOUSE)) == len(ledger.entries(store, HOUSE))
    # And the upgraded tables carry the CHECK.
    ledger.welcome_grant(store, "p4", "iss|p4", 10, 0, 10.0)
    with pytest.raises((sqlite3.IntegrityError, psycopg.errors.CheckViolation)):
        _raw(store, "UPDATE ledger_accounts SET balance = -1 WHERE account = %s", "p4")
