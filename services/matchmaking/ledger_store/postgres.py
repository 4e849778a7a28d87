"""The ledger as tables in the PostgreSQL store's database (the cluster). Recording a hand is
one transaction of four statements: the hand row (``ON CONFLICT DO NOTHING``: a repeat writes
nothing), the account rows upserted in one statement in (account, stripe) order (so concurrent
hands lock shared rows in one order and never deadlock), the entries inserted in one statement
that also returns their sum (refused unless zero). Serialization failures and deadlocks are
retried by the store; a lost connection leaves nothing half-recorded."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from services.matchmaking.ledger import GRANT, Entry
from shared.errors import InvalidArgument
from shared.store.postgres import PostgresStore

from . import GRANT_KINDS, HandRow, LedgerStore, account_deltas, discrepancies

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


class PostgresLedger(LedgerStore):
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
            _, total = self._apply(conn, entries)
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

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        return self.store.transaction(
            lambda conn: conn.execute(sql, args).fetchall(), read_only=True
        )

    def balance(self, account: str) -> int:
        return self._query(
            "SELECT COALESCE(SUM(balance), 0)::bigint FROM ledger_accounts WHERE account = %s",
            (account,),
        )[0][0]

    def has_account(self, account: str) -> bool:
        return bool(
            self._query("SELECT 1 FROM ledger_entries WHERE account = %s LIMIT 1", (account,))
        )

    def entries(self, account: str) -> list[Entry]:
        rows = self._query(
            "SELECT account, ref, kind, amount, tag, at FROM ledger_entries WHERE account = %s "
            "ORDER BY at, kind <> %s, ref",
            (account, GRANT),
        )
        return [Entry(*row) for row in rows]

    def has_hand(self, hand_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM ledger_hands WHERE hand_id = %s", (hand_id,)))

    def hands_of_table(self, table_id: str) -> int:
        return self._query("SELECT COUNT(*) FROM ledger_hands WHERE table_id = %s", (table_id,))[0][
            0
        ]

    def hand_rows(self, tag_group: str) -> list[HandRow]:
        rows = self._query(
            "SELECT hand_id, table_id, tag, tag_group, report, recorded_at FROM ledger_hands "
            "WHERE tag_group = %s ORDER BY hand_id",
            (tag_group,),
        )
        return [HandRow(*row) for row in rows]

    def reconcile(self) -> list[str]:
        def tx(conn: psycopg.Connection) -> list[str]:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one snapshot
            balances = dict(
                conn.execute(
                    "SELECT account, SUM(balance)::bigint FROM ledger_accounts GROUP BY account"
                ).fetchall()
            )
            sums = dict(
                conn.execute(
                    "SELECT account, SUM(amount)::bigint FROM ledger_entries GROUP BY account"
                ).fetchall()
            )
            unbalanced = [
                r
                for (r,) in conn.execute(
                    "SELECT ref FROM ledger_entries WHERE kind <> ALL(%s) GROUP BY ref "
                    "HAVING SUM(amount) <> 0 ORDER BY ref",
                    (list(GRANT_KINDS),),
                ).fetchall()
            ]
            bare = [
                h
                for (h,) in conn.execute(
                    "SELECT hand_id FROM ledger_hands h WHERE NOT EXISTS "
                    "(SELECT 1 FROM ledger_entries e WHERE e.ref = h.hand_id) ORDER BY hand_id"
                ).fetchall()
            ]
            return discrepancies(balances, sums, unbalanced, bare)

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
