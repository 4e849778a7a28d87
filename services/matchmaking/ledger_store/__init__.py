"""Where the ledger keeps its books: one interface (:class:`LedgerStore`), one file per backend
(:mod:`.memory`, :mod:`.sqlite`, :mod:`.postgres`), chosen by the service's store
(:func:`ledger_for`); the SQL ones keep real tables in the store's own database.

The tables (the SQL backends; the memory one holds the same in dictionaries):

* ``ledger_hands`` — one row per recorded hand (primary key the hand id), with its table, tag,
  tag group (indexed: a tournament's hands, a table's hand count) and the report as received.
* ``ledger_entries`` — one row per (hand or grant reference, account): the primary key makes a
  report apply once; the amounts of a hand's entries are checked to sum to zero in the same
  transaction.
* ``ledger_accounts`` — the balance kept with the entries, in the same transaction: a player's
  balance is one row (``stripe`` 0), not a sum over its entries. The house, in every hand that
  has an escape, has ``HOUSE_STRIPES`` rows (its hand entries spread by hand id), so it is no
  hot row that serialises every hand.
* Every transaction locks account rows in one order (account, stripe), so two hands sharing
  players never deadlock; :meth:`LedgerStore.reconcile` checks that every balance is the sum of
  its entries and that every hand sums to zero.
"""

from __future__ import annotations

import abc
import threading
import weakref
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.errors import FailedPrecondition
from shared.store.base import Store

if TYPE_CHECKING:
    from services.matchmaking.ledger import Entry

HOUSE = "house"
HOUSE_STRIPES = 16
GRANT_KINDS = ("grant",)  # entries that create silver; every other kind is part of a hand


@dataclass(frozen=True, slots=True)
class HandRow:
    """A recorded hand as the ledger keeps it. ``report``: the HandReport as canonical JSON."""

    hand_id: str
    table_id: str
    tag: str
    tag_group: str
    report: str
    recorded_at: float


def stripe_of(account: str, ref: str) -> int:
    """The account row an entry moves: the house's spread by reference, anyone else's one."""
    return zlib.crc32(ref.encode()) % HOUSE_STRIPES if account == HOUSE else 0


def account_deltas(entries: Sequence[Entry]) -> list[tuple[str, int, int]]:
    """(account, stripe, amount) per account row the entries move, in locking order."""
    deltas: dict[tuple[str, int], int] = {}
    for e in entries:
        key = (e.account, stripe_of(e.account, e.ref))
        deltas[key] = deltas.get(key, 0) + e.amount
    return [(a, s, amount) for (a, s), amount in sorted(deltas.items())]


def reference_taken(hand_id: str) -> FailedPrecondition:
    """The refusal of a hand whose id is already the reference of an entry of one of its
    accounts (a grant's): entries are unique per (reference, account), nothing is written."""
    return FailedPrecondition(
        f"hand {hand_id}: an account of the hand already has an entry with that reference",
        reason="HAND_ID_REUSED",
        hand_id=hand_id,
    )


def discrepancies(
    balances: dict[str, int],
    sums: dict[str, int],
    unbalanced_hands: Sequence[str],
    hands_without_entries: Sequence[str],
) -> list[str]:
    """What :meth:`LedgerStore.reconcile` reports, from what a backend read."""
    out = [
        f"account {a}: balance {balances.get(a, 0)} but its entries sum to {sums.get(a, 0)}"
        for a in sorted(set(balances) | set(sums))
        if balances.get(a, 0) != sums.get(a, 0)
    ]
    out += [f"hand {h}: its entries do not sum to zero" for h in unbalanced_hands]
    out += [f"hand {h}: recorded without entries" for h in hands_without_entries]
    return out


class LedgerStore(abc.ABC):
    """The ledger's books. Every method that writes is one transaction."""

    @abc.abstractmethod
    def record(self, hand: HandRow, entries: Sequence[Entry]) -> str | None:
        """Record a hand and its entries, and move the balances, in one transaction. None when
        recorded; the report stored under that hand id when it was recorded before (then
        nothing is written). InvalidArgument (nothing written) when the entries do not sum to
        zero; :func:`reference_taken` when an account already has an entry under the hand's
        id."""

    @abc.abstractmethod
    def grant(self, entry: Entry) -> bool:
        """A one-off entry (starting silver), once per (reference, account); True when new."""

    @abc.abstractmethod
    def balance(self, account: str) -> int:
        """The account's balance (0 for an unknown account)."""

    @abc.abstractmethod
    def has_account(self, account: str) -> bool:
        """Whether any entry was ever written to the account."""

    @abc.abstractmethod
    def entries(self, account: str) -> list[Entry]:
        """The account's entries, oldest first (grants before hands at the same time)."""

    @abc.abstractmethod
    def has_hand(self, hand_id: str) -> bool: ...

    @abc.abstractmethod
    def hands_of_table(self, table_id: str) -> int: ...

    @abc.abstractmethod
    def hand_rows(self, tag_group: str) -> list[HandRow]:
        """The hands of a tag group, in hand id order."""

    @abc.abstractmethod
    def reconcile(self) -> list[str]:
        """Every discrepancy: a balance that is not the sum of its account's entries, a hand
        whose entries do not sum to zero or that has none. Empty when the books agree."""

    @abc.abstractmethod
    def import_legacy(self, hands: Sequence[HandRow], entries: Sequence[Entry]) -> bool:
        """Once per database: take in the books of the version that kept the ledger as store
        records (their balances follow from the entries). False when done before."""


_ledgers: weakref.WeakKeyDictionary[Store, LedgerStore] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def ledger_for(store: Store) -> LedgerStore:
    """The ledger kept in ``store``'s database (created, migrated and filled from the legacy
    records the first time), one per store object."""
    with _lock:
        found = _ledgers.get(store)
        if found is not None:
            return found
        from shared.store.memory import MemoryStore
        from shared.store.sqlite import SqliteStore

        if isinstance(store, MemoryStore):
            from .memory import MemoryLedger

            made: LedgerStore = MemoryLedger()
        elif isinstance(store, SqliteStore):
            from .sqlite import SqliteLedger

            made = SqliteLedger(store)
        else:
            from shared.store.postgres import PostgresStore

            if not isinstance(store, PostgresStore):
                raise TypeError(f"no ledger backend for {type(store).__name__}")
            from .postgres import PostgresLedger

            made = PostgresLedger(store)
        from services.matchmaking.ledger import legacy_books

        hands, entries = legacy_books(store)
        if hands or entries:
            made.import_legacy(hands, entries)
        _ledgers[store] = made
        return made
