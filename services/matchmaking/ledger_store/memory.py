"""The ledger in memory (for the memory store): the same books as the SQL backends, in
dictionaries under one lock."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from services.matchmaking.ledger import GRANT, Entry
from shared.errors import InvalidArgument

from . import GRANT_KINDS, HandRow, LedgerStore, account_deltas, discrepancies, reference_taken


class MemoryLedger(LedgerStore):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hands: dict[str, HandRow] = {}
        self._entries: dict[tuple[str, str], Entry] = {}  # (ref, account)
        self._by_account: dict[str, list[Entry]] = {}
        self._balances: dict[tuple[str, int], int] = {}  # (account, stripe)
        self._imported = False

    def _apply(self, entries: Sequence[Entry]) -> None:
        for account, stripe, amount in account_deltas(entries):
            self._balances[(account, stripe)] = self._balances.get((account, stripe), 0) + amount
        for e in entries:
            self._entries[(e.ref, e.account)] = e
            self._by_account.setdefault(e.account, []).append(e)

    def record(self, hand: HandRow, entries: Sequence[Entry]) -> str | None:
        with self._lock:
            stored = self._hands.get(hand.hand_id)
            if stored is not None:
                return stored.report
            if sum(e.amount for e in entries) != 0:
                raise InvalidArgument(f"hand {hand.hand_id}: entries do not sum to zero")
            if any((e.ref, e.account) in self._entries for e in entries):
                raise reference_taken(hand.hand_id)
            self._apply(entries)  # first: it computes everything before it changes anything
            self._hands[hand.hand_id] = hand
            return None

    def grant(self, entry: Entry) -> bool:
        with self._lock:
            if (entry.ref, entry.account) in self._entries:
                return False
            self._apply([entry])
            return True

    def balance(self, account: str) -> int:
        with self._lock:
            return sum(v for (a, _), v in self._balances.items() if a == account)

    def has_account(self, account: str) -> bool:
        with self._lock:
            return account in self._by_account

    def entries(self, account: str) -> list[Entry]:
        with self._lock:
            out = list(self._by_account.get(account, ()))
        out.sort(key=lambda e: (e.at, e.kind != GRANT, e.ref))
        return out

    def has_hand(self, hand_id: str) -> bool:
        with self._lock:
            return hand_id in self._hands

    def hands_of_table(self, table_id: str) -> int:
        with self._lock:
            return sum(1 for h in self._hands.values() if h.table_id == table_id)

    def hand_rows(self, tag_group: str) -> list[HandRow]:
        with self._lock:
            return sorted(
                (h for h in self._hands.values() if h.tag_group == tag_group),
                key=lambda h: h.hand_id,
            )

    def reconcile(self) -> list[str]:
        with self._lock:
            balances: dict[str, int] = {}
            for (account, _), v in self._balances.items():
                balances[account] = balances.get(account, 0) + v
            sums: dict[str, int] = {}
            per_hand: dict[str, int] = {}
            for (ref, account), e in self._entries.items():
                sums[account] = sums.get(account, 0) + e.amount
                if e.kind not in GRANT_KINDS:
                    per_hand[ref] = per_hand.get(ref, 0) + e.amount
            unbalanced = sorted(ref for ref, total in per_hand.items() if total)
            bare = sorted(h for h in self._hands if h not in per_hand)
        return discrepancies(balances, sums, unbalanced, bare)

    def import_legacy(self, hands: Sequence[HandRow], entries: Sequence[Entry]) -> bool:
        with self._lock:
            if self._imported:
                return False
            for hand in hands:
                self._hands.setdefault(hand.hand_id, hand)
            self._apply([e for e in entries if (e.ref, e.account) not in self._entries])
            self._imported = True
            return True
