"""The ledger as tables in the PostgreSQL store's database (the cluster). Recording a hand is
one transaction of four statements: the hand row (``ON CONFLICT DO NOTHING``: a repeat writes
nothing), the account rows upserted in one statement in (account, stripe) order (so concurrent
hands lock shared rows in one order and never deadlock), the entries inserted in one statement
that also returns their sum (refused unless zero). Serialization failures and deadlocks are
retried by the store; a lost connection leaves nothing half-recorded."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from services.matchmaking.ledger import Entry
from shared.errors import InvalidArgument
from shared.store.postgres import PostgresStore

from . import HandRow, account_deltas, reference_taken
from .sql import SqlLedger

MIGRATIONS = (
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
_HAND = (
    "INSERT INTO ledger_hands (hand_id, table_id, tag, tag_group, report, recorded_at) "
    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING hand_id"
)
_ACCOUNTS = (
    "INSERT INTO ledger_accounts AS a (account, stripe, balance) "
    "SELECT * FROM unnest(%s::text[], %s::smallint[], %s::bigint[]) ORDER BY 1, 2 "
    "ON CONFLICT (account, stripe) DO UPDATE SET balance = a.balance + EXCLUDED.balance"
)
_ENTRIES = (
    "WITH ins AS (INSERT INTO ledger_entries (ref, account, kind, amount, tag, at) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[], %s::text[], "
    "%s::float8[]) ON CONFLICT DO NOTHING RETURNING amount) "
    "SELECT count(*), COALESCE(sum(amount), 0) FROM ins"
)


def _columns(rows: Sequence[tuple]) -> list[list]:
    return [list(col) for col in zip(*rows, strict=True)] if rows else []


class PostgresLedger(SqlLedger):
    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        store.migrate("ledger", MIGRATIONS)

    @staticmethod
    def _apply(conn: psycopg.Connection, entries: Sequence[Entry]) -> tuple[int, int]:
        """Move the balances, then insert the entries; (entries inserted, their sum)."""
        rows = [(e.ref, e.account, e.kind, e.amount, e.tag, e.at) for e in entries]
        cols = _columns(rows) or [[], [], [], [], [], []]
        inserted, total = conn.execute(_ENTRIES, cols).fetchone()
        if inserted != len(entries):  # written before (a grant's repeat): balances untouched
            raise _Repeat
        deltas = account_deltas(entries)
        conn.execute(_ACCOUNTS, _columns(deltas) or [[], [], []])
        return inserted, total

    def record(self, hand: HandRow, entries: Sequence[Entry]) -> str | None:
        def tx(conn: psycopg.Connection) -> str | None:
            args = (
                hand.hand_id,
                hand.table_id,
                hand.tag,
                hand.tag_group,
                hand.report,
                hand.recorded_at,
            )
            if conn.execute(_HAND, args).fetchone() is None:
                return conn.execute(
                    "SELECT report FROM ledger_hands WHERE hand_id = %s", (hand.hand_id,)
                ).fetchone()[0]
            try:
                _, total = self._apply(conn, entries)
            except _Repeat as exc:  # (ref, account) taken: the transaction rolls back
                raise reference_taken(hand.hand_id) from exc
            if total != 0:
                raise InvalidArgument(f"hand {hand.hand_id}: entries sum to {total}, not 0")
            return None

        return self.store.transaction(tx)

    def grant(self, entry: Entry) -> bool:
        def tx(conn: psycopg.Connection) -> bool:
            self._apply(conn, [entry])
            return True

        try:
            return self.store.transaction(tx)
        except _Repeat:
            return False

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
                conn.execute(
                    _HAND,
                    (h.hand_id, h.table_id, h.tag, h.tag_group, h.report, h.recorded_at),
                )
            fresh = [
                e
                for e in entries
                if not conn.execute(
                    "SELECT 1 FROM ledger_entries WHERE ref = %s AND account = %s",
                    (e.ref, e.account),
                ).fetchone()
            ]
            if fresh:
                self._apply(conn, fresh)
            conn.execute(
                "INSERT INTO store_schema (component, version) VALUES ('ledger-legacy-import', 1)"
            )
            return True

        return self.store.transaction(tx)


class _Repeat(Exception):
    """A grant already written: its transaction rolls back, nothing moved."""
