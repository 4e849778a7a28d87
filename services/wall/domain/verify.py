"""The wall verifier (验牌): rebuild a hand's wall and dice from its revealed seed, check the
seed against the commitment published at the start, and check that every tile the record says
was dealt or drawn is the tile the wall gives at that point.

The record is a JSON object (what ``mahjong wall reveal`` prints and ``mahjong verify-wall``
reads)::

    {"seed": "<64 hex>", "commitment": "<64 hex>", "dealer": 0,
     "dice": [3, 4],                    # optional: checked when present
     "reserved_tiles": 0,               # optional, default 0
     "tile_swap_count": 5,              # optional, needed only when the record has swaps
     "tile_set": {"extras": true, "dedicated_wildcards": true, "dragons_bonus": true},
                                        # optional: the 百搭 sets (RULES-presets §13.B.1)
     "events": [                        # in order; the deal events first
        {"kind": "deal", "seat": 0, "tiles": "1m2m3m..."},   # tiles in the order taken
        {"kind": "draw", "seat": 1, "tiles": "5p"},
        {"kind": "replacement", "seat": 0, "tiles": "3f"},
        {"kind": "swap", "seat": 2, "buried": "11223m", "tiles": "..."},
        {"kind": "indicator", "seat": 0, "tiles": "5z3m"},  # 翻百搭: set aside, indicator last
        {"kind": "draw", "seat": 2}     # tiles unknown to this client: not compared
     ]}

A client that saw only its own tiles verifies with the others' tiles left out; the deal may list
only some seats. Tile strings are mpsz read in the order written.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from typing import Any

from services.wall.domain import shuffle
from services.wall.domain.events import DEAL, DRAW, EVENT_KINDS, INDICATOR, REPLACEMENT
from services.wall.domain.record import HandWall, tile_set_from_json, tile_set_to_json
from shared import tiles as T
from shared.errors import DomainError


class RecordError(ValueError):
    """A verification record that cannot be read; the message names the field."""


@dataclass
class Verification:
    """The verifier's verdict: ``ok`` when the commitment, dice and every listed tile match."""

    problems: list[str] = field(default_factory=list)
    events_checked: int = 0
    tiles_checked: int = 0
    dice: tuple[int, int] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.ok:
            return (
                f"OK: commitment matches the seed; dice {self.dice}; "
                f"{self.tiles_checked} tiles in {self.events_checked} events match the wall"
            )
        return "FAILED:\n" + "\n".join(f"  - {p}" for p in self.problems)


def _hex(record: dict[str, Any], key: str, size: int) -> bytes:
    value = record.get(key)
    if not isinstance(value, str):
        raise RecordError(f"{key} is missing: {size} bytes as hex")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise RecordError(f"{key} is not hex: {value!r}") from None
    if len(raw) != size:
        raise RecordError(f"{key} has {len(raw)} bytes, expected {size}")
    return raw


def _int(record: dict[str, Any], key: str, lo: int, hi: int, default: int | None = None) -> int:
    value = record.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise RecordError(f"{key} must be an integer {lo}-{hi}, got {value!r}")
    return value


def _tiles(event: dict[str, Any], key: str, where: str) -> list[int] | None:
    text = event.get(key)
    if text is None:
        return None
    if not isinstance(text, str):
        raise RecordError(f"{where}.{key} must be an mpsz string")
    try:
        return T.parse(text)
    except T.NotationError as exc:
        raise RecordError(f"{where}.{key}: {exc}") from None


def verify_record(record: dict[str, Any]) -> Verification:
    """Check a revealed hand's record. Raises :class:`RecordError` when the record itself is
    malformed; returns a :class:`Verification` listing every mismatch otherwise."""
    if not isinstance(record, dict):
        raise RecordError("a verification record is a JSON object")
    seed = _hex(record, "seed", shuffle.SEED_BYTES)
    committed = _hex(record, "commitment", 32)
    dealer = _int(record, "dealer", 0, 3)
    facts = record.get("tile_set")
    if facts is not None and not isinstance(facts, dict):
        raise RecordError("tile_set must be an object of true/false facts")
    try:
        tile_set = tile_set_from_json(facts)
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    reserved = _int(record, "reserved_tiles", 0, tile_set.size - 53, 0)
    swap_count = _int(record, "tile_swap_count", 0, 13, 0)
    events = record.get("events", [])
    if not isinstance(events, list):
        raise RecordError("events must be a list")

    result = Verification()
    if not hmac.compare_digest(shuffle.commitment(seed), committed):
        result.problems.append(
            "commitment does not match SHA-256 of the seed: the wall may have been changed"
        )
    hand = HandWall.create(
        "verify", seed, dealer, reserved=reserved, swap_count=swap_count, tile_set=tile_set
    )
    result.dice = hand.dice
    if "dice" in record:
        dice = record["dice"]
        if list(dice) != list(hand.dice):
            result.problems.append(f"dice {dice} do not match the seed's dice {list(hand.dice)}")

    in_play = False
    for i, event in enumerate(events):
        where = f"events[{i}]"
        if not isinstance(event, dict):
            raise RecordError(f"{where} is not an object")
        kind = event.get("kind")
        if kind not in EVENT_KINDS:
            raise RecordError(f"{where}.kind {kind!r} is not one of {', '.join(EVENT_KINDS)}")
        if "seat" not in event:
            raise RecordError(f"{where}.seat is missing")
        seat = _int(event, "seat", 0, 3)
        claimed = _tiles(event, "tiles", where)
        label = f"{where} ({kind} by seat {seat})"
        if kind == DEAL and in_play:
            raise RecordError(f"{where}: deal events must come before any draw or swap")
        try:
            hands = hand.deal()  # the first event deals; later calls return the same deal
            if kind == DEAL:
                actual = hands[seat]
            elif kind == DRAW:
                actual = list(hand.draw(seat).tiles)
            elif kind == REPLACEMENT:
                actual = list(hand.draw_replacement(seat).tiles)
            elif kind == INDICATOR:
                actual = list(hand.flip_indicator().tiles)
            else:
                buried = _tiles(event, "buried", where)
                if buried is None:
                    raise RecordError(f"{where}.buried is missing")
                actual = list(hand.swap(seat, buried).tiles)
        except DomainError as exc:
            result.problems.append(f"{label}: the wall refuses it: {exc.message}")
            break
        in_play = in_play or kind != DEAL
        result.events_checked += 1
        if claimed is None:
            continue
        if claimed != actual:
            result.problems.append(
                f"{label}: record says {T.format_tiles(claimed, sort=False) or 'nothing'}, "
                f"the wall gives {T.format_tiles(actual, sort=False)}"
            )
        else:
            result.tiles_checked += len(actual)
    return result


def record_of(hand: HandWall) -> dict[str, Any]:
    """The verification record of a hand the wall holds (everything it handed out)."""
    return {
        "hand_id": hand.hand_id,
        "seed": hand.seed.hex(),
        "commitment": hand.commitment.hex(),
        "dealer": hand.dealer,
        "dice": list(hand.dice),
        "reserved_tiles": hand.wall.reserved,
        "tile_swap_count": hand.swap_count,
        **({"tile_set": ts} if (ts := tile_set_to_json(hand.tile_set)) else {}),
        "events": [e.to_json() for e in hand.events],
    }
