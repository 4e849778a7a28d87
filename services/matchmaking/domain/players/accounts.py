"""Players (玩家): a person is the pair (issuer, subject) of their studio's sign-in; bots and
guests are players too.

A player record holds the display name (theirs to change) and the identity; silver and the
items (房卡, 加倍卡, 比赛卡) live in the ledger
(:mod:`~services.matchmaking.domain.economy.ledger`), never in the record. The identity index
``mm_identities/<digest of issuer and subject>`` maps an identity to its one player: created
once (:meth:`~.repository.PlayerRepository.claim_identity`), so the first sign-in of an identity
makes the player once whichever replica answers, however many sign-ins race
(:func:`player_for_identity`).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.matchmaking.domain.players.repository import PlayerRepository
from shared.errors import InvalidArgument, NotFound

MAX_NAME = 32


@dataclass(frozen=True, slots=True)
class Player:
    player_id: str
    display_name: str
    bot: bool
    created_at: float
    issuer: str = ""  # the identity (issuer, subject); empty for bots and guests
    subject: str = ""
    guest: bool = False

    @classmethod
    def from_record(cls, data: dict) -> Player:
        """A stored player record."""
        return cls(**data)


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


def new_player_id(bot: bool = False, guest: bool = False) -> str:
    return ("bot-" if bot else "g-" if guest else "p-") + uuid.uuid4().hex[:16]


def create_player(
    players: PlayerRepository, display_name: str, *, bot: bool, now: float, guest=False
):
    """Store a new bot or guest player (neither has a ledger account) and return it."""
    player = Player(
        new_player_id(bot, guest), validate_display_name(display_name), bot, now, guest=guest
    )
    players.add_player(player)
    return player


def identity_key(issuer: str, subject: str) -> str:
    """The identity's key in the index (and its welcome grant's reference): a digest, since an
    issuer URL and a subject may hold any character."""
    return hashlib.sha256(f"{issuer}\0{subject}".encode()).hexdigest()[:40]


def player_for_identity(
    players: PlayerRepository,
    issuer: str,
    subject: str,
    display_name: str,
    now: float,
    welcome: Callable[[str], object],
) -> tuple[Player, bool]:
    """The identity's player, created (with ``display_name``) by the first sign-in; whether
    this call created it. Races between replicas end with one player: the index record is
    created once, and the player record by whoever finds it missing, after ``welcome(player
    id)`` (the welcome grant, idempotent by the identity) so a crash in between is finished by
    the next sign-in."""
    key = identity_key(issuer, subject)
    player_id = players.identity_player(key)
    if player_id is None:
        player_id = players.claim_identity(key, issuer, subject, new_player_id())
    existing = players.find_player(player_id)
    if existing is not None:
        return existing, False
    name = validate_display_name(display_name)
    player = Player(player_id, name, False, now, issuer, subject)
    welcome(player_id)
    if not players.add_player_once(player):
        return get_player(players, player_id), False
    return player, True


def rename(players: PlayerRepository, player_id: str, display_name: str) -> Player:
    """Set the player's display name (their own to change)."""
    name = validate_display_name(display_name)

    def apply(found: Player | None) -> tuple[Player, Player]:
        if found is None:
            raise NotFound(f"no player {player_id!r}", player_id=player_id)
        player = replace(found, display_name=name)
        return player, player

    return players.update_player(player_id, apply)


def find_player(players: PlayerRepository, player_id: str) -> Player | None:
    return players.find_player(player_id)


def get_player(players: PlayerRepository, player_id: str) -> Player:
    """The player, or NotFound naming the id."""
    player = players.find_player(player_id)
    if player is None:
        raise NotFound(f"no player {player_id!r}", player_id=player_id)
    return player
