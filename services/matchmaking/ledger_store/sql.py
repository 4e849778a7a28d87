"""What the SQL backends read alike: the queries on the ledger's tables, written once with
``%s`` placeholders (the SQLite backend turns them into ``?``). Each backend supplies how a
query runs (:meth:`SqlLedger._read`: statements in one transaction, one snapshot)."""

from __future__ import annotations

import abc

from services.matchmaking.ledger import GRANT, Entry

from . import GRANT_KINDS, HandRow, LedgerStore, discrepancies

_NOT_GRANT = "kind NOT IN ({})".format(", ".join(f"'{k}'" for k in GRANT_KINDS))
BALANCES = "SELECT account, SUM(balance) FROM ledger_accounts GROUP BY account"
SUMS = "SELECT account, SUM(amount) FROM ledger_entries GROUP BY account"
UNBALANCED = (
    f"SELECT ref FROM ledger_entries WHERE {_NOT_GRANT} GROUP BY ref HAVING SUM(amount) <> 0 "
    "ORDER BY ref"
)
BARE = (
    "SELECT hand_id FROM ledger_hands h WHERE NOT EXISTS "
    "(SELECT 1 FROM ledger_entries e WHERE e.ref = h.hand_id) ORDER BY hand_id"
)


class SqlLedger(LedgerStore):
    @abc.abstractmethod
    def _read(self, *queries: tuple[str, tuple]) -> list[list[tuple]]:
        """The rows of each query, all read in one transaction."""

    def _rows(self, sql: str, *args: object) -> list[tuple]:
        return self._read((sql, args))[0]

    def balance(self, account: str) -> int:
        sql = "SELECT COALESCE(SUM(balance), 0) FROM ledger_accounts WHERE account = %s"
        return int(self._rows(sql, account)[0][0])

    def has_account(self, account: str) -> bool:
        return bool(self._rows("SELECT 1 FROM ledger_entries WHERE account = %s LIMIT 1", account))

    def entries(self, account: str) -> list[Entry]:
        rows = self._rows(
            "SELECT account, ref, kind, amount, tag, at FROM ledger_entries WHERE account = %s "
            "ORDER BY at, kind <> %s, ref",
            account,
            GRANT,
        )
        return [Entry(*row) for row in rows]

    def has_hand(self, hand_id: str) -> bool:
        return bool(self._rows("SELECT 1 FROM ledger_hands WHERE hand_id = %s", hand_id))

    def hands_of_table(self, table_id: str) -> int:
        return self._rows("SELECT COUNT(*) FROM ledger_hands WHERE table_id = %s", table_id)[0][0]

    def hand_rows(self, tag_group: str) -> list[HandRow]:
        rows = self._rows(
            "SELECT hand_id, table_id, tag, tag_group, report, recorded_at FROM ledger_hands "
            "WHERE tag_group = %s ORDER BY hand_id",
            tag_group,
        )
        return [HandRow(*row) for row in rows]

    def reconcile(self) -> list[str]:
        balances, sums, unbalanced, bare = self._read(
            (BALANCES, ()), (SUMS, ()), (UNBALANCED, ()), (BARE, ())
        )
        return discrepancies(
            {a: int(v) for a, v in balances},
            {a: int(v) for a, v in sums},
            [r for (r,) in unbalanced],
            [h for (h,) in bare],
        )
