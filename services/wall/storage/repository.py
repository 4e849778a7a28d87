"""Walls in the store, keyed by hand id: one header record, written once at NewHand
(namespace ``wall``), and one small row per operation in the log ``wall/<hand_id>``
(:mod:`services.wall.storage.rows`): a draw is one conditional append of one row with its
request id, in one store transaction, instead of rewriting the whole hand.

* **Atomic across replicas.** An operation applies itself to the hand as of log row ``seq``
  and appends its row with ``expected_seq`` = that row: if another replica appended first, the
  store refuses (Conflict) and writes nothing, and the operation reads the new rows and runs
  again. So concurrent callers on any replica never receive the same tile, and a refused
  operation writes nothing.
* **One transaction per draw.** Each repository keeps the hands it served (``cache_size`` of
  them, least recently used dropped) with the last row it holds, and appends straight away on
  the cached hand, without reading the log first: one store transaction. When another replica
  drew meanwhile the append is refused, and the Conflict brings the rows it missed (read in
  the same transaction): they are applied and the operation runs again, two transactions in
  all (a read-then-append costs as many, on every draw). Operations run on a copy of the
  cached hand, which only becomes the cached one once its row is in, so a refused or lost
  operation leaves the cache as it was. A refusal, or an answer that writes nothing (a
  retried request id), is only given from a hand just read, so a stale cache never refuses
  a draw nor answers a retry with an old hand. Callers get snapshots
  (:meth:`HandWall.copy`), never the cached hand.
* Idempotent NewHand requests map ``request_id → hand_id`` in the namespace ``wall-request``;
  a retried draw's request id is found in the replayed rows.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

from infra.store import AlreadyExists, Conflict, Store
from infra.store.base import StoreUnavailable
from services.wall.domain import shuffle
from services.wall.domain.events import WallEvent
from services.wall.domain.record import HandWall
from services.wall.storage.rows import HandHeader, WallOp, decode_record, op_for
from shared.errors import DomainError, InvalidArgument, NotFound
from shared.tile_set import STANDARD, TileSet

NAMESPACE = "wall"
REQUESTS = "wall-request"
LOG_PREFIX = "wall/"
MAX_ID_LENGTH = 128
CACHE_SIZE = 1024
# Rounds of "read the new rows, apply, append" before giving up on a hand that other replicas
# keep writing first (each lost round means another operation went in).
MAX_ROUNDS = 200

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


class _Held:
    """A hand this repository serves: its state as of log row ``seq``, and the lock that
    orders this process's operations on it. ``synced``: no reason to think another writer
    appended after ``seq`` (an operation may append without reading the log first)."""

    __slots__ = ("hand", "lock", "seq", "synced")

    def __init__(self, hand: HandWall, seq: int, *, synced: bool) -> None:
        self.hand = hand
        self.seq = seq
        self.synced = synced
        self.lock = threading.Lock()


class WallRepository:
    """Hands' walls in a :class:`~infra.store.Store`."""

    def __init__(
        self, store: Store, clock: Callable[[], float] = time.time, cache_size: int = CACHE_SIZE
    ) -> None:
        self.store = store
        self.clock = clock
        self.cache_size = cache_size
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._held_lock = threading.Lock()

    # --- NewHand -----------------------------------------------------------------------------
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
        self.store.create(NAMESPACE, hand.hand_id, HandHeader.of(hand).to_bytes())
        if request_id:
            try:
                self.store.create(REQUESTS, request_id, hand.hand_id.encode())
            except AlreadyExists:  # a concurrent retry won: answer with its hand
                self.store.delete(NAMESPACE, hand.hand_id)
                winner = self.store.get(REQUESTS, request_id).value.decode()
                return self._same_request(winner, request_id, dealer)
        self._keep(hand.hand_id, _Held(hand.copy(), 0, synced=True))
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

    # --- the hands held here -------------------------------------------------------------------
    def _keep(self, hand_id: str, held: _Held) -> _Held:
        with self._held_lock:
            kept = self._held.setdefault(hand_id, held)
            self._held.move_to_end(hand_id)
            while len(self._held) > self.cache_size:
                self._held.popitem(last=False)
            return kept

    def _drop(self, hand_id: str, held: _Held | None = None) -> None:
        with self._held_lock:
            if held is None or self._held.get(hand_id) is held:
                self._held.pop(hand_id, None)

    def _held_hand(self, hand_id: str) -> _Held:
        """The hand held for ``hand_id``, loaded from the store if need be; NotFound when
        there is none."""
        with self._held_lock:
            held = self._held.get(hand_id)
            if held is not None:
                self._held.move_to_end(hand_id)
                return held
        rec = self.store.get(NAMESPACE, hand_id)
        if rec is None:
            raise NotFound(f"no hand {hand_id!r}", hand_id=hand_id)
        data = decode_record(rec.value)
        return self._keep(hand_id, _Held(HandHeader.from_json(data).hand(), 0, synced=False))

    def _catch_up(self, hand_id: str, held: _Held) -> None:
        """Apply the rows other writers appended since ``held.seq`` (under ``held.lock``)."""
        self._apply(held, self.store.read_log(LOG_PREFIX + hand_id, held.seq))
        held.synced = True

    @staticmethod
    def _apply(held: _Held, rows: list[tuple[int, bytes]]) -> int:
        """Apply ``rows`` that follow ``held.seq`` on from it (stopping at a gap); returns
        how many were applied."""
        applied = 0
        for seq, raw in rows:
            if seq != held.seq + 1:
                break
            WallOp.from_bytes(raw).apply(held.hand)
            held.seq = seq
            applied += 1
        return applied

    def _reload(self, hand_id: str, held: _Held) -> _Held:
        """Start ``hand_id`` again from its header and rows (its log was not where ``held``
        left it, e.g. deleted by retention: NotFound once the header is gone)."""
        self._drop(hand_id, held)
        return self._held_hand(hand_id)

    # --- reading and changing a hand -----------------------------------------------------------
    def get(self, hand_id: str) -> HandWall:
        check_id(hand_id, "hand_id")
        held = self._held_hand(hand_id)
        with held.lock:
            try:
                self._catch_up(hand_id, held)
            except BaseException:
                self._drop(hand_id, held)
                raise
            return held.hand.copy()

    def _update(self, hand_id: str, op: Callable[[HandWall], R], request_id: str = "") -> R:
        """Apply ``op`` to the hand and append the row of what it did, atomically; nothing is
        written if it raises. ``op`` gets a copy of the hand, its own to change and to return
        (the caller's snapshot); the cached hand replays the row once it is in."""
        check_id(hand_id, "hand_id")
        if request_id:  # kept in the hand's rows: bounded like NewHand's
            check_id(request_id, "request_id")
        held = self._held_hand(hand_id)
        for _ in range(MAX_ROUNDS):
            lost = False
            with held.lock:
                try:
                    read = not held.synced
                    if read:
                        self._catch_up(hand_id, held)
                    hand = held.hand.copy()  # the op's, and its answer's: never the cache's
                    events, revealed = len(hand.events), hand.revealed
                    try:
                        result = op(hand)
                    except DomainError:
                        if read:
                            raise
                        held.synced = False  # refused by a hand maybe behind: read, ask again
                        continue
                    row = op_for(hand, events, revealed, request_id)
                    if row is None:
                        if read:
                            return result
                        held.synced = False  # a repeat: answered from the hand as it is now
                        continue
                    try:
                        seq = self.store.append(
                            LOG_PREFIX + hand_id, row.to_bytes(), expected_seq=held.seq
                        )
                    except Conflict as refused:  # another replica appended first: its rows,
                        lost = not self._apply(held, refused.entries)  # then ours again
                    else:
                        row.apply(held.hand)  # the cached hand as of our row (checked again)
                        held.seq = seq
                        if hand.revealed:  # nothing more to serve: keep the cache for live hands
                            self._drop(hand_id, held)
                        return result
                except BaseException:
                    self._drop(hand_id, held)
                    raise
            if lost:  # refused with nothing to catch up on: the log is not where it was
                held = self._reload(hand_id, held)
        raise StoreUnavailable(f"hand {hand_id} kept being written by others: retry")

    def deal(self, hand_id: str) -> tuple[list[list[int]], HandWall, bool]:
        """The deal, the hand, and whether this call dealt it (False for a repeat)."""

        def op(h: HandWall) -> tuple[list[list[int]], HandWall, bool]:
            fresh = not h.dealt
            return h.deal(), h, fresh

        return self._update(hand_id, op)

    # ``epoch``: the caller's ownership epoch of the hand's table, 0 for an unfenced caller
    # (HandWall's docstring says what a fenced operation does).
    def draw(
        self, hand_id: str, seat: int, request_id: str = "", epoch: int = 0
    ) -> tuple[WallEvent, HandWall]:
        return self._update(hand_id, lambda h: (h.draw(seat, request_id, epoch), h), request_id)

    def draw_replacement(
        self, hand_id: str, seat: int, request_id: str = "", epoch: int = 0
    ) -> tuple[WallEvent, HandWall]:
        return self._update(
            hand_id, lambda h: (h.draw_replacement(seat, request_id, epoch), h), request_id
        )

    def swap(
        self, hand_id: str, seat: int, buried: list[int], request_id: str = "", epoch: int = 0
    ) -> tuple[WallEvent, HandWall]:
        return self._update(
            hand_id, lambda h: (h.swap(seat, buried, request_id, epoch), h), request_id
        )

    def flip_indicator(
        self, hand_id: str, request_id: str = "", epoch: int = 0
    ) -> tuple[WallEvent, HandWall]:
        """翻百搭: turn the 百搭 indicator (:meth:`HandWall.flip_indicator`)."""
        return self._update(hand_id, lambda h: (h.flip_indicator(request_id, epoch), h), request_id)

    def reveal(self, hand_id: str, epoch: int = 0, next_request_id: str = "") -> HandWall:
        def op(h: HandWall) -> HandWall:
            h.reveal(epoch, next_request_id)
            return h

        return self._update(hand_id, op, next_request_id)

    def prune(self, max_age_seconds: float) -> int:
        """Delete walls created more than ``max_age_seconds`` ago (revealed or abandoned), their
        rows and their NewHand request ids; returns how many were deleted."""
        cutoff = self.clock() - max_age_seconds
        deleted = 0
        for hand_id, rec in self.store.scan(NAMESPACE):
            data = decode_record(rec.value)
            if data.get("created", 0.0) < cutoff:
                if data.get("request_id"):
                    self.store.delete(REQUESTS, data["request_id"])
                # The header first: a replica that appends meanwhile loses its row with the
                # log, or finds the log gone (Conflict), then the header gone (NotFound).
                deleted += self.store.delete(NAMESPACE, hand_id)
                self.store.delete_log(LOG_PREFIX + hand_id)
                self._drop(hand_id)
        return deleted
