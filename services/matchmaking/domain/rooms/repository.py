"""The rooms' repository (私人房间): private rooms by code, declared here, implemented over the
store by :class:`services.matchmaking.storage.room_records.RoomRecords`.

The records it keeps (encodings the domain's: compact JSON):

* ``mm_rooms/<code>`` — a :class:`~.private.Room`.
* ``mm_rooms_active/<code>`` — an empty marker for a room not yet playing (what ticks walk).

It extends the presence repository: a seat in a room holds its player's presence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from services.matchmaking.domain.players.repository import PresenceRepository

if TYPE_CHECKING:
    from services.matchmaking.domain.rooms.private import Room

R = TypeVar("R")


class RoomRepository(PresenceRepository, Protocol):
    """Rooms and the codes of active ones (and the players' presence)."""

    def room(self, code: str) -> Room | None: ...

    def add_room_once(self, room: Room) -> bool:
        """Store ``room`` unless its code is taken (one stays whoever races) and mark it
        active; whether this call wrote it."""

    def update_room(self, code: str, fn: Callable[[Room | None], tuple[Room | None, R]]) -> R:
        """Atomic read-modify-write (``fn`` may run more than once): the new room or None to
        leave it, and the result."""

    def drop_room(self, code: str) -> None:
        """Delete a closed room and its active marker (its code is free again)."""

    def deactivate(self, code: str) -> None:
        """Drop the room's active marker (it needs no more ticks)."""

    def active_codes(self) -> Sequence[str]:
        """The codes marked active."""
