"""Where a player waits for a table (在排队 / 在房间): one presence record per player.

A player waits for one table at a time: a waiting quick-match ticket and a seat in a private
room exclude each other, and each excludes a second of its kind. The exclusion is one record
per player (``mm_presence/<player id>``) naming what holds the player: ``queue`` and a ticket
id, or ``room`` and a room code. Taking it is a single atomic store update (empty → mine), so
two concurrent calls, on two threads or two replicas sharing the store, can never both pass:
the loser learns who holds the player. Releasing it is a compare-and-clear (only when it still
names what is released), written as an empty value, never a delete, so the record's version only
rises and an old release can never clear a newer claim.

Order of writes and recovery: a claim is written *first*, before the ticket or the room seat it
names; it is released *last*, after the ticket is cancelled or assigned or the player has left
the room. A crash in between leaves a presence whose holder does not hold the player (the ticket
is missing, cancelled or assigned; the room is missing, finished or has no such member). Such a
presence blocks only for :data:`CLAIM_SECONDS` from its claim (a claim in progress looks just
like that); after it, the next claim of that player checks the holder (``holds``) and takes the
record over atomically, so a crash never locks a player out for longer than that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from services.matchmaking.domain import records

if TYPE_CHECKING:
    from services.matchmaking.domain.players.repository import PresenceRepository

QUEUE, ROOM = "queue", "room"
CLAIM_SECONDS = 60.0  # a claim whose holder is not written by then was left by a crash
_TAKEOVER_ATTEMPTS = 8


@dataclass(frozen=True, slots=True)
class Presence:
    """What holds a player: its quick-match ticket (``queue``) or its room (``room``)."""

    player_id: str
    kind: str  # QUEUE or ROOM
    ref: str  # the ticket id or the room code
    since: float  # when it was claimed

    def to_json(self) -> bytes:
        return records.dump(asdict(self))

    @staticmethod
    def from_json(raw: bytes) -> Presence:
        return Presence(**records.load(raw))


Holds = Callable[[Presence], bool]  # whether the ticket or room it names still holds the player


def current(store: PresenceRepository, player_id: str) -> Presence | None:
    """The player's presence, or None when it is free."""
    return store.presence(player_id)


def claim(
    store: PresenceRepository,
    player_id: str,
    kind: str,
    ref: str,
    now: float,
    holds: Holds | None = None,
) -> Presence | None:
    """Atomically make ``kind``/``ref`` hold the player. Returns None when it does, else the
    presence that blocks it (a live one, or one claimed less than :data:`CLAIM_SECONDS` ago).
    A presence older than that whose holder no longer holds the player (``holds`` False) is
    taken over; without ``holds`` every presence blocks."""
    mine = Presence(player_id, kind, ref, now)
    seen: Presence | None = None
    for _ in range(_TAKEOVER_ATTEMPTS):
        held = store.take_presence(mine, seen)
        if held is None:
            return None
        if holds is None or now - held.since < CLAIM_SECONDS or holds(held):
            return held
        seen = held  # stale: take it over, unless it changed meanwhile (then look again)
    return held


def release(store: PresenceRepository, player_id: str, kind: str, ref: str) -> bool:
    """Free the player if ``kind``/``ref`` still holds it; True when it did."""
    return store.free_presence(player_id, kind, ref)
