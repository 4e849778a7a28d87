"""The ledger (账本): silver moves only as entries; a balance is the sum of its entries.

* Every settled hand the gateway reports is recorded once, keyed by its hand id: the hand record
  is created atomically, then one entry per seat (and one for the house). A repeated report
  writes the same entries again under the same keys, so it changes nothing — and a report cut
  short by a crash is completed by the gateway's retry.
* Entry kinds: ``grant`` (starting silver), ``hand`` (a settled hand's payment),
  ``escape_penalty`` (逃跑 penalty of the seat that left), ``house_share`` (the house's cut).
* Indexes by table id (hands per table) and by tag group ("tournament/T") let tournaments read
  their results from the ledger itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from shared.errors import FailedPrecondition, InvalidArgument
from shared.store.base import AlreadyExists, Store

from . import records
from .tags import tag_group

HOUSE = "house"
HANDS_NS = "mm_ledger_hands"
_TABLE_NS = "mm_ledger_table/"
_GROUP_NS = "mm_ledger_group/"
_ACCOUNT_NS = "mm_ledger/"

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


def _write_entry(store: Store, entry: Entry) -> None:
    # AlreadyExists: written by an earlier delivery of the same report.
    with contextlib.suppress(AlreadyExists):
        store.create(_ACCOUNT_NS + entry.account, entry.ref, records.dump(asdict(entry)))


def record_hand(store: Store, report: HandReport, now: float) -> bool:
    """Record a settled hand once. True when new, False for a repeat (which changes nothing).

    A repeat of a hand id with different content is FailedPrecondition (never applied).
    """
    validate_report(report)
    body = _report_dict(report)
    new = True
    try:
        store.create(HANDS_NS, report.hand_id, records.dump({**body, "recorded_at": now}))
    except AlreadyExists:
        new = False
        stored = records.load(store.get(HANDS_NS, report.hand_id).value)
        at = stored.pop("recorded_at")
        if stored != body:
            raise FailedPrecondition(
                f"hand {report.hand_id} was already recorded with other results",
                reason="HAND_ID_REUSED",
                hand_id=report.hand_id,
            ) from None
        now = at
    for entry in entries_for(report, now):
        _write_entry(store, entry)
    for ns in (_TABLE_NS + report.table_id, _GROUP_NS + tag_group(report.tag)):
        with contextlib.suppress(AlreadyExists):
            store.create(ns, report.hand_id, b"")
    return new


def grant(store: Store, account: str, ref: str, amount: int, now: float, kind: str = GRANT):
    """A one-off entry (starting silver); idempotent by ``ref``."""
    _write_entry(store, Entry(account, ref, kind, amount, "", now))


def entries(store: Store, account: str) -> list[Entry]:
    """An account's entries, oldest first."""
    out = [Entry(**records.load(rec.value)) for _, rec in store.scan(_ACCOUNT_NS + account)]
    out.sort(key=lambda e: (e.at, e.kind != GRANT, e.ref))
    return out


def balance(store: Store, account: str) -> int:
    """The sum of the account's entries."""
    return sum(records.load(rec.value)["amount"] for _, rec in store.scan(_ACCOUNT_NS + account))


def hands_of_table(store: Store, table_id: str) -> int:
    """How many settled hands of a table are recorded."""
    return sum(1 for _ in store.scan(_TABLE_NS + table_id))


def hand_reports(store: Store, group: str) -> list[HandReport]:
    """Every recorded hand whose tag is in ``group`` (e.g. "tournament/T")."""
    out = []
    for hand_id, _ in store.scan(_GROUP_NS + group):
        data = records.load(store.get(HANDS_NS, hand_id).value)
        data.pop("recorded_at")
        data["player_ids"], data["payments"] = tuple(data["player_ids"]), tuple(data["payments"])
        out.append(HandReport(**data))
    return out


def chips_by_player(store: Store, group: str) -> dict[str, int]:
    """Net chips per player over the hands of a tag group."""
    totals: dict[str, int] = {}
    for report in hand_reports(store, group):
        for pid, amount in zip(report.player_ids, report.payments, strict=True):
            totals[pid] = totals.get(pid, 0) + amount
    return totals


def totals(store: Store, accounts: Sequence[str]) -> int:
    return sum(balance(store, a) for a in accounts)
