"""加倍卡 (double card) holds (RULES-items §2): a card played at a table is held for one hand,
then consumed by that hand's record or returned.

* HoldDoubleCard (the gateway, when a seated player plays one): one of the player's double
  cards moves into a hold account of (table, hand number, player) — a ledger transaction whose
  reference is that key, so a retry holds nothing twice. It needs a table matchmaking
  allocated with the player seated there, not a tournament table, and silver covering twice
  the most one hand can cost at the stake (:func:`cover_needed`).
* The hand's RecordHand consumes the holds of its doubled seats in the hand's own transaction
  (:func:`consume_legs`: hold → house); a hand reported doubled without a hold is refused as
  a whole (the hold account would go below zero).
* ReleaseDoubleCard, or TableFinished for every hold of the table, returns what is still held
  (hold → player) — a hand that never started. A consumed hold has nothing to return.
* Holds of a table are indexed (:class:`.repository.HoldRepository`: namespace
  ``mm_double_card_holds``, key ``table/hand/player``) so TableFinished finds them; the index
  is written before the hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.matchmaking.domain.economy import hand_cover, ledger
from services.matchmaking.domain.economy.repository import HoldRepository
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.domain.tables.repository import TableRepository
from services.matchmaking.domain.tables.tags import parse_tournament
from shared.errors import FailedPrecondition, InvalidArgument, PermissionDenied

VERSION = 1
MAX_HAND_NUMBER = 1_000_000


@dataclass(frozen=True, slots=True)
class Hold:
    """One held card: the index record of a hold (the card itself is in the ledger)."""

    table_id: str
    hand_number: int
    player_id: str
    at: float
    version: int = VERSION

    @property
    def key(self) -> str:
        return hold_key(self.table_id, self.hand_number, self.player_id)


def hold_key(table_id: str, hand_number: int, player_id: str) -> str:
    return f"{table_id}/{hand_number:07d}/{player_id}"


def hold_account(table_id: str, hand_number: int, player_id: str) -> str:
    """The ledger account that holds the card (never below zero, like every non-house one)."""
    return f"hold/{hold_key(table_id, hand_number, player_id)}"


def cover_needed(stake: int, ruleset: str = "", options: dict | None = None) -> int:
    """Silver a player must hold to play a 加倍卡: twice the most one hand can cost at
    ``stake`` (RULES-items §2, §4; :func:`.hand_cover.loss_cap` with ``doubled``).
    FailedPrecondition DOUBLE_CARD_NOT_ALLOWED when nothing bounds a hand's cost."""
    need = hand_cover.loss_cap(ruleset, options, stake, doubled=True)
    if need is None:
        raise FailedPrecondition(
            "nothing bounds a hand's cost under this ruleset: no 加倍卡 can be covered",
            reason="DOUBLE_CARD_NOT_ALLOWED",
        )
    return need


def _check(table_id: str, player_id: str, hand_number: int) -> None:
    if not table_id:
        raise InvalidArgument("table_id is empty", field="table_id")
    if not player_id:
        raise InvalidArgument("player_id is empty", field="player_id")
    if not 1 <= hand_number <= MAX_HAND_NUMBER:
        raise InvalidArgument(
            f"hand_number {hand_number} out of range 1-{MAX_HAND_NUMBER}", field="hand_number"
        )


def hold(
    store: Records,
    tables: TableRepository,
    holds: HoldRepository,
    table_id: str,
    tag: str,
    player_id: str,
    hand_number: int,
    stake: int,
    now: float,
) -> int:
    """Hold one of the player's double cards for the hand; the cards left. Idempotent by
    (table, hand, player). FailedPrecondition DOUBLE_CARD_* naming why it cannot be played."""
    _check(table_id, player_id, hand_number)
    if stake <= 0:
        raise InvalidArgument(f"stake {stake} must be positive", field="stake")
    if parse_tournament(tag):
        raise FailedPrecondition(
            "a 加倍卡 is never played at a tournament table", reason="DOUBLE_CARD_NOT_ALLOWED"
        )
    allocated_tables.check_report(tables, table_id, tag)
    table = allocated_tables.find(tables, table_id)
    if table is None or player_id not in table.player_ids:
        raise PermissionDenied(f"{player_id} has no seat at table {table_id}")
    if ledger.is_bot(player_id):
        raise FailedPrecondition("a bot plays no 加倍卡", reason="DOUBLE_CARD_BOT")
    need = cover_needed(stake)
    silver = ledger.balance(store, player_id)
    if silver < need:
        raise FailedPrecondition(
            f"a 加倍卡 at stake {stake} needs {need} silver (twice the most a hand costs); "
            f"{player_id} has {silver}",
            reason="DOUBLE_CARD_SILVER",
            need=need,
            silver=silver,
        )
    record = Hold(table_id, hand_number, player_id, now)
    holds.keep_hold(record)
    account = hold_account(table_id, hand_number, player_id)
    legs = [
        ledger.Leg(player_id, ledger.DOUBLE_CARD, -1, ledger.DOUBLE_CARD_HELD, "held"),
        ledger.Leg(account, ledger.DOUBLE_CARD, 1, ledger.DOUBLE_CARD_HELD, "held"),
    ]
    try:
        new = ledger.transact(store, f"double-card/hold/{record.key}", legs, now, tag)
    except FailedPrecondition as exc:
        if exc.reason == "INSUFFICIENT_FUNDS":
            raise FailedPrecondition(
                f"{player_id} has no 加倍卡 left", reason="DOUBLE_CARD_NONE_LEFT"
            ) from None
        raise
    if not new and ledger.balance(store, account, ledger.DOUBLE_CARD) == 0:
        raise FailedPrecondition(
            f"the 加倍卡 of {player_id} for hand {hand_number} was already used or returned",
            reason="DOUBLE_CARD_SPENT",
        )
    return ledger.balance(store, player_id, ledger.DOUBLE_CARD)


def consume_legs(report: ledger.HandReport) -> list[ledger.Leg]:
    """The legs that consume the holds of a hand's doubled seats (hold → house), written in the
    hand's transaction."""
    if not report.doubled_seats:
        return []
    if report.hand_number < 1:
        raise InvalidArgument("doubled_seats need the hand's hand_number", field="hand_number")
    out = []
    for seat in sorted(report.doubled_seats):
        pid = report.player_ids[seat]
        if ledger.is_bot(pid):
            raise InvalidArgument(
                f"seat {seat} is a bot: bots play no 加倍卡", field="doubled_seats"
            )
        account = hold_account(report.table_id, report.hand_number, pid)
        note = f"seat {seat} consumed"
        out.append(ledger.Leg(account, ledger.DOUBLE_CARD, -1, ledger.DOUBLE_CARD_HELD, note))
        out.append(ledger.Leg(ledger.HOUSE, ledger.DOUBLE_CARD, 1, ledger.DOUBLE_CARD_HELD, note))
    return out


def release(store: Records, table_id: str, player_id: str, hand_number: int, now: float) -> bool:
    """Return a held card to its player; False when nothing is held (consumed or returned)."""
    _check(table_id, player_id, hand_number)
    account = hold_account(table_id, hand_number, player_id)
    if ledger.balance(store, account, ledger.DOUBLE_CARD) <= 0:
        return False
    legs = [
        ledger.Leg(account, ledger.DOUBLE_CARD, -1, ledger.DOUBLE_CARD_HELD, "returned"),
        ledger.Leg(player_id, ledger.DOUBLE_CARD, 1, ledger.DOUBLE_CARD_HELD, "returned"),
    ]
    key = hold_key(table_id, hand_number, player_id)
    try:
        return ledger.transact(store, f"double-card/release/{key}", legs, now)
    except FailedPrecondition as exc:
        if exc.reason == "INSUFFICIENT_FUNDS":  # the hand consumed it meanwhile
            return False
        raise


def release_table(store: Records, holds: HoldRepository, table_id: str, now: float) -> int:
    """Return every card still held at a finished table; how many were returned."""
    returned = 0
    for h in holds.holds_at(table_id):
        returned += release(store, h.table_id, h.player_id, h.hand_number, now)
    return returned
