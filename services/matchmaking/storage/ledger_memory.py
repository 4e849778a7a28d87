"""The ledger in memory (for the memory store): the same books as the SQL backends, in
dictionaries under one lock."""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence

from services.matchmaking.domain.economy.books import (
    Cursor,
    HandRow,
    Key,
    LedgerStore,
    TxRow,
    account_deltas,
    check_moves,
    discrepancies,
)
from services.matchmaking.domain.economy.ledger import Entry


def _order(e: Entry) -> tuple[float, str, int]:
    return (e.at, e.ref, e.seq)


class MemoryLedger(LedgerStore):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hands: dict[str, HandRow] = {}
        self._txs: dict[str, TxRow] = {}
        self._entries: dict[tuple[str, int], Entry] = {}  # (ref, seq)
        self._by_account: dict[str, list[Entry]] = {}
        self._balances: dict[Key, int] = {}  # (account, asset, stripe)

    def _write(self, entries: Sequence[Entry]) -> None:
        for account, asset, stripe, amount in account_deltas(entries):
            key = (account, asset, stripe)
            self._balances[key] = self._balances.get(key, 0) + amount
        for e in entries:
            self._entries[(e.ref, e.seq)] = e
            self._by_account.setdefault(e.account, []).append(e)

    def transact(self, tx: TxRow, entries: Sequence[Entry], hand: HandRow | None) -> str | None:
        with self._lock:
            stored = self._txs.get(tx.ref)
            if stored is not None:
                return stored.digest
            check_moves(tx.ref, self._balances, account_deltas(entries))  # before any change
            self._write(entries)
            self._txs[tx.ref] = tx
            if hand is not None:
                self._hands[hand.hand_id] = hand
            return None

    def balance(self, account: str, asset: str) -> int:
        with self._lock:
            return sum(v for (a, s, _), v in self._balances.items() if a == account and s == asset)

    def balances(self, account: str) -> dict[str, int]:
        out: dict[str, int] = {}
        with self._lock:
            for (a, asset, _), v in self._balances.items():
                if a == account:
                    out[asset] = out.get(asset, 0) + v
        return out

    def has_account(self, account: str) -> bool:
        with self._lock:
            return account in self._by_account

    def entries(self, account: str) -> list[Entry]:
        with self._lock:
            out = list(self._by_account.get(account, ()))
        return sorted(out, key=_order)

    def entries_page(
        self, account: str, asset: str | None, after: Cursor | None, limit: int
    ) -> list[Entry]:
        with self._lock:
            found = [
                e
                for e in self._by_account.get(account, ())
                if (asset is None or e.asset == asset)
                and (after is None or _order(e) < (after.at, after.ref, after.seq))
            ]
        return sorted(found, key=_order, reverse=True)[:limit]

    def account_net(
        self, account: str, asset: str, start: float, end: float, kind: str | None = None
    ) -> int:
        with self._lock:
            return sum(
                e.amount
                for e in self._by_account.get(account, ())
                if e.asset == asset and start <= e.at < end and kind in (None, e.kind)
            )

    def has_hand(self, hand_id: str) -> bool:
        with self._lock:
            return hand_id in self._hands

    def hands_of_table(self, table_id: str) -> int:
        with self._lock:
            return sum(1 for h in self._hands.values() if h.table_id == table_id)

    def tables_of_hands(self, hand_ids: Collection[str]) -> dict[str, str]:
        with self._lock:
            return {h: self._hands[h].table_id for h in hand_ids if h in self._hands}

    def hand_rows(self, tag_group: str, tag_prefix: str = "") -> list[HandRow]:
        with self._lock:
            return sorted(
                (
                    h
                    for h in self._hands.values()
                    if h.tag_group == tag_group and h.tag.startswith(tag_prefix)
                ),
                key=lambda h: h.hand_id,
            )

    def hands_between(self, start: float, end: float) -> list[HandRow]:
        with self._lock:
            found = [h for h in self._hands.values() if start <= h.recorded_at < end]
        return sorted(found, key=lambda h: (h.recorded_at, h.hand_id))

    def reconcile(self) -> list[str]:
        with self._lock:
            balances: dict[tuple[str, str], int] = {}
            for (account, asset, _), v in self._balances.items():
                balances[(account, asset)] = balances.get((account, asset), 0) + v
            sums: dict[tuple[str, str], int] = {}
            per_tx: dict[tuple[str, str], int] = {}
            for e in self._entries.values():
                sums[(e.account, e.asset)] = sums.get((e.account, e.asset), 0) + e.amount
                per_tx[(e.ref, e.asset)] = per_tx.get((e.ref, e.asset), 0) + e.amount
            unbalanced = sorted(k for k, total in per_tx.items() if total)
            refs = {ref for ref, _ in self._entries}
            bare = sorted(h for h in self._hands if h not in refs)
        return discrepancies(balances, sums, unbalanced, bare)
