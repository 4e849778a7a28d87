"""What the SQL backends share: the ledger's tables (:data:`SCHEMA`) and the queries on them,
written once with ``%s`` placeholders (the SQLite backend turns them into ``?``). Each backend
supplies how a query runs (:meth:`SqlLedger._read`: statements in one transaction, one
snapshot) and the column types of its dialect."""

from __future__ import annotations

import abc
from collections.abc import Collection, Sequence

from services.matchmaking.domain.economy.books import Cursor, HandRow, LedgerStore, discrepancies
from services.matchmaking.domain.economy.ledger import Entry

# The ledger's tables, in the dialect's types: {text} a string column of byte (code point)
# order, {real}, {int} a 64-bit integer, {extra} a dialect's further CHECK on balances.
# Each backend's ``MIGRATIONS`` is this one script (:meth:`Store.migrate` runs it once).
SCHEMA = """
CREATE TABLE ledger_hands (
    hand_id {text} PRIMARY KEY, table_id text NOT NULL, tag text NOT NULL,
    tag_group text NOT NULL, report text NOT NULL, recorded_at {real} NOT NULL
);
CREATE INDEX ledger_hands_table ON ledger_hands (table_id);
CREATE INDEX ledger_hands_group ON ledger_hands (tag_group, hand_id);
CREATE INDEX ledger_hands_time ON ledger_hands (recorded_at);
CREATE TABLE ledger_transactions (
    ref {text} PRIMARY KEY, tag text NOT NULL, digest text NOT NULL, at {real} NOT NULL
);
CREATE TABLE ledger_entries (
    ref {text} NOT NULL, seq integer NOT NULL, account {text} NOT NULL, asset {text} NOT NULL,
    kind text NOT NULL, amount {int} NOT NULL, tag text NOT NULL, at {real} NOT NULL,
    note text NOT NULL, PRIMARY KEY (ref, seq)
);
CREATE INDEX ledger_entries_account ON ledger_entries (account, at, ref, seq);
CREATE TABLE ledger_accounts (
    account {text} NOT NULL, asset {text} NOT NULL, stripe smallint NOT NULL,
    balance {int} NOT NULL, PRIMARY KEY (account, asset, stripe),
    CONSTRAINT ledger_balance_not_negative CHECK (balance >= 0 OR account = 'house'){extra}
)
"""
INSERT_TX = "INSERT INTO ledger_transactions (ref, tag, digest, at) VALUES (%s, %s, %s, %s)"
INSERT_ENTRY = (
    "INSERT INTO ledger_entries (ref, seq, account, asset, kind, amount, tag, at, note) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
INSERT_HAND = (
    "INSERT INTO ledger_hands (hand_id, table_id, tag, tag_group, report, recorded_at) "
    "VALUES (%s, %s, %s, %s, %s, %s)"
)

_COLUMNS = "account, ref, kind, amount, tag, at, asset, note, seq"
BALANCES = "SELECT account, asset, SUM(balance) FROM ledger_accounts GROUP BY account, asset"
SUMS = "SELECT account, asset, SUM(amount) FROM ledger_entries GROUP BY account, asset"
UNBALANCED = (
    "SELECT ref, asset FROM ledger_entries GROUP BY ref, asset HAVING SUM(amount) <> 0 "
    "ORDER BY ref, asset"
)
BARE = (
    "SELECT hand_id FROM ledger_hands h WHERE NOT EXISTS "
    "(SELECT 1 FROM ledger_entries e WHERE e.ref = h.hand_id) ORDER BY hand_id"
)


def entry_row(e: Entry) -> tuple:
    return (e.ref, e.seq, e.account, e.asset, e.kind, e.amount, e.tag, e.at, e.note)


def hand_row(h: HandRow) -> tuple:
    return (h.hand_id, h.table_id, h.tag, h.tag_group, h.report, h.recorded_at)


class SqlLedger(LedgerStore):
    @abc.abstractmethod
    def _read(self, *queries: tuple[str, tuple]) -> list[list[tuple]]:
        """The rows of each query, all read in one transaction."""

    def _rows(self, sql: str, *args: object) -> list[tuple]:
        return self._read((sql, args))[0]

    def balance(self, account: str, asset: str) -> int:
        sql = (
            "SELECT COALESCE(SUM(balance), 0) FROM ledger_accounts "
            "WHERE account = %s AND asset = %s"
        )
        return int(self._rows(sql, account, asset)[0][0])

    def balances(self, account: str) -> dict[str, int]:
        sql = "SELECT asset, SUM(balance) FROM ledger_accounts WHERE account = %s GROUP BY asset"
        return {asset: int(v) for asset, v in self._rows(sql, account)}

    def has_account(self, account: str) -> bool:
        return bool(self._rows("SELECT 1 FROM ledger_entries WHERE account = %s LIMIT 1", account))

    def entries(self, account: str) -> list[Entry]:
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM ledger_entries WHERE account = %s ORDER BY at, ref, seq",
            account,
        )
        return [Entry(*row) for row in rows]

    def entries_page(
        self, account: str, asset: str | None, after: Cursor | None, limit: int
    ) -> list[Entry]:
        sql = f"SELECT {_COLUMNS} FROM ledger_entries WHERE account = %s"
        args: list[object] = [account]
        if asset is not None:
            sql += " AND asset = %s"
            args.append(asset)
        if after is not None:
            sql += " AND (at, ref, seq) < (%s, %s, %s)"
            args += [after.at, after.ref, after.seq]
        sql += " ORDER BY at DESC, ref DESC, seq DESC LIMIT %s"
        return [Entry(*row) for row in self._rows(sql, *args, limit)]

    def account_net(
        self, account: str, asset: str, start: float, end: float, kind: str | None = None
    ) -> int:
        sql = (
            "SELECT COALESCE(SUM(amount), 0) FROM ledger_entries "
            "WHERE account = %s AND asset = %s AND at >= %s AND at < %s"
        )
        if kind is None:
            return int(self._rows(sql, account, asset, start, end)[0][0])
        return int(self._rows(sql + " AND kind = %s", account, asset, start, end, kind)[0][0])

    def has_hand(self, hand_id: str) -> bool:
        return bool(self._rows("SELECT 1 FROM ledger_hands WHERE hand_id = %s", hand_id))

    def hands_of_table(self, table_id: str) -> int:
        return self._rows("SELECT COUNT(*) FROM ledger_hands WHERE table_id = %s", table_id)[0][0]

    def tables_of_hands(self, hand_ids: Collection[str]) -> dict[str, str]:
        ids = sorted(set(hand_ids))
        if not ids:
            return {}
        marks = ", ".join(["%s"] * len(ids))
        sql = f"SELECT hand_id, table_id FROM ledger_hands WHERE hand_id IN ({marks})"
        return {str(h): str(t) for h, t in self._rows(sql, *ids)}

    def _hands(self, where: str, order: str, *args: object) -> list[HandRow]:
        rows = self._rows(
            "SELECT hand_id, table_id, tag, tag_group, report, recorded_at FROM ledger_hands "
            f"WHERE {where} ORDER BY {order}",
            *args,
        )
        return [HandRow(*row) for row in rows]

    def hand_rows(self, tag_group: str, tag_prefix: str = "") -> list[HandRow]:
        if not tag_prefix:
            return self._hands("tag_group = %s", "hand_id", tag_group)
        return self._hands(
            "tag_group = %s AND substr(tag, 1, %s) = %s",
            "hand_id",
            tag_group,
            len(tag_prefix),
            tag_prefix,
        )

    def hands_between(self, start: float, end: float) -> list[HandRow]:
        return self._hands(
            "recorded_at >= %s AND recorded_at < %s", "recorded_at, hand_id", start, end
        )

    def reconcile(self) -> list[str]:
        balances, sums, unbalanced, bare = self._read(
            (BALANCES, ()), (SUMS, ()), (UNBALANCED, ()), (BARE, ())
        )
        return discrepancies(
            {(a, s): int(v) for a, s, v in balances},
            {(a, s): int(v) for a, s, v in sums},
            [(r, s) for r, s in unbalanced],
            [h for (h,) in bare],
        )


def columns(rows: Sequence[tuple]) -> list[list]:
    return [list(col) for col in zip(*rows, strict=True)] if rows else []
