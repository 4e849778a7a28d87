"""Where the ledger keeps its books: one interface (:class:`LedgerStore`, the ledger's
repository), implemented outside the domain by one file per backend
(:mod:`services.matchmaking.storage.ledger_memory`, ``ledger_sqlite``, ``ledger_postgres``),
chosen by the service's store (:func:`services.matchmaking.storage.ledger.ledger_for`, reached
through :func:`books_of`); the SQL ones keep real tables in the store's own database.

The tables (the SQL backends; the memory one holds the same in dictionaries):

* ``ledger_transactions`` — one row per transaction (primary key its reference, the
  idempotency key), with the digest of its legs: a repeat with the same legs writes nothing, one
  with other legs is refused.
* ``ledger_entries`` — one row per leg (primary key (reference, leg number)): account, asset,
  kind, amount, note. A transaction's entries sum to zero per asset (checked by the domain before
  and by :meth:`LedgerStore.reconcile` after).
* ``ledger_accounts`` — the balance per (account, asset), kept with the entries in the same
  transaction: reading one is one row, not a sum. ``CHECK (balance >= 0 OR account = 'house')``
  in the table itself, so no player, escrow or hold account goes below zero whatever writes it.
  The house has ``HOUSE_STRIPES`` rows per asset (its entries spread by reference), so it is no
  hot row that serialises every hand.
* ``ledger_hands`` — one row per recorded hand (its transaction's reference is the hand id),
  with its table, tag, tag group (indexed: a tournament's hands, a table's hand count) and the
  report as received.
* Every transaction locks its account rows in one order (account, asset, stripe), reads them,
  refuses as a whole what would take a balance below zero (:func:`check_moves`:
  INSUFFICIENT_FUNDS) or past 64 bits (BALANCE_OVERFLOW), then writes; two transactions sharing
  accounts never deadlock.

The SQL backends create these tables in one migration script (``MIGRATIONS`` in each backend's
file), run by the store's ``migrate`` mechanism.
"""

from __future__ import annotations

import abc
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shared.errors import FailedPrecondition

if TYPE_CHECKING:
    from services.matchmaking.domain.economy.ledger import Entry

HOUSE = "house"
HOUSE_STRIPES = 16
MAX_BALANCE = 2**63 - 1  # balances are signed 64-bit (bigint) integers
MIN_BALANCE = -(2**63)


@dataclass(frozen=True, slots=True)
class HandRow:
    """A recorded hand as the ledger keeps it. ``report``: the HandReport as canonical JSON."""

    hand_id: str
    table_id: str
    tag: str
    tag_group: str
    report: str
    recorded_at: float


@dataclass(frozen=True, slots=True)
class TxRow:
    """A transaction as the ledger keeps it: its reference (idempotency key), tag, the digest of
    its legs (what a repeat must match) and when it was written."""

    ref: str
    tag: str
    digest: str
    at: float


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page of an account's entries (newest first) continues: strictly older than
    this (at, ref, seq)."""

    at: float
    ref: str
    seq: int


def stripe_of(account: str, ref: str) -> int:
    """The account row an entry moves: the house's spread by reference, anyone else's one."""
    return zlib.crc32(ref.encode()) % HOUSE_STRIPES if account == HOUSE else 0


Key = tuple[str, str, int]  # (account, asset, stripe): one balance row


def account_deltas(entries: Sequence[Entry]) -> list[tuple[str, str, int, int]]:
    """(account, asset, stripe, amount) per balance row the entries move, in locking order."""
    deltas: dict[Key, int] = {}
    for e in entries:
        key = (e.account, e.asset, stripe_of(e.account, e.ref))
        deltas[key] = deltas.get(key, 0) + e.amount
    return [(a, asset, s, amount) for (a, asset, s), amount in sorted(deltas.items())]


def check_moves(ref: str, current: Mapping[Key, int], deltas: Sequence[tuple]) -> None:
    """Refuse, before anything is written, a transaction that would take an account other than
    the house below zero (FailedPrecondition INSUFFICIENT_FUNDS naming the account, asset,
    balance and amount) or any balance row past 64 bits (FailedPrecondition BALANCE_OVERFLOW):
    both are definite answers, the same on every retry while the balances stay."""
    for account, asset, stripe, amount in deltas:
        before = current.get((account, asset, stripe), 0)
        after = before + amount
        if after < 0 and account != HOUSE:
            raise FailedPrecondition(
                f"account {account} has {before} {asset}; transaction {ref} needs {-amount}",
                reason="INSUFFICIENT_FUNDS",
                account=account,
                asset=asset,
                balance=before,
                amount=-amount,
                ref=ref,
            )
        if not MIN_BALANCE <= after <= MAX_BALANCE:
            raise FailedPrecondition(
                f"account {account}: {asset} balance {before} {amount:+d} leaves the 64-bit "
                f"range (at most {MAX_BALANCE}); transaction {ref} refused",
                reason="BALANCE_OVERFLOW",
                account=account,
                asset=asset,
                balance=before,
                amount=amount,
                ref=ref,
            )


def discrepancies(
    balances: Mapping[tuple[str, str], int],
    sums: Mapping[tuple[str, str], int],
    unbalanced: Sequence[tuple[str, str]],
    hands_without_entries: Sequence[str],
) -> list[str]:
    """What :meth:`LedgerStore.reconcile` reports, from what a backend read: balances keyed by
    (account, asset), unbalanced (reference, asset) pairs."""
    out = [
        f"account {a}: {asset} balance {balances.get((a, asset), 0)} but its entries sum to "
        f"{sums.get((a, asset), 0)}"
        for a, asset in sorted(set(balances) | set(sums))
        if balances.get((a, asset), 0) != sums.get((a, asset), 0)
    ]
    out += [f"transaction {r}: its {asset} entries do not sum to zero" for r, asset in unbalanced]
    out += [f"hand {h}: recorded without entries" for h in hands_without_entries]
    return out


class LedgerStore(abc.ABC):
    """The ledger's books. Every method that writes is one transaction."""

    @abc.abstractmethod
    def transact(self, tx: TxRow, entries: Sequence[Entry], hand: HandRow | None) -> str | None:
        """Write a transaction (and a hand's row), its entries and the balances they move, in
        one transaction over the locked balance rows. None when written; the digest stored
        under that reference when it was written before (then nothing is written).
        :func:`check_moves`' refusals (nothing written)."""

    @abc.abstractmethod
    def balance(self, account: str, asset: str) -> int:
        """The account's balance of one asset (0 for an unknown account)."""

    @abc.abstractmethod
    def balances(self, account: str) -> dict[str, int]:
        """The account's balance of every asset it ever held."""

    @abc.abstractmethod
    def has_account(self, account: str) -> bool:
        """Whether any entry was ever written to the account."""

    @abc.abstractmethod
    def entries(self, account: str) -> list[Entry]:
        """The account's entries, oldest first (by time, reference, leg)."""

    @abc.abstractmethod
    def entries_page(
        self, account: str, asset: str | None, after: Cursor | None, limit: int
    ) -> list[Entry]:
        """At most ``limit`` of the account's entries (of one asset, or all), newest first,
        strictly older than ``after``."""

    @abc.abstractmethod
    def account_net(
        self, account: str, asset: str, start: float, end: float, kind: str | None = None
    ) -> int:
        """The sum of the account's entries of ``asset`` (of one ``kind``, or all) written in
        [start, end)."""

    @abc.abstractmethod
    def has_hand(self, hand_id: str) -> bool: ...

    @abc.abstractmethod
    def hands_of_table(self, table_id: str) -> int: ...

    @abc.abstractmethod
    def tables_of_hands(self, hand_ids: Collection[str]) -> dict[str, str]:
        """The table of each recorded hand among ``hand_ids`` (others are left out)."""

    @abc.abstractmethod
    def hand_rows(self, tag_group: str, tag_prefix: str = "") -> list[HandRow]:
        """The hands of a tag group whose tag starts with ``tag_prefix``, in hand id order."""

    @abc.abstractmethod
    def hands_between(self, start: float, end: float) -> list[HandRow]:
        """The hands recorded in [start, end), in time order."""

    @abc.abstractmethod
    def reconcile(self) -> list[str]:
        """Every discrepancy: a balance that is not the sum of its entries, a transaction whose
        entries of an asset do not sum to zero, a hand without entries. Empty when they agree."""


Opener = Callable[[Any], LedgerStore]
_opener: Opener | None = None


def use_backends(opener: Opener) -> None:
    """Set how the books of a store are opened: the storage package's
    :func:`~services.matchmaking.storage.ledger.ledger_for`, given by the matchmaking package
    when it is imported, so the domain names no store backend."""
    global _opener
    _opener = opener


def books_of(store: Any) -> LedgerStore:
    """The ledger's books kept in ``store``'s database (one per store object)."""
    if _opener is None:
        raise RuntimeError("no ledger backends: import services.matchmaking first")
    return _opener(store)
