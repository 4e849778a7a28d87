"""Players (玩家): a person is the pair (issuer, subject) of their studio's sign-in; bots and
guests are players too.

A player record holds the display name (theirs to change) and the identity; silver and the
items (房卡, 加倍卡, 比赛卡) live in the ledger
(:mod:`~services.matchmaking.domain.economy.ledger`), never in the record. The identity index
``mm_identities/<digest of issuer and subject>`` maps an identity to its one player: created with
``Store.create``, so the first sign-in of an identity makes the player once whichever replica
answers, however many sign-ins race (:func:`player_for_identity`).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from services.matchmaking.domain import records
from services.matchmaking.domain.ports import Records
from shared.errors import InvalidArgument, NotFound

NS = "mm_players"
IDENTITIES = "mm_identities"
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


def create_player(store: Records, display_name: str, *, bot: bool, now: float, guest=False):
    """Store a new bot or guest player (neither has a ledger account) and return it."""
    player = Player(
        new_player_id(bot, guest), validate_display_name(display_name), bot, now, guest=guest
    )
    store.create(NS, player.player_id, records.dump(asdict(player)))
    return player


def identity_key(issuer: str, subject: str) -> str:
    """The identity's key in the index (and its welcome grant's reference): a digest, since an
    issuer URL and a subject may hold any character."""
    return hashlib.sha256(f"{issuer}\0{subject}".encode()).hexdigest()[:40]


def player_for_identity(
    store: Records,
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
    rec = store.get(IDENTITIES, key)
    if rec is None:
        claim = {"issuer": issuer, "subject": subject, "player_id": new_player_id()}
        raw, _ = records.create_once(store, IDENTITIES, key, records.dump(claim))
    else:
        raw = rec.value
    player_id = records.load(raw)["player_id"]
    existing = find_player(store, player_id)
    if existing is not None:
        return existing, False
    name = validate_display_name(display_name)
    player = Player(player_id, name, False, now, issuer, subject)
    welcome(player_id)
    _, created = records.create_once(store, NS, player_id, records.dump(asdict(player)))
    if not created:
        return get_player(store, player_id), False
    return player, True


def rename(store: Records, player_id: str, display_name: str) -> Player:
    """Set the player's display name (their own to change)."""
    name = validate_display_name(display_name)

    def apply(raw: bytes | None):
        data = records.load(raw)
        if not data:
            raise NotFound(f"no player {player_id!r}", player_id=player_id)
        player = replace(Player.from_record(data), display_name=name)
        return records.dump(asdict(player)), player

    return store.update(NS, player_id, apply)


def find_player(store: Records, player_id: str) -> Player | None:
    data = records.load((rec := store.get(NS, player_id)) and rec.value)
    return Player.from_record(data) if data else None


def get_player(store: Records, player_id: str) -> Player:
    """The player, or NotFound naming the id."""
    player = find_player(store, player_id)
    if player is None:
        raise NotFound(f"no player {player_id!r}", player_id=player_id)
    return player
