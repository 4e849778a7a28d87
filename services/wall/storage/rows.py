"""How a hand's wall is persisted (version 2): written once, then one small row per operation.

* :class:`HandHeader`, the record ``wall/<hand_id>``: what never changes after NewHand (seed,
  dealer, dice, the shuffled tiles, reserved tiles, 换牌 count, creation time, the NewHand
  request id, the tile set when it is not the standard 144). Written once.
* :class:`WallOp`, one entry of the log ``wall/<hand_id>`` per operation that changed the
  hand: the deal, a live or replacement draw (seat, tile, request id), a swap (seat, buried,
  taken, request id), the 翻百搭 flip (the tiles turned, indicator last), the reveal. Appended
  with the number the writer read the log at (``Store.append(expected_seq=…)``), so two
  replicas drawing from one hand at once never both succeed: the loser reads the winner's row
  and draws again.

The hand is the header replayed through its operations (every operation is deterministic
given the seed), and each replayed draw is checked against the tile its row recorded. (Version
1, the whole hand rewritten in its record on every draw, came before 0.1: no store holds it, and
a record of it is refused as of an unknown version.)

Encoding: compact JSON objects with a version field ``v``; tiles as kind indices.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from services.wall.domain.events import DEAL, DRAW, INDICATOR, REPLACEMENT, SWAP
from services.wall.domain.record import HandWall, tile_set_from_json, tile_set_to_json
from shared.tile_set import STANDARD, TileSet

HEADER_VERSION = 2
OP_VERSION = 1
# Rows of fenced operations (an owner epoch, maybe a void): a reader that predates fencing
# would replay them wrong, so it refuses them by their version instead.
FENCED_OP_VERSION = 2
REVEAL = "reveal"
OP_KINDS = (DEAL, DRAW, REPLACEMENT, SWAP, INDICATOR, REVEAL)


class CorruptWall(RuntimeError):
    """A stored row that does not decode, or a replayed draw that differs from its row."""


@dataclass(frozen=True, slots=True)
class HandHeader:
    hand_id: str
    seed: bytes
    dealer: int
    dice: tuple[int, int]
    tiles: tuple[int, ...]  # the shuffled wall, position by position
    reserved: int
    swap_count: int
    created: float
    request_id: str
    tile_set: TileSet = STANDARD  # the 百搭 sets (RULES-presets §13.B.2); absent: the 144

    @classmethod
    def of(cls, hand: HandWall) -> HandHeader:
        """The header of a hand just created (nothing drawn yet)."""
        return cls(
            hand.hand_id,
            hand.seed,
            hand.dealer,
            hand.dice,
            tuple(hand.wall.tiles),
            hand.wall.reserved,
            hand.swap_count,
            hand.created,
            hand.request_id,
            hand.tile_set,
        )

    def hand(self) -> HandWall:
        """The hand as NewHand left it."""
        hand = HandWall.laid_out(
            self.hand_id,
            self.seed,
            self.dealer,
            self.dice,
            self.tiles,
            self.reserved,
            self.swap_count,
            self.tile_set,
        )
        hand.created = self.created
        hand.request_id = self.request_id
        return hand

    def to_bytes(self) -> bytes:
        ts = tile_set_to_json(self.tile_set)
        return json.dumps(
            {
                **({"tile_set": ts} if ts is not None else {}),
                "v": HEADER_VERSION,
                "hand_id": self.hand_id,
                "seed": self.seed.hex(),
                "dealer": self.dealer,
                "dice": list(self.dice),
                "tiles": bytes(self.tiles).hex(),
                "reserved": self.reserved,
                "swap_count": self.swap_count,
                "created": self.created,
                "request_id": self.request_id,
            },
            separators=(",", ":"),
        ).encode()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> HandHeader:
        try:
            return cls(
                str(d["hand_id"]),
                bytes.fromhex(d["seed"]),
                int(d["dealer"]),
                (int(d["dice"][0]), int(d["dice"][1])),
                tuple(bytes.fromhex(d["tiles"])),
                int(d["reserved"]),
                int(d["swap_count"]),
                float(d["created"]),
                str(d["request_id"]),
                tile_set_from_json(d.get("tile_set")),
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise CorruptWall(f"wall header does not decode: {exc!r}") from None


def decode_record(raw: bytes) -> dict[str, Any]:
    """A stored wall header as JSON; CorruptWall if it is not one."""
    try:
        d = json.loads(raw)
    except ValueError as exc:
        raise CorruptWall(f"wall record is not JSON: {exc}") from None
    if not isinstance(d, dict) or d.get("v") != HEADER_VERSION:
        raise CorruptWall(f"wall record of unknown version {getattr(d, 'get', dict)('v')!r}")
    return d


@dataclass(frozen=True, slots=True)
class WallOp:
    """One operation that changed a hand, as its log row."""

    kind: str  # deal, draw, replacement, swap, reveal
    seat: int = -1
    tiles: tuple[int, ...] = ()  # what the seat received (draws, swaps)
    buried: tuple[int, ...] = ()  # swaps
    request_id: str = ""
    epoch: int = 0  # the caller's owner epoch (0: unfenced)
    void_from: int = 0  # the first event this operation voided, with the reveal (0: none)

    def to_bytes(self) -> bytes:
        fenced = self.epoch or self.void_from
        d: dict[str, Any] = {"v": FENCED_OP_VERSION if fenced else OP_VERSION, "op": self.kind}
        if self.epoch:
            d["e"] = self.epoch
        if self.void_from:
            d["x"] = self.void_from
        if self.seat >= 0:
            d["seat"] = self.seat
        if self.tiles:
            d["tiles"] = list(self.tiles)
        if self.buried:
            d["buried"] = list(self.buried)
        if self.request_id:
            d["rid"] = self.request_id
        return json.dumps(d, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> WallOp:
        try:
            d = json.loads(raw)
            if d["v"] not in (OP_VERSION, FENCED_OP_VERSION) or d["op"] not in OP_KINDS:
                raise ValueError(f"version {d['v']!r}, op {d['op']!r}")
            return cls(
                d["op"],
                int(d.get("seat", -1)),
                tuple(int(k) for k in d.get("tiles", ())),
                tuple(int(k) for k in d.get("buried", ())),
                str(d.get("rid", "")),
                int(d.get("e", 0)),
                int(d.get("x", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptWall(f"wall log row does not decode: {exc!r}") from None

    def apply(self, hand: HandWall) -> None:
        """Replay this operation on ``hand`` (the hand as of the row before), checking that it
        hands out what the row says it did."""
        kind, epoch = self.kind, self.epoch
        if kind == DEAL:
            hand.deal()
            return
        if kind == REVEAL:
            hand.reveal(epoch, self.request_id)
            self._check_void(hand)
            return
        before = len(hand.events)
        if kind == DRAW:
            event = hand.draw(self.seat, self.request_id, epoch)
        elif kind == REPLACEMENT:
            event = hand.draw_replacement(self.seat, self.request_id, epoch)
        elif kind == INDICATOR:
            event = hand.flip_indicator(self.request_id, epoch)
        else:
            event = hand.swap(self.seat, self.buried, self.request_id, epoch)
        made = len(hand.events) == (self.void_from or before + 1)
        if not made or event.tiles != self.tiles:
            raise CorruptWall(
                f"hand {hand.hand_id}: replaying {kind} by seat {self.seat} gave "
                f"{list(event.tiles)}, its row says {list(self.tiles)}"
            )
        self._check_void(hand)

    def _check_void(self, hand: HandWall) -> None:
        if hand.voided_from != self.void_from:
            raise CorruptWall(
                f"hand {hand.hand_id}: replaying {self.kind} voided from event "
                f"{hand.voided_from or 'none'}, its row says {self.void_from or 'none'}"
            )


def op_for(hand: HandWall, events_before: int, revealed_before: bool, rid: str) -> WallOp | None:
    """The row of what one operation just did to ``hand`` (None when it changed nothing): its
    event, under the epoch it was made with, and what it voided first."""
    voided, epoch = hand.voided_from, hand.op_epoch
    if hand.revealed and (voided or not revealed_before):
        return WallOp(REVEAL, request_id=rid, epoch=epoch, void_from=voided)
    new = hand.events[voided - 1 if voided else events_before :]
    if not new:
        return None
    first = new[0]
    if first.kind == DEAL:
        return WallOp(DEAL)
    return WallOp(first.kind, first.seat, first.tiles, first.buried, rid, epoch, voided)
