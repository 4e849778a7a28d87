"""The table log's record format: one event per record, versioned JSON.

A record is ``{"v": 1, "t": <unix ms>, "kind": <KIND>, "data": {…}}``: the event's fields by
name, tiles in mpsz (in the order the event holds them), seats 0-3, no tile or seat as ``""`` or
``null``. A field whose value is its default is left out where the field is marked optional
(``huangfan_dice``, ``garden_stacks``, ``private`` …). Records written before the version field
existed are version 1 too: the format has not changed since, only the field was added.

:func:`decode` reads every version this project has written; a newer one is refused by name,
never guessed at. ``encode(decode(r))`` keeps every fact of ``r``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from services.gateway.domain.events import kinds as K
from shared import tiles as T
from shared.melds import MeldKind
from shared.table import (
    AddedKong,
    Chow,
    ConcealedKong,
    Decision,
    DeclareReady,
    Discard,
    ExposedKong,
    Pass,
    Pong,
    TileSwap,
    Win,
    action_name,
)

SCHEMA_VERSION = 1
READABLE_VERSIONS = frozenset({1})


class RecordError(ValueError):
    """A log record this project cannot read (malformed, or of an unknown version or kind)."""


# --- field codecs ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FieldCodec:
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


def _same(x: Any) -> Any:
    return x


def _tiles_out(ts: tuple[int, ...]) -> str:
    return T.format_tiles(ts, sort=False)


def _tiles_in(text: str) -> tuple[int, ...]:
    return tuple(T.parse(text)) if text else ()


def _tile_out(k: int | None) -> str:
    return T.format_tile(k) if k is not None else ""


def _tile_in(text: str | None) -> int | None:
    return T.parse(text)[0] if text else None


def _ints_in(xs: list[int] | None) -> tuple[int, ...] | None:
    return tuple(xs) if xs is not None else None


def _ints_out(xs: tuple[int, ...] | None) -> list[int] | None:
    return list(xs) if xs is not None else None


def meld_to_json(m: K.MeldFact) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": m.kind.label, "tiles": _tiles_out(m.tiles)}
    if m.from_seat is not None:
        d["from"] = m.from_seat
    if m.claimed is not None:
        d["claimed"] = _tile_out(m.claimed)
    return d


def meld_from_json(d: dict[str, Any]) -> K.MeldFact:
    return K.MeldFact(
        MeldKind.from_label(d["kind"]),
        _tiles_in(d.get("tiles", "")),
        d.get("from"),
        _tile_in(d.get("claimed")),
    )


def options_to_json(o: K.PromptOptions, prompt_kind: str) -> dict[str, Any]:
    """The options as the prompt's record holds them: the keys of its kind only."""
    if prompt_kind == "tile_swap":
        return {"swap_count": o.swap_count, "pass": o.pass_}
    if prompt_kind == "own_turn":
        d: dict[str, Any] = {
            "discards": [T.format_tile(k) for k in o.discards],
            "ready_discards": [T.format_tile(k) for k in o.ready_discards],
            "concealed_kongs": [T.format_tile(k) for k in o.concealed_kongs],
            "added_kongs": [T.format_tile(k) for k in o.added_kongs],
            "win": o.win,
        }
        if o.win_eight_flowers:
            d["win_eight_flowers"] = True
            d["win_shape"] = o.win_shape
        return d
    return {
        "win": o.win,
        "pong": o.pong,
        "exposed_kong": o.exposed_kong,
        "chows": [T.format_tile(k) for k in o.chows],
        "pass": o.pass_,
    }


def options_from_json(d: dict[str, Any]) -> K.PromptOptions:
    def kinds(key: str) -> tuple[int, ...]:
        return tuple(T.parse(t)[0] for t in d.get(key, ()))

    win = bool(d.get("win"))
    eight = bool(d.get("win_eight_flowers"))
    return K.PromptOptions(
        discards=kinds("discards"),
        ready_discards=kinds("ready_discards"),
        concealed_kongs=kinds("concealed_kongs"),
        added_kongs=kinds("added_kongs"),
        win=win,
        win_eight_flowers=eight,
        win_shape=bool(d.get("win_shape", win and not eight)),
        pong=bool(d.get("pong")),
        exposed_kong=bool(d.get("exposed_kong")),
        chows=kinds("chows"),
        swap_count=int(d.get("swap_count", 0)),
        pass_=bool(d.get("pass")),
    )


def action_to_json(action: Decision) -> dict[str, Any]:
    """A decision as the log records it (``{"type": …}`` and its tile)."""
    if isinstance(action, TileSwap):
        return {"type": "tile_swap", "tiles": _tiles_out(action.tiles)}
    d: dict[str, Any] = {"type": action_name(action)}
    if isinstance(action, Discard | AddedKong | ConcealedKong):
        d["tile"] = T.format_tile(action.tile)
    elif isinstance(action, DeclareReady):
        d["tile"] = T.format_tile(action.discard)
    elif isinstance(action, Chow):
        d["low"] = T.format_tile(action.low)
    elif isinstance(action, Win) and action.eight_flowers:
        d["eight_flowers"] = True
    return d


def _tile_of(d: dict[str, Any], key: str = "tile") -> int:
    if not d.get(key):
        raise RecordError(f"action {d.get('type')!r} has no {key}")
    return T.parse(d[key])[0]


_ACTIONS_FROM_JSON: dict[str, Callable[[dict[str, Any]], Decision]] = {
    "discard": lambda d: Discard(_tile_of(d)),
    "declare_ready": lambda d: DeclareReady(_tile_of(d)),
    "chow": lambda d: Chow(_tile_of(d, "low")),
    "pong": lambda d: Pong(),
    "exposed_kong": lambda d: ExposedKong(),
    "added_kong": lambda d: AddedKong(_tile_of(d)),
    "concealed_kong": lambda d: ConcealedKong(_tile_of(d)),
    "win": lambda d: Win(bool(d.get("eight_flowers"))),
    "pass": lambda d: Pass(),
    "tile_swap": lambda d: TileSwap(_tiles_in(d["tiles"])),
}


def action_from_json(d: dict[str, Any]) -> Decision:
    """Inverse of :func:`action_to_json`."""
    make = _ACTIONS_FROM_JSON.get(d.get("type", ""))
    if make is None:
        raise RecordError(f"unknown action type {d.get('type')!r}")
    return make(d)


TILE = FieldCodec(_tile_out, _tile_in)
TILES = FieldCodec(_tiles_out, _tiles_in)
INTS = FieldCodec(_ints_out, _ints_in)
PAIR = FieldCodec(list, tuple)
STRMAP = FieldCodec(dict, dict)
MELD = FieldCodec(meld_to_json, meld_from_json)
ACTION = FieldCodec(action_to_json, action_from_json)
HANDS = FieldCodec(
    lambda hs: [_tiles_out(h) for h in hs], lambda hs: tuple(_tiles_in(h) for h in hs)
)
SEATS = FieldCodec(
    lambda ss: [
        {"player_id": s.player_id, "display_name": s.display_name, "bot": s.bot} for s in ss
    ],
    lambda ss: tuple(
        K.SeatAssignment(s["player_id"], s.get("display_name", ""), bool(s["bot"])) for s in ss
    ),
)
WINNERS = FieldCodec(
    lambda ws: [
        {
            "seat": w.seat,
            "hand": w.hand,
            "flowers": w.flowers,
            "value": w.value,
            "win_kind": w.win_kind,
            "win_tile": _tile_out(w.win_tile),
        }
        for w in ws
    ],
    lambda ws: tuple(
        K.WinnerLine(
            w["seat"],
            w["hand"],
            w["flowers"],
            w["value"],
            w.get("win_kind", ""),
            _tile_in(w.get("win_tile")),
        )
        for w in ws
    ),
)


def _breakdown_line(b: K.BreakdownLine) -> dict:
    d = {"seat": b.seat, "code": b.code, "label": b.label, "amount": b.amount}
    if b.other_seat is not None:  # written only when there is one: older logs read the same
        d["other_seat"] = b.other_seat
    return d


BREAKDOWN = FieldCodec(
    lambda bs: [_breakdown_line(b) for b in bs],
    lambda bs: tuple(
        K.BreakdownLine(b.get("seat"), b["code"], b["label"], b["amount"], b.get("other_seat"))
        for b in bs
    ),
)
REVEALED = FieldCodec(
    lambda rs: [
        {
            "seat": r.seat,
            "concealed": _tiles_out(r.concealed),
            "melds": [meld_to_json(m) for m in r.melds],
            "flowers": _tiles_out(r.flowers),
        }
        for r in rs
    ],
    lambda rs: tuple(
        K.RevealedHand(
            r["seat"],
            _tiles_in(r["concealed"]),
            tuple(meld_from_json(m) for m in r["melds"]),
            _tiles_in(r["flowers"]),
        )
        for r in rs
    ),
)
PLAIN = FieldCodec(_same, _same)
_NONE_AWARE = (PLAIN, TILE)  # they write None themselves (null, "")

# Fields not listed for a class are plain JSON values (ints, strings, booleans, null).
FIELD_CODECS: dict[type[K.TableEvent], dict[str, FieldCodec]] = {
    K.TableStarted: {"seats": SEATS, "overrides": STRMAP},
    K.HandStarted: {"dice": PAIR, "garden_stacks": INTS, "doubled_seats": INTS, "fees": INTS},
    K.TilesDealt: {"hands": HANDS, "counts": INTS},
    K.FlowersExposed: {"flowers": TILES, "replacements": TILES},
    K.TileDrawn: {"tile": TILE},
    K.TileDiscarded: {"tile": TILE},
    K.MeldDeclared: {"meld": MELD},
    K.ReadyDeclared: {},
    K.Prompt: {"tile": TILE},  # options: by the prompt's kind, below
    K.ActionTaken: {"action": ACTION},
    K.WinDeclared: {"tile": TILE},
    K.HandResult: {
        "winners": WINNERS,
        "payments": INTS,
        "breakdown": BREAKDOWN,
        "revealed": REVEALED,
        "robbed_tile": TILE,
        "garden_stacks": INTS,
        "fees": INTS,
    },
    K.SeedRevealed: {},
    K.HandDrawn: {},
    K.TableFinished: {"chips": INTS, "garden_stacks": INTS},
    K.SeatChanged: {},
    K.TilesSwapped: {"buried": TILES, "taken": TILES},
    K.TimedOut: {},
    K.TableHalted: {},
    K.WildFlipped: {"indicator": TILE, "wild": TILE, "set_aside": TILES},
    K.DoubleCardPlayed: {},
    K.SeatBankrupt: {},
    K.NextHandReady: {},
    K.WindowPadding: {},
}

# Fields left out of a record while they hold their default (given here), else always written.
HEAD_DEFAULTS: dict[str, Any] = {"hand_id": "", "hand_number": 0}
OPTIONAL_FIELDS: dict[type[K.TableEvent], dict[str, Any]] = {
    K.TableStarted: {
        "seat_deadline_ms": 0,
        "first_dealer": None,
        "end_by_ms": 0,
        "fee_per_hand": 0,
    },
    K.ActionTaken: {"request_id": ""},
    K.HandStarted: {
        "huangfan_dice": None,
        "garden_stacks": None,
        "doubled_seats": (),
        "fees": (),
    },
    K.TilesDealt: {"counts": ()},
    K.FlowersExposed: {"replacement_count": None},
    K.HandResult: {"escaped_seat": None, "garden_stacks": None, "escape_reason": "", "fees": ()},
    K.TableFinished: {"garden_stacks": None},
    K.SeatChanged: {
        "auto_play": False,
        "left": False,
        "deadline_ms": 0,
        "private": False,
        "deadline_private": False,
    },
    K.TilesSwapped: {"count": None},
    K.TileDiscarded: {"hold_ms": 0},
    K.MeldDeclared: {"hold_ms": 0},
}
_ABSENT = object()  # "no default": the field is always written


@dataclass(frozen=True)
class _Layout:
    """How one class's fields are written: (name, codec, default or _ABSENT) in field order."""

    fields: tuple[tuple[str, FieldCodec, Any], ...]


def _layouts() -> dict[type[K.TableEvent], _Layout]:
    out = {}
    for cls in K.EVENT_CLASSES:
        codecs = FIELD_CODECS[cls]
        defaults = {**HEAD_DEFAULTS, **OPTIONAL_FIELDS.get(cls, {})}
        specs = [
            (name, codecs.get(name, PLAIN), defaults.get(name, _ABSENT))
            for name in K.field_names(cls)
            if name != "options"  # Prompt's options: written by the prompt's kind
        ]
        out[cls] = _Layout(tuple(specs))
    return out


_LAYOUTS = _layouts()
assert set(FIELD_CODECS) == set(K.EVENT_CLASSES), "every event kind needs its field codecs"


# --- records ---------------------------------------------------------------------------------
def to_json(event: K.TableEvent) -> dict[str, Any]:
    """The event's ``data`` as its record holds it."""
    d: dict[str, Any] = {}
    for name, codec, default in _LAYOUTS[type(event)].fields:
        value = getattr(event, name)
        if default is not _ABSENT and value == default:
            continue
        d[name] = None if value is None and codec not in _NONE_AWARE else codec.encode(value)
    if isinstance(event, K.Prompt):
        d["options"] = options_to_json(event.options, event.kind)
    return d


def from_json(kind: str, data: dict[str, Any], version: int = SCHEMA_VERSION) -> K.TableEvent:
    """The event of a record's ``kind`` and ``data`` (of schema ``version``)."""
    if version not in READABLE_VERSIONS:
        raise RecordError(
            f"log record of schema version {version}: this release reads versions "
            f"{sorted(READABLE_VERSIONS)}"
        )
    cls = K.KINDS.get(kind)
    if cls is None:
        raise RecordError(f"unknown event kind {kind!r} in the table log")
    args: dict[str, Any] = {}
    try:
        for name, codec, _default in _LAYOUTS[cls].fields:
            if name in data:
                raw = data[name]
                args[name] = codec.decode(raw) if raw is not None else None
        if cls is K.Prompt:
            args["options"] = options_from_json(data.get("options", {}))
        return cls(**args)
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"malformed {kind} record: {exc}") from exc


def encode(t_ms: int, event: K.TableEvent) -> bytes:
    """One log record (compact JSON, UTF-8)."""
    record = {"v": SCHEMA_VERSION, "t": t_ms, "kind": event.KIND, "data": to_json(event)}
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def decode(raw: bytes) -> tuple[int, K.TableEvent]:
    """(time ms, event) of one log record, of any version this project has written."""
    try:
        record = json.loads(raw)
        return int(record["t"]), from_json(record["kind"], record["data"], record.get("v", 1))
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
        if isinstance(exc, RecordError):
            raise
        raise RecordError(f"malformed table log record: {exc}") from exc
