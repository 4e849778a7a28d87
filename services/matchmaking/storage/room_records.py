"""The rooms' repository over the service's store
(:class:`~services.matchmaking.domain.rooms.repository.RoomRepository`): the namespaces, keys and
encodings of rooms, with the players' presence
(:class:`~services.matchmaking.storage.player_records.PresenceRecords`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.rooms.private import Room
from services.matchmaking.storage.player_records import PresenceRecords
from services.matchmaking.storage.writes import create_once

R = TypeVar("R")

ROOMS = "mm_rooms"
ACTIVE = "mm_rooms_active"  # codes of rooms not yet playing (what ticks look at)


class RoomRecords(PresenceRecords):
    """Rooms in ``store`` (and presence, :class:`PresenceRecords`)."""

    def __init__(self, store: Records) -> None:
        super().__init__(store)

    def room(self, code: str) -> Room | None:
        rec = self.store.get(ROOMS, code)
        return None if rec is None else Room.from_json(rec.value)

    def add_room_once(self, room: Room) -> bool:
        _, created = create_once(self.store, ROOMS, room.code, room.to_json())
        if created:
            self.store.put(ACTIVE, room.code, b"")
        return created

    def update_room(self, code: str, fn: Callable[[Room | None], tuple[Room | None, R]]) -> R:
        def apply(raw: bytes | None) -> tuple[bytes | None, R]:
            new, result = fn(None if raw is None else Room.from_json(raw))
            return (None if new is None else new.to_json()), result

        return self.store.update(ROOMS, code, apply)

    def drop_room(self, code: str) -> None:
        self.store.delete(ROOMS, code)
        self.store.delete(ACTIVE, code)

    def deactivate(self, code: str) -> None:
        self.store.delete(ACTIVE, code)

    def active_codes(self) -> list[str]:
        return [code for code, _ in self.store.scan(ACTIVE)]
