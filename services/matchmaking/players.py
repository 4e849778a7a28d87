"""Players: registration with a display name (an id and a signed token back), bot players.

A player record holds the identity and the room-card count (房卡, :mod:`.room_cards`); silver
lives in the ledger (:mod:`.ledger`), never in the record.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass

from shared.errors import InvalidArgument, NotFound
from shared.store.base import Store

from . import records

NS = "mm_players"
MAX_NAME = 32


@dataclass(frozen=True, slots=True)
class Player:
    player_id: str
    display_name: str
    bot: bool
    room_cards: int
    created_at: float


def validate_display_name(name: str, field: str = "display_name", limit: int = MAX_NAME) -> str:
    """A display name (of a player, or with ``field``/``limit`` of a tournament): 1-``limit``
    characters after trimming, no control characters."""
    name = (name or "").strip()
    if not name:
        raise InvalidArgument(f"{field} is empty", field=field)
    if len(name) > limit:
        raise InvalidArgument(f"{field} has {len(name)} characters; at most {limit}", field=field)
    if any(ord(c) < 32 for c in name):
        raise InvalidArgument(f"{field} contains control characters", field=field)
    return name


def new_player_id(bot: bool = False) -> str:
    return ("bot-" if bot else "p-") + uuid.uuid4().hex[:16]


def create_player(store: Store, display_name: str, *, bot: bool, room_cards: int, now: float):
    """Store a new player and return it."""
    player = Player(new_player_id(bot), validate_display_name(display_name), bot, room_cards, now)
    store.create(NS, player.player_id, records.dump(asdict(player)))
    return player


def find_player(store: Store, player_id: str) -> Player | None:
    data = records.load((rec := store.get(NS, player_id)) and rec.value)
    return Player(**data) if data else None


def get_player(store: Store, player_id: str) -> Player:
    """The player, or NotFound naming the id."""
    player = find_player(store, player_id)
    if player is None:
        raise NotFound(f"no player {player_id!r}", player_id=player_id)
    return player
