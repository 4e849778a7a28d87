"""Room cards (房卡): opening a private room costs one; a new player receives some free."""

from __future__ import annotations

from dataclasses import asdict, replace

from shared.errors import FailedPrecondition, InvalidArgument
from shared.store.base import Store

from . import records
from .players import NS, Player


def room_cards(store: Store, player_id: str) -> int:
    rec = store.get(NS, player_id)
    return 0 if rec is None else int(records.load(rec.value)["room_cards"])


def _change(store: Store, player_id: str, delta: int) -> int:
    def fn(raw: bytes | None):
        if raw is None:
            raise FailedPrecondition(f"no player {player_id!r}", player_id=player_id)
        player = Player(**records.load(raw))
        if player.room_cards + delta < 0:
            raise FailedPrecondition(
                f"player {player_id} has no room card (房卡) to open a room",
                reason="NO_ROOM_CARD",
                player_id=player_id,
            )
        player = replace(player, room_cards=player.room_cards + delta)
        return records.dump(asdict(player)), player.room_cards

    return store.update(NS, player_id, fn)


def spend_room_card(store: Store, player_id: str) -> int:
    """Take one card (atomically); FailedPrecondition when the player has none. Returns the rest."""
    return _change(store, player_id, -1)


def refund_room_card(store: Store, player_id: str) -> int:
    """Give back a card spent on a room that could not be opened."""
    return _change(store, player_id, +1)


def grant_room_cards(store: Store, player_id: str, count: int) -> int:
    """Add cards (an operator's grant or a purchase); returns the new count."""
    if count <= 0:
        raise InvalidArgument(f"room card count {count} must be positive", field="count")
    return _change(store, player_id, count)
