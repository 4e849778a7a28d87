"""Walls in the store, keyed by hand id (namespace ``wall``).

Every operation that changes a wall is one atomic :meth:`Store.update` (read, apply, write in
one transaction), so concurrent callers on any replica never receive the same tile and a failed
operation changes nothing. Idempotent NewHand requests map ``request_id → hand_id`` in the
namespace ``wall-request``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import TypeVar

from services.wall import shuffle
from services.wall.record import HandWall, WallEvent
from shared.errors import InvalidArgument, NotFound
from shared.store import AlreadyExists, Store
from shared.tile_set import STANDARD, TileSet

NAMESPACE = "wall"
REQUESTS = "wall-request"
MAX_ID_LENGTH = 128

R = TypeVar("R")


def new_hand_id() -> str:
    """An unguessable hand id (the wall is secret until revealed, so ids must not be probed)."""
    return "h_" + secrets.token_hex(12)


def check_id(value: str, field: str) -> str:
    if not value:
        raise InvalidArgument(f"{field} is empty", field=field)
    if len(value) > MAX_ID_LENGTH or not value.isprintable():
        raise InvalidArgument(
            f"{field} must be printable and at most {MAX_ID_LENGTH} characters", field=field
        )
    return value


class WallRepository:
    """Hands' walls in a :class:`~shared.store.Store`."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    def new_hand(
        self,
        dealer: int,
        *,
        seed: bytes | None = None,
        reserved: int = 0,
        swap_count: int = 0,
        request_id: str = "",
        tile_set: TileSet = STANDARD,
    ) -> HandWall:
        """Create a hand's wall from ``seed`` (default: a fresh secret seed). With a request
        id, a repeated call returns the hand the first call created."""
        if request_id:
            check_id(request_id, "request_id")
            existing = self.store.get(REQUESTS, request_id)
            if existing is not None:
                return self._same_request(existing.value.decode(), request_id, dealer)
        hand = HandWall.create(
            new_hand_id(),
            seed if seed is not None else shuffle.new_seed(),
            dealer,
            reserved=reserved,
            swap_count=swap_count,
            tile_set=tile_set,
        )
        hand.created = self.clock()
        hand.request_id = request_id
        self.store.create(NAMESPACE, hand.hand_id, hand.to_bytes())
        if request_id:
            try:
                self.store.create(REQUESTS, request_id, hand.hand_id.encode())
            except AlreadyExists:  # a concurrent retry won: answer with its hand
                self.store.delete(NAMESPACE, hand.hand_id)
                winner = self.store.get(REQUESTS, request_id).value.decode()
                return self._same_request(winner, request_id, dealer)
        return hand

    def _same_request(self, hand_id: str, request_id: str, dealer: int) -> HandWall:
        hand = self.get(hand_id)
        if hand.dealer != dealer:
            raise InvalidArgument(
                f"request id {request_id!r} already started hand {hand_id} with dealer "
                f"{hand.dealer}, not {dealer}",
                field="request_id",
            )
        return hand

    def get(self, hand_id: str) -> HandWall:
        check_id(hand_id, "hand_id")
        rec = self.store.get(NAMESPACE, hand_id)
        if rec is None:
            raise NotFound(f"no hand {hand_id!r}", hand_id=hand_id)
        return HandWall.from_bytes(rec.value)

    def _update(self, hand_id: str, op: Callable[[HandWall], R], request_id: str = "") -> R:
        """Apply ``op`` to the stored hand atomically; nothing is written if it raises."""
        check_id(hand_id, "hand_id")
        if request_id:  # kept in the hand's record: bounded like NewHand's
            check_id(request_id, "request_id")

        def tx(raw: bytes | None) -> tuple[bytes | None, R]:
            if raw is None:
                raise NotFound(f"no hand {hand_id!r}", hand_id=hand_id)
            hand = HandWall.from_bytes(raw)
            before = len(hand.events), hand.revealed
            result = op(hand)
            changed = (len(hand.events), hand.revealed) != before
            return (hand.to_bytes() if changed else None), result

        return self.store.update(NAMESPACE, hand_id, tx)

    def deal(self, hand_id: str) -> tuple[list[list[int]], HandWall, bool]:
        """The deal, the hand, and whether this call dealt it (False for a repeat)."""

        def op(h: HandWall) -> tuple[list[list[int]], HandWall, bool]:
            fresh = not h.dealt
            return h.deal(), h, fresh

        return self._update(hand_id, op)

    def draw(self, hand_id: str, seat: int, request_id: str = "") -> tuple[WallEvent, HandWall]:
        return self._update(hand_id, lambda h: (h.draw(seat, request_id), h), request_id)

    def draw_replacement(
        self, hand_id: str, seat: int, request_id: str = ""
    ) -> tuple[WallEvent, HandWall]:
        return self._update(
            hand_id, lambda h: (h.draw_replacement(seat, request_id), h), request_id
        )

    def swap(
        self, hand_id: str, seat: int, buried: list[int], request_id: str = ""
    ) -> tuple[WallEvent, HandWall]:
        return self._update(hand_id, lambda h: (h.swap(seat, buried, request_id), h), request_id)

    def flip_indicator(self, hand_id: str, request_id: str = "") -> tuple[WallEvent, HandWall]:
        """翻百搭: turn the 百搭 indicator (:meth:`HandWall.flip_indicator`)."""
        return self._update(hand_id, lambda h: (h.flip_indicator(request_id), h), request_id)

    def reveal(self, hand_id: str) -> HandWall:
        def op(h: HandWall) -> HandWall:
            h.reveal()
            return h

        return self._update(hand_id, op)

    def prune(self, max_age_seconds: float) -> int:
        """Delete walls created more than ``max_age_seconds`` ago (revealed or abandoned) and
        their NewHand request ids; returns how many were deleted."""
        cutoff = self.clock() - max_age_seconds
        deleted = 0
        for hand_id, rec in self.store.scan(NAMESPACE):
            hand = HandWall.from_bytes(rec.value)
            if hand.created < cutoff:
                if hand.request_id:
                    self.store.delete(REQUESTS, hand.request_id)
                deleted += self.store.delete(NAMESPACE, hand_id)
        return deleted
