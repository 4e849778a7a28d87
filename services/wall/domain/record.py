"""One hand's wall with its history: the seed and commitment, the dice, the physical
:class:`~services.wall.domain.wall.Wall`, every tile handed out (the event log that Reveal
discloses and the verifier replays: :mod:`services.wall.domain.events`), 换牌 bookkeeping and the
revealed flag.

:class:`HandWall` is the unit the repository works on and the verifier replays, so the service
and the verifier cannot disagree. The repository stores it as a header and one row per
operation (:mod:`services.wall.storage.rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from services.wall.domain import shuffle
from services.wall.domain.errors import StaleOwner
from services.wall.domain.events import (
    DEAL,
    DRAW,
    INDICATOR,
    REPLACEMENT,
    SWAP,
    WallEvent,
    new_event,
)
from services.wall.domain.wall import DEALT_TILES, SEATS, Wall, break_stack
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument
from shared.tile_set import STANDARD, TileSet

# The tile-set facts a stored hand and a verification record carry (absent: the standard set).
_SET_KEYS: Final = (
    "extras",
    "dedicated_wildcards",
    "flipped_wildcard",
    "flipped_same",
    "dragons_bonus",
)


def tile_set_to_json(ts: TileSet) -> dict[str, bool] | None:
    """The facts of a tile set the wall needs (None for the standard set)."""
    if ts == STANDARD:
        return None
    return {key: bool(getattr(ts, key)) for key in _SET_KEYS}


def tile_set_from_json(d: dict[str, Any] | None) -> TileSet:
    if not d:
        return STANDARD
    unknown = set(d) - set(_SET_KEYS)
    if unknown:
        raise ValueError(f"tile_set has unknown keys {', '.join(sorted(unknown))}")
    for key, value in d.items():
        if not isinstance(value, bool):
            raise ValueError(f"tile_set.{key} must be true or false, got {value!r}")
    return TileSet(name="baida", **{key: bool(d.get(key, False)) for key in _SET_KEYS})


@dataclass
class HandWall:
    """The wall of one hand and its history. Operations validate first and change nothing
    when they raise.

    **Fenced operations** (``epoch`` > 0, the caller's ownership epoch of the table: a fencing
    token that rises on every takeover). The wall keeps the highest epoch of its operations
    and refuses a lower one (:class:`StaleOwner`), so a former owner resumed after its lease
    can hand out nothing more. A fenced caller numbers its calls by its own log and asks the
    wall only for what its log does not hold yet; so a request id the wall has seen means the
    caller's log ends before that operation: everything the wall handed out from it on (and a
    reveal) was never logged by an owner, and is void (:meth:`_void_from`). The operation is
    then made again from the hand as it was: the same tile for the same call, the right one
    for a different call (a bot that decided otherwise on the new owner). Only a plain retry,
    the same call under the same epoch as the hand's last operation, is answered as before.
    What an unfenced caller was handed, or an unfenced reveal, is never voided: a fenced call
    that would is refused. Unfenced operations (``epoch`` 0) keep request-id idempotency: a
    reused id for another call is refused."""

    hand_id: str
    seed: bytes
    dealer: int
    dice: tuple[int, int]
    wall: Wall
    swap_count: int = 0  # 0: 换牌 not allowed by the ruleset
    events: list[WallEvent] = field(default_factory=list)
    swapped: set[int] = field(default_factory=set)
    swap_stream_position: int = 0
    request_ids: dict[str, int] = field(default_factory=dict)  # request id → event sequence
    revealed: bool = False
    created: float = 0.0  # seconds since the epoch, for retention (repository.prune)
    request_id: str = ""  # the NewHand idempotency key, if any
    tile_set: TileSet = STANDARD
    epoch: int = 0  # the highest owner epoch of an operation so far (0: none fenced)
    event_epochs: list[int] = field(default_factory=list)  # the owner epoch of each event
    reveal_epoch: int = 0  # the epoch the hand was revealed under, if it is (0: unfenced)
    # The wall as NewHand laid it out, which a void rebuilds from (empty: shuffle the seed).
    shuffled: tuple[int, ...] = field(default=(), compare=False)
    # What the operation under way did besides its own event (read by rows.op_for, reset by
    # each operation): the event it voided from (0: none) and the epoch it was made under.
    voided_from: int = field(default=0, compare=False)
    op_epoch: int = field(default=0, compare=False)

    # --- creation --------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        hand_id: str,
        seed: bytes,
        dealer: int,
        *,
        reserved: int = 0,
        swap_count: int = 0,
        tile_set: TileSet = STANDARD,
    ) -> HandWall:
        """Shuffle and roll from ``seed`` and open the wall (RULES.md §3; the 百搭 sets of
        RULES-presets §13.B.2)."""
        if not 0 <= dealer < SEATS:
            raise InvalidArgument(f"dealer seat {dealer} out of range 0-3", field="dealer")
        full = tile_set.tiles()
        if not 0 <= reserved <= len(full) - DEALT_TILES:
            raise InvalidArgument(
                f"reserved tiles {reserved} out of range 0-{len(full) - DEALT_TILES}",
                field="ruleset.table.reserved_tiles",
            )
        shuffle.check_seed(seed)
        tiles, dice = shuffle.shuffle_and_dice(seed, full)
        # the shuffle's tiles are a permutation of ``full`` by construction: the wall is opened
        # on them directly, without laid_out's (Wall.build's) check that they are one, and
        # without asking the tile set for its tiles again
        wall = Wall(tiles, break_stack(dealer, dice, len(tiles) // 2), reserved)
        return cls(
            hand_id,
            bytes(seed),
            dealer,
            dice,
            wall,
            swap_count,
            tile_set=tile_set,
            shuffled=tuple(tiles),
        )

    @classmethod
    def laid_out(
        cls,
        hand_id: str,
        seed: bytes,
        dealer: int,
        dice: tuple[int, int],
        tiles: Sequence[int],
        reserved: int,
        swap_count: int,
        tile_set: TileSet,
    ) -> HandWall:
        """The hand as NewHand left it, from the wall as shuffled (``tiles``) and the dice:
        nothing drawn yet (a new hand, a stored header, a void's rebuild)."""
        wall = Wall.build(tiles, dealer, dice, reserved, tile_set.tiles())
        return cls(
            hand_id,
            seed,
            dealer,
            dice,
            wall,
            swap_count,
            tile_set=tile_set,
            shuffled=tuple(tiles),
        )

    @property
    def commitment(self) -> bytes:
        return shuffle.commitment(self.seed)

    @property
    def dealt(self) -> bool:
        return bool(self.events)

    @property
    def next_sequence(self) -> int:
        return len(self.events) + 1

    # --- checks ----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.revealed:
            raise FailedPrecondition(
                f"hand {self.hand_id} is revealed: its wall takes no more draws",
                reason="HAND_REVEALED",
                hand_id=self.hand_id,
            )

    def _check_dealt(self) -> None:
        if not self.dealt:
            raise FailedPrecondition(
                f"hand {self.hand_id} is not dealt yet: call Deal first",
                reason="NOT_DEALT",
                hand_id=self.hand_id,
            )

    @staticmethod
    def _check_seat(seat: int) -> None:
        if not 0 <= seat < SEATS:
            raise InvalidArgument(f"seat {seat} out of range 0-3", field="seat")

    def replayed(self, request_id: str, kind: str, seat: int) -> WallEvent | None:
        """The event a retried request produced, or None for a new request id."""
        if not request_id or request_id not in self.request_ids:
            return None
        event = self.events[self.request_ids[request_id] - 1]
        if event.kind != kind or event.seat != seat:
            raise InvalidArgument(
                f"request id {request_id!r} was used for a {event.kind} by seat {event.seat}",
                field="request_id",
            )
        return event

    def drawn_after(self, sequence: int) -> tuple[int, int]:
        """(live, replacement) tiles taken from the wall once event ``sequence`` was made: the
        counts a repeated request is answered with, as its first answer had them, not as they
        are now (a takeover's retry of a draw after later draws)."""
        w = self.wall
        if sequence >= len(self.events):
            return w.live_drawn, w.replacements_drawn
        live = replacements = 0
        for e in self.events[:sequence]:
            if e.kind == DEAL or e.kind == DRAW:
                live += len(e.tiles)
            elif e.kind == REPLACEMENT or e.kind == INDICATOR:
                replacements += len(e.tiles)
        return live, replacements

    def _record(self, kind: str, seat: int, tiles: Sequence[int], buried=(), rid="") -> WallEvent:
        event = WallEvent(self.next_sequence, kind, seat, tuple(tiles), tuple(buried))
        self.events.append(event)
        self.event_epochs.append(self.op_epoch)
        if rid:
            self.request_ids[rid] = event.sequence
        return event

    # --- fencing ---------------------------------------------------------------------------
    def _begin(self, epoch: int) -> None:
        if epoch < 0:
            raise InvalidArgument(f"owner epoch {epoch} is negative", field="owner_epoch")
        self.op_epoch = epoch
        self.voided_from = 0

    def _again(
        self, epoch: int, request_id: str, kind: str, seat: int, buried: tuple[int, ...] = ()
    ) -> WallEvent | None:
        """Begin an operation that hands out tiles: the event a retry gets again (fenced:
        :meth:`_fence`; unfenced: :meth:`replayed`), or None when it is to be made."""
        self._begin(epoch)
        if epoch:
            return self._fence(epoch, request_id, kind, seat, buried)
        return self.replayed(request_id, kind, seat)

    def _check_epoch(self, epoch: int) -> None:
        if epoch < self.epoch:
            raise StaleOwner(
                f"hand {self.hand_id}: owner epoch {epoch} is older than {self.epoch}, the "
                "epoch of its latest operation: another replica owns the table now",
                hand_id=self.hand_id,
                epoch=epoch,
                current_epoch=self.epoch,
            )

    def _fence(
        self, epoch: int, request_id: str, kind: str, seat: int, buried: tuple[int, ...] = ()
    ) -> WallEvent | None:
        """Check a fenced operation (see the class docstring): refuse a stale epoch, void what
        a repeated request id says was never logged, and give the event a plain retry gets
        again (None: the operation is to be made)."""
        self._check_epoch(epoch)
        seq = self.request_ids.get(request_id) if request_id else None
        if seq is not None:
            event = self.events[seq - 1]
            retry = (
                event.kind == kind
                and event.seat == seat
                and event.buried == buried
                and self.event_epochs[seq - 1] == epoch
                and seq == len(self.events)
                and not self.revealed
            )
            if retry:
                return event
            self._void_from(seq)
        elif self.revealed and self.reveal_epoch:
            self._void_from(len(self.events) + 1)  # revealed for a hand end never logged
        self.epoch = epoch
        return None

    def _void_from(self, sequence: int) -> None:
        """Void every event from ``sequence`` on, and the reveal: the hand is rebuilt from the
        wall as shuffled through the events before (each handing out the same tiles again).
        An unfenced caller's event or reveal is never voided (StaleOwner)."""
        keep = self.events[: sequence - 1]
        unfenced = 0 in self.event_epochs[sequence - 1 :]
        if unfenced or (self.revealed and not self.reveal_epoch):
            raise StaleOwner(
                f"hand {self.hand_id}: what an unfenced caller was handed (from event "
                f"{sequence} on) is not this caller's to void: another owner plays the table",
                hand_id=self.hand_id,
            )
        tiles = self.shuffled or shuffle.shuffle_and_dice(self.seed, self.tile_set.tiles())[0]
        fresh = HandWall.laid_out(
            self.hand_id,
            self.seed,
            self.dealer,
            self.dice,
            tiles,
            self.wall.reserved,
            self.swap_count,
            self.tile_set,
        )
        for e in keep:
            if e.kind == DEAL:
                if not fresh.dealt:
                    fresh.deal()
                continue
            if e.kind == DRAW:
                again = fresh.draw(e.seat)
            elif e.kind == REPLACEMENT:
                again = fresh.draw_replacement(e.seat)
            elif e.kind == SWAP:
                again = fresh.swap(e.seat, e.buried)
            else:
                again = fresh.flip_indicator()
            if again.tiles != e.tiles:
                raise AssertionError(f"hand {self.hand_id}: rebuilding event {e.sequence} differs")
        self.wall = fresh.wall
        self.events = keep
        self.event_epochs = self.event_epochs[: sequence - 1]
        self.swapped = fresh.swapped
        self.swap_stream_position = fresh.swap_stream_position
        self.request_ids = {rid: q for rid, q in self.request_ids.items() if q < sequence}
        self.revealed = False
        self.reveal_epoch = 0
        self.voided_from = min(self.voided_from or sequence, sequence)

    # --- operations ------------------------------------------------------------------------
    def deal(self) -> list[list[int]]:
        """起牌: hands by seat (dealer 14, others 13); repeating it returns the same deal."""
        if not self.dealt:
            self._check_open()
            self._begin(0)
            hands = self.wall.deal(self.dealer)
            for i in range(SEATS):
                seat = (self.dealer + i) % SEATS
                self._record(DEAL, seat, hands[seat])
        return self.hands_dealt()

    def hands_dealt(self) -> list[list[int]]:
        hands: list[list[int]] = [[] for _ in range(SEATS)]
        for event in self.events:
            if event.kind == DEAL:
                hands[event.seat] = list(event.tiles)
        return hands

    def draw(self, seat: int, request_id: str = "", epoch: int = 0) -> WallEvent:
        """摸牌 a live draw by ``seat``."""
        return self._draw(DRAW, seat, request_id, epoch)

    def draw_replacement(self, seat: int, request_id: str = "", epoch: int = 0) -> WallEvent:
        """补张 a replacement draw by ``seat`` (after a kong or a flower)."""
        return self._draw(REPLACEMENT, seat, request_id, epoch)

    def _draw(self, kind: str, seat: int, request_id: str, epoch: int) -> WallEvent:
        # The checks' conditions are tested here first: a draw is the hot path, and the
        # checks themselves (which write the messages) run only when one fails.
        if not 0 <= seat < SEATS:
            self._check_seat(seat)
        again = self._again(epoch, request_id, kind, seat)
        if again is not None:
            return again
        if self.revealed:
            self._check_open()
        events = self.events
        if not events:
            self._check_dealt()
        tile = (self.wall.draw_live() if kind == DRAW else self.wall.draw_replacement())[0]
        event = new_event((len(events) + 1, kind, seat, (tile,), ()))  # WallEvent's fields
        events.append(event)
        self.event_epochs.append(epoch)
        if request_id:
            self.request_ids[request_id] = event.sequence
        return event

    def received(self, seat: int) -> list[int]:
        """Every tile the wall gave ``seat`` minus what it buried in a swap (a multiset)."""
        counts = [0] * T.NUM_TILE_KINDS
        for e in self.events:
            if e.seat == seat:
                for k in e.tiles:
                    counts[k] += 1
                for k in e.buried:
                    counts[k] -= 1
        return [k for k, n in enumerate(counts) for _ in range(n)]

    def swap(
        self, seat: int, buried: Sequence[int], request_id: str = "", epoch: int = 0
    ) -> WallEvent:
        """换牌 tile swap (RULES.md §3, option ``table.tile_swap``): after the deal and before the
        first live draw of play, a seat buries exactly ``swap_count`` non-flower tiles it holds
        and takes as many from random places of the wall, once per hand. The places come from
        the seed's swap stream (:data:`~services.wall.domain.shuffle.SWAP_LABEL`), consumed in event
        order, so the verifier can replay them."""
        self._check_seat(seat)
        again = self._again(epoch, request_id, SWAP, seat, tuple(buried))
        if again is not None:
            return again
        self._check_open()
        self._check_dealt()
        if self.swap_count <= 0:
            raise FailedPrecondition(
                "this table's ruleset does not allow 换牌 (table.tile_swap is off)",
                reason="SWAP_NOT_ALLOWED",
            )
        if seat in self.swapped:
            raise FailedPrecondition(f"seat {seat} has already swapped", reason="ALREADY_SWAPPED")
        if self.wall.live_drawn > DEALT_TILES:
            raise FailedPrecondition(
                "换牌 is only allowed before the first draw of play", reason="SWAP_TOO_LATE"
            )
        if len(buried) != self.swap_count:
            raise InvalidArgument(
                f"a swap buries exactly {self.swap_count} tiles, got {len(buried)}",
                field="buried",
            )
        held = self.received(seat)
        for k in buried:
            if self.tile_set.is_bonus(k):
                raise InvalidArgument(
                    f"bonus tile {T.format_tile(k)} cannot be buried: bonus tiles are exposed "
                    "(补花)",
                    field="buried",
                )
            if k not in held:
                raise InvalidArgument(
                    f"seat {seat} does not hold {T.format_tile(k)} to bury "
                    f"(holds {T.format_tiles(held)})",
                    field="buried",
                )
            held.remove(k)
        stream = shuffle.ByteStream(self.seed, shuffle.SWAP_LABEL, self.swap_stream_position)
        taken = self.wall.swap(buried, stream.uniform)
        self.swap_stream_position = stream.position
        self.swapped.add(seat)
        return self._record(SWAP, seat, taken, buried, request_id)

    def indicator_event(self) -> WallEvent | None:
        """The 翻百搭 flip of this hand, if made."""
        return next((e for e in self.events if e.kind == INDICATOR), None)

    def flip_indicator(self, request_id: str = "", epoch: int = 0) -> WallEvent:
        """翻百搭 (RULES-presets §13.B.9, ``baida_tiles.wildcards = "flipped"``): after the deal
        and its 补花 the next replacement tile is turned face up as the indicator and put aside
        out of play; a bonus tile turned up is put aside exposed and the next replacement tile
        is turned instead. Once per hand, before the first live draw of play; the event (seat =
        the dealer, who turns it) lists the tiles turned in order, the indicator last."""
        again = self._again(epoch, request_id, INDICATOR, self.dealer)
        if again is not None:
            return again
        self._check_open()
        self._check_dealt()
        if not self.tile_set.flipped_wildcard:
            raise FailedPrecondition(
                "this table's ruleset has no flipped 百搭 (baida_tiles.wildcards is not flipped)",
                reason="NO_FLIPPED_WILDCARD",
            )
        earlier = self.indicator_event()
        if earlier is not None:
            return earlier
        if self.wall.live_drawn > DEALT_TILES:
            raise FailedPrecondition(
                "the 百搭 indicator is turned before the first draw of play",
                reason="INDICATOR_TOO_LATE",
            )
        turned: list[int] = []
        while True:
            tile = self.wall.draw_replacement()[0]  # WallExhausted leaves the hand drawn
            turned.append(tile)
            if not self.tile_set.is_bonus(tile):
                break
        return self._record(INDICATOR, self.dealer, turned, (), request_id)

    def wild_kind(self) -> int | None:
        """The kind every tile of which is a 百搭 this hand (flipped), or None."""
        event = self.indicator_event()
        return None if event is None else self.tile_set.wild_kind_for(event.tiles[-1])

    def reveal(self, epoch: int = 0, next_request_id: str = "") -> None:
        """End the hand's wall: the seed may be disclosed; no more draws. Fenced, what the
        wall handed out under ``next_request_id`` (the call the caller would make next) and
        after was never logged by the caller, and is void; a hand revealed under an older
        epoch is revealed again under this one (its row holds the newer epoch)."""
        self._begin(epoch)
        if epoch:
            self._check_epoch(epoch)
            seq = self.request_ids.get(next_request_id) if next_request_id else None
            if seq is not None:
                self._void_from(seq)
            elif self.revealed and self.reveal_epoch and epoch != self.reveal_epoch:
                self._void_from(len(self.events) + 1)
            self.epoch = epoch
        if not self.revealed:
            self.revealed = True
            self.reveal_epoch = epoch

    def copy(self) -> HandWall:
        """A snapshot that later operations on this hand do not change."""
        w = self.wall
        wall = Wall(
            list(w.tiles),
            w.start,
            w.reserved,
            bytearray(w.taken),
            w.live_drawn,
            w.replacements_drawn,
        )
        return HandWall(
            self.hand_id,
            self.seed,
            self.dealer,
            self.dice,
            wall,
            self.swap_count,
            list(self.events),
            set(self.swapped),
            self.swap_stream_position,
            dict(self.request_ids),
            self.revealed,
            self.created,
            self.request_id,
            self.tile_set,
            self.epoch,
            list(self.event_epochs),
            self.reveal_epoch,
            self.shuffled,
        )
