"""Room cards (房卡): opening a private room costs one, a ledger asset like silver
(``room_card``, RULES-items §1): spending one is a transaction from the player to the house,
refunding it the reverse, each once by the room's code.

Versions before the assets ledger kept the count in the player record (``room_cards``); the
first time this module meets such a record it moves the count into the ledger (one transaction,
``migration/room-cards/<player>``, from the house) and sets the record's count to 0 — the
reference makes it once however many replicas race, and a crash in between is finished by the
next read.
"""

from __future__ import annotations

from infra.store.base import Store
from shared.errors import FailedPrecondition

from . import ledger, records
from .ledger import HOUSE, ROOM_CARD, Leg
from .players import NS


def migrate_record(store: Store, player_id: str, now: float) -> int:
    """Move the room cards a player record still holds into the ledger (once); how many."""
    rec = store.get(NS, player_id)
    held = int((records.load(rec.value) or {}).get("room_cards", 0)) if rec else 0
    if held <= 0:
        return 0
    legs = [
        Leg(player_id, ROOM_CARD, held, ledger.MIGRATION),
        Leg(HOUSE, ROOM_CARD, -held, ledger.MIGRATION),
    ]
    note = "room cards kept in the player record before the assets ledger"
    legs = [Leg(x.account, x.asset, x.amount, x.kind, note) for x in legs]
    ledger.transact(store, f"migration/room-cards/{player_id}", legs, now)

    def cleared(raw: bytes | None):
        data = records.load(raw)
        if data is None:
            return None, None
        data["room_cards"] = 0
        return records.dump(data), None

    store.update(NS, player_id, cleared)
    return held


def migrate_all(store: Store, now: float) -> int:
    """Every player record's room cards into the ledger (at start-up); how many records."""
    moved = 0
    for player_id, rec in store.scan(NS):
        if int((records.load(rec.value) or {}).get("room_cards", 0)) > 0:
            migrate_record(store, player_id, now)
            moved += 1
    return moved


def room_cards(store: Store, player_id: str, now: float = 0.0) -> int:
    """The player's 房卡: the ledger's ``room_card`` balance."""
    migrate_record(store, player_id, now)
    return ledger.balance(store, player_id, ROOM_CARD)


def spend_room_card(store: Store, player_id: str, room_code: str, now: float) -> int:
    """Take one card for the room ``room_code`` (once); FailedPrecondition NO_ROOM_CARD when the
    player has none. Returns the rest."""
    migrate_record(store, player_id, now)
    legs = [
        Leg(player_id, ROOM_CARD, -1, ledger.ROOM_CARD_SPENT, f"room {room_code}"),
        Leg(HOUSE, ROOM_CARD, 1, ledger.ROOM_CARD_SPENT, f"room {room_code}"),
    ]
    try:
        ledger.transact(store, f"room-card/{room_code}", legs, now, f"room/{room_code}")
    except FailedPrecondition as exc:
        if exc.reason != "INSUFFICIENT_FUNDS":
            raise
        raise FailedPrecondition(
            f"player {player_id} has no room card (房卡) to open a room",
            reason="NO_ROOM_CARD",
            player_id=player_id,
        ) from None
    return ledger.balance(store, player_id, ROOM_CARD)


def refund_room_card(store: Store, player_id: str, room_code: str, now: float) -> int:
    """Give back the card spent on a room that could not be opened (once)."""
    legs = [
        Leg(player_id, ROOM_CARD, 1, ledger.REFUND, f"room {room_code} not opened"),
        Leg(HOUSE, ROOM_CARD, -1, ledger.REFUND, f"room {room_code} not opened"),
    ]
    ledger.transact(store, f"room-card-refund/{room_code}", legs, now, f"room/{room_code}")
    return ledger.balance(store, player_id, ROOM_CARD)
