"""Room cards (房卡): opening a private room costs one, a ledger asset like silver
(``room_card``, RULES-items §1): spending one is a transaction from the player to the house,
refunding it the reverse, each once by the room's code.

"""

from __future__ import annotations

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HOUSE, ROOM_CARD, Leg
from services.matchmaking.domain.ports import Records
from shared.errors import FailedPrecondition


def room_cards(store: Records, player_id: str) -> int:
    """The player's 房卡: the ledger's ``room_card`` balance."""
    return ledger.balance(store, player_id, ROOM_CARD)


def spend_room_card(store: Records, player_id: str, room_code: str, now: float) -> int:
    """Take one card for the room ``room_code`` (once); FailedPrecondition NO_ROOM_CARD when the
    player has none. Returns the rest."""
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


def refund_room_card(store: Records, player_id: str, room_code: str, now: float) -> int:
    """Give back the card spent on a room that could not be opened (once)."""
    legs = [
        Leg(player_id, ROOM_CARD, 1, ledger.REFUND, f"room {room_code} not opened"),
        Leg(HOUSE, ROOM_CARD, -1, ledger.REFUND, f"room {room_code} not opened"),
    ]
    ledger.transact(store, f"room-card-refund/{room_code}", legs, now, f"room/{room_code}")
    return ledger.balance(store, player_id, ROOM_CARD)
