"""The ledger (账本): silver moves only as entries, and every balance is the sum of its entries.

* Every settled hand the gateway reports is recorded once, keyed by its hand id, in **one
  transaction**: the hand, one entry per seat (and one for the house), and the balances they
  move. A repeated report (the gateway's outbox retries) finds the hand and writes nothing; the
  same hand id with other results is refused (HAND_ID_REUSED). A failure part-way leaves
  nothing, so there is never a report "cut short".
* Entry kinds: ``grant`` (starting silver), ``hand`` (a settled hand's payment),
  ``escape_penalty`` (逃跑 penalty of the seat that left), ``house_share`` (the house's cut).
* The books are real tables on the SQL stores (:mod:`.ledger_store`: one file per backend):
  balances kept per account row in the same transaction as the entries (reading one is one row,
  however many entries the account has), entries unique per (hand, account), a hand's entries
  checked to sum to zero, and :func:`reconcile` to check that the balances are the entries' sums.
* Hands are indexed by table id (hands per table) and by tag group ("tournament/T"), so
  tournaments read their results from the ledger itself.
* The version before kept the ledger as store records (namespaces ``mm_ledger_hands``,
  ``mm_ledger/<account>``); the first start on such a store takes them in, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from shared.errors import FailedPrecondition, InvalidArgument
from shared.store.base import Store

from . import records
from .ledger_store import HOUSE, HandRow, ledger_for
from .tags import tag_group

__all__ = ["HOUSE", "Entry", "HandReport"]

GRANT = "grant"
HAND = "hand"
ESCAPE_PENALTY = "escape_penalty"
HOUSE_SHARE = "house_share"
# The largest amount one hand moves (2^53 - 1, exact in every JSON reader): far above any
# settlement (scoring caps stakes at 10^12), low enough that balances stay 64-bit integers.
MAX_AMOUNT = 2**53 - 1


@dataclass(frozen=True, slots=True)
class HandReport:
    """A settled hand as the gateway reports it (RecordHand)."""

    hand_id: str
    table_id: str
    tag: str
    player_ids: tuple[str, ...]  # by seat, bots too
    payments: tuple[int, ...]  # chips by seat, + = received
    house: int = 0  # chips to the house (escape share)
    escaped_seat: int | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    account: str
    ref: str  # hand id, or the grant's reference
    kind: str
    amount: int
    tag: str
    at: float


def validate_report(report: HandReport) -> None:
    """InvalidArgument naming the first malformed field; payments + house must sum to zero."""
    if not report.hand_id:
        raise InvalidArgument("hand_id is empty", field="hand_id")
    if not report.table_id:
        raise InvalidArgument("table_id is empty", field="table_id")
    if len(report.player_ids) != 4:
        raise InvalidArgument(
            f"player_ids has {len(report.player_ids)} entries; a table has 4 seats",
            field="player_ids",
        )
    if any(not p for p in report.player_ids):
        raise InvalidArgument("a player id is empty", field="player_ids")
    if len(set(report.player_ids)) != 4:
        raise InvalidArgument("player_ids repeat a player", field="player_ids")
    if HOUSE in report.player_ids:
        raise InvalidArgument(f"{HOUSE!r} is not a player", field="player_ids")
    if len(report.payments) != 4:
        raise InvalidArgument(
            f"payments has {len(report.payments)} entries; one per seat (4)", field="payments"
        )
    if report.house < 0:
        raise InvalidArgument(f"house {report.house} is negative", field="house")
    if report.house > MAX_AMOUNT:
        raise InvalidArgument(f"house {report.house} exceeds {MAX_AMOUNT}", field="house")
    if any(abs(p) > MAX_AMOUNT for p in report.payments):
        raise InvalidArgument(
            f"payments {list(report.payments)} exceed {MAX_AMOUNT} chips", field="payments"
        )
    total = sum(report.payments) + report.house
    if total != 0:
        raise InvalidArgument(
            f"payments {list(report.payments)} plus house {report.house} sum to {total}, not 0",
            field="payments",
        )
    if report.escaped_seat is not None and not 0 <= report.escaped_seat <= 3:
        raise InvalidArgument(f"escaped seat {report.escaped_seat} out of range 0-3")


def entries_for(report: HandReport, at: float) -> list[Entry]:
    """The ledger entries of one settled hand."""
    out = []
    for seat, (pid, amount) in enumerate(zip(report.player_ids, report.payments, strict=True)):
        kind = ESCAPE_PENALTY if seat == report.escaped_seat else HAND
        out.append(Entry(pid, report.hand_id, kind, amount, report.tag, at))
    if report.house:
        out.append(Entry(HOUSE, report.hand_id, HOUSE_SHARE, report.house, report.tag, at))
    return out


def _report_dict(report: HandReport) -> dict:
    d = asdict(report)
    d["player_ids"], d["payments"] = list(report.player_ids), list(report.payments)
    return d


def _report_of(body: str) -> HandReport:
    data = records.load(body.encode())
    data.pop("recorded_at", None)
    data["player_ids"], data["payments"] = tuple(data["player_ids"]), tuple(data["payments"])
    return HandReport(**data)


def record_hand(store: Store, report: HandReport, now: float) -> bool:
    """Record a settled hand once. True when new, False for a repeat (which changes nothing).

    A repeat of a hand id with different content is FailedPrecondition (never applied).
    """
    validate_report(report)
    body = records.dump(_report_dict(report)).decode()
    row = HandRow(report.hand_id, report.table_id, report.tag, tag_group(report.tag), body, now)
    stored = ledger_for(store).record(row, entries_for(report, now))
    if stored is None:
        return True
    if records.load(stored.encode()) != _report_dict(report):
        raise FailedPrecondition(
            f"hand {report.hand_id} was already recorded with other results",
            reason="HAND_ID_REUSED",
            hand_id=report.hand_id,
        )
    return False


def grant(store: Store, account: str, ref: str, amount: int, now: float, kind: str = GRANT):
    """A one-off entry (starting silver); idempotent by ``ref``."""
    ledger_for(store).grant(Entry(account, ref, kind, amount, "", now))


def entries(store: Store, account: str) -> list[Entry]:
    """An account's entries, oldest first."""
    return ledger_for(store).entries(account)


def balance(store: Store, account: str) -> int:
    """The account's balance: the sum of its entries, kept beside them (one row to read)."""
    return ledger_for(store).balance(account)


def has_account(store: Store, account: str) -> bool:
    """Whether the ledger ever wrote an entry to ``account``."""
    return ledger_for(store).has_account(account)


def has_hand(store: Store, hand_id: str) -> bool:
    return ledger_for(store).has_hand(hand_id)


def hands_of_table(store: Store, table_id: str) -> int:
    """How many settled hands of a table are recorded."""
    return ledger_for(store).hands_of_table(table_id)


def hand_reports(store: Store, group: str) -> list[HandReport]:
    """Every recorded hand whose tag is in ``group`` (e.g. "tournament/T"), by hand id."""
    return [_report_of(row.report) for row in ledger_for(store).hand_rows(group)]


def chips_by_player(store: Store, group: str) -> dict[str, int]:
    """Net chips per player over the hands of a tag group."""
    totals: dict[str, int] = {}
    for report in hand_reports(store, group):
        for pid, amount in zip(report.player_ids, report.payments, strict=True):
            totals[pid] = totals.get(pid, 0) + amount
    return totals


def totals(store: Store, accounts: Sequence[str]) -> int:
    return sum(balance(store, a) for a in accounts)


def reconcile(store: Store) -> list[str]:
    """Every discrepancy in the books (a balance that is not its entries' sum, a hand that does
    not sum to zero or has no entries); empty when they agree."""
    return ledger_for(store).reconcile()


# --- the version that kept the ledger as store records -------------------------------------
LEGACY_HANDS_NS = "mm_ledger_hands"
LEGACY_ACCOUNT_NS = "mm_ledger/"


def legacy_books(store: Store) -> tuple[list[HandRow], list[Entry]]:
    """The hands and entries an earlier version kept as store records (empty on a new store)."""
    hands = []
    for hand_id, rec in store.scan(LEGACY_HANDS_NS):
        data = records.load(rec.value)
        at = float(data.pop("recorded_at", 0.0))
        tag = data.get("tag", "")
        hands.append(
            HandRow(hand_id, data["table_id"], tag, tag_group(tag), records.dump(data).decode(), at)
        )
    found = [
        Entry(**records.load(rec.value))
        for ns in store.namespaces(LEGACY_ACCOUNT_NS)
        for _, rec in store.scan(ns)
    ]
    return hands, found
