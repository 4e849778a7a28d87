"""Conversion of ``mahjong.gateway.v1`` messages to and from the gateway's domain values.

Events are stored as JSON (mpsz tiles, seats 0-3); :func:`event_to_proto` turns one viewer's
projection of an event into the proto ``Event``. :func:`action_from_proto` validates an
``Action`` and returns the :mod:`shared.table` action (InvalidArgument naming the field).
Used by the gateway's servicer and by every Python client of the gateway.
"""

from __future__ import annotations

from typing import Any

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from shared import tiles as T
from shared.convert.common import (
    hand_type_to_proto,
    seat_to_proto,
    tile_from_proto,
    tile_to_proto,
    tiles_to_proto,
    win_kind_to_proto,
)
from shared.errors import InvalidArgument
from shared.hand.hand_type import HandType
from shared.melds import Meld, MeldKind
from shared.table import (
    Action,
    AddedKong,
    Chow,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    Pass,
    Pong,
    Win,
)

PROMPT_KINDS = {
    "own_turn": pb.PROMPT_KIND_OWN_TURN,
    "claim": pb.PROMPT_KIND_CLAIM,
    "rob_kong": pb.PROMPT_KIND_ROB_KONG,
    "tile_swap": pb.PROMPT_KIND_TILE_SWAP,
}
OUTCOMES = {
    "win": pb.HAND_OUTCOME_WIN,
    "draw": pb.HAND_OUTCOME_DRAW,
    "escape": pb.HAND_OUTCOME_ESCAPE,
}
PHASES = {
    "waiting": pb.TABLE_PHASE_WAITING,
    "playing": pb.TABLE_PHASE_PLAYING,
    "between_hands": pb.TABLE_PHASE_BETWEEN_HANDS,
    "finished": pb.TABLE_PHASE_FINISHED,
}


class ResumeRequested(Exception):
    """An Action carrying ``resume`` (end 托管): not a hand action; the caller applies it."""

    def __init__(self) -> None:
        super().__init__("resume")


class TileSwapRequested(Exception):
    """An Action carrying a tile swap (换牌); the caller decides whether it is offered."""

    def __init__(self, tiles: list[int]) -> None:
        super().__init__("tile swap")
        self.tiles = tiles


# --- actions ---------------------------------------------------------------------------------
def action_from_proto(action: pb.Action) -> Action:
    """Validate an ``Action`` (InvalidArgument naming the field) and return the domain action.
    A tile swap raises :class:`TileSwapRequested` with its tiles, a resume
    :class:`ResumeRequested`."""
    which = action.WhichOneof("kind")
    if which is None:
        raise InvalidArgument(
            "action is empty: set one of discard, declare_ready, chow, ...", field="action"
        )
    if which == "discard":
        return Discard(_hand_tile(action.discard.tile, "action.discard.tile"))
    if which == "declare_ready":
        return DeclareReady(
            _hand_tile(action.declare_ready.discard, "action.declare_ready.discard")
        )
    if which == "chow":
        tiles = sorted(
            _hand_tile(v, f"action.chow.tiles[{i}]") for i, v in enumerate(action.chow.tiles)
        )
        try:
            Meld.of(MeldKind.CHOW, tiles)
        except ValueError as exc:
            raise InvalidArgument(str(exc), field="action.chow.tiles") from None
        return Chow(tiles[0])
    if which == "pong":
        return Pong()
    if which == "kong":
        kind = action.kong.kind
        if kind == common_pb2.MELD_KIND_EXPOSED_KONG:
            return ExposedKong()
        if kind in (common_pb2.MELD_KIND_ADDED_KONG, common_pb2.MELD_KIND_CONCEALED_KONG):
            tile = _hand_tile(action.kong.tile, "action.kong.tile")
            return (
                AddedKong(tile) if kind == common_pb2.MELD_KIND_ADDED_KONG else ConcealedKong(tile)
            )
        raise InvalidArgument(
            "action.kong.kind must be EXPOSED_KONG, ADDED_KONG or CONCEALED_KONG",
            field="action.kong.kind",
        )
    if which == "win":
        return Win(eight_flowers=action.win.eight_flowers)
    if which == "pass":
        return Pass()
    if which == "resume":
        raise ResumeRequested()
    tiles = [
        _hand_tile(v, f"action.tile_swap.tiles[{i}]") for i, v in enumerate(action.tile_swap.tiles)
    ]
    raise TileSwapRequested(tiles)


def _hand_tile(value: int, field: str) -> int:
    k = tile_from_proto(value, field)
    if T.is_bonus(k):
        raise InvalidArgument(
            f"{field} is a bonus tile ({T.format_tile(k)}): bonus tiles are exposed, never played",
            field=field,
        )
    return k


def action_to_proto(action: Action) -> pb.Action:
    """The proto ``Action`` of a domain action (for Python clients and bots)."""
    if isinstance(action, Discard):
        return pb.Action(discard=pb.Discard(tile=tile_to_proto(action.tile)))
    if isinstance(action, DeclareReady):
        return pb.Action(declare_ready=pb.DeclareReady(discard=tile_to_proto(action.discard)))
    if isinstance(action, Chow):
        return pb.Action(chow=pb.Chow(tiles=tiles_to_proto(action.tiles)))
    if isinstance(action, Pong):
        return pb.Action(pong=pb.Pong())
    if isinstance(action, ExposedKong):
        return pb.Action(kong=pb.Kong(kind=common_pb2.MELD_KIND_EXPOSED_KONG))
    if isinstance(action, AddedKong):
        return pb.Action(
            kong=pb.Kong(kind=common_pb2.MELD_KIND_ADDED_KONG, tile=tile_to_proto(action.tile))
        )
    if isinstance(action, ConcealedKong):
        return pb.Action(
            kong=pb.Kong(kind=common_pb2.MELD_KIND_CONCEALED_KONG, tile=tile_to_proto(action.tile))
        )
    if isinstance(action, Win):
        return pb.Action(win=pb.Win(eight_flowers=action.eight_flowers))
    return pb.Action(**{"pass": pb.Pass()})


# --- events ----------------------------------------------------------------------------------
def _tiles(text: str) -> list[int]:
    return tiles_to_proto(T.parse(text)) if text else []


def _tile(text: str | None) -> int:
    return tile_to_proto(T.parse(text)[0]) if text else common_pb2.TILE_UNSPECIFIED


def _seat(seat: int | None) -> int:
    return seat_to_proto(seat) if seat is not None else common_pb2.SEAT_UNSPECIFIED


def meld_json_to_proto(d: dict[str, Any]) -> common_pb2.Meld:
    kind = MeldKind.from_label(d["kind"])
    m = common_pb2.Meld(kind=int(kind), tiles=_tiles(d.get("tiles", "")))
    if d.get("from") is not None:
        m.from_seat = seat_to_proto(d["from"])
    if d.get("claimed"):
        m.claimed_tile = _tile(d["claimed"])
    return m


def options_to_proto(d: dict[str, Any]) -> pb.Options:
    win = bool(d.get("win"))
    o = pb.Options(
        win=win,
        win_eight_flowers=bool(d.get("win_eight_flowers")),
        # a prompt's JSON names the winning hand apart only when 八花齐 is offered too
        win_shape=bool(d.get("win_shape", win and not d.get("win_eight_flowers"))),
    )
    o.discards.extend(_tile(t) for t in d.get("discards", []))
    o.ready_discards.extend(_tile(t) for t in d.get("ready_discards", []))
    o.concealed_kongs.extend(_tile(t) for t in d.get("concealed_kongs", []))
    o.added_kongs.extend(_tile(t) for t in d.get("added_kongs", []))
    for low in d.get("chows", []):
        k = T.parse(low)[0]
        o.chows.add(tiles=tiles_to_proto((k, k + 1, k + 2)))
    o.swap_count = int(d.get("swap_count", 0))
    o.pong = bool(d.get("pong"))
    o.exposed_kong = bool(d.get("exposed_kong"))
    setattr(o, "pass", bool(d.get("pass")))
    return o


def _prompt(d: dict[str, Any]) -> pb.Prompt:
    return pb.Prompt(
        seat=_seat(d["seat"]),
        kind=PROMPT_KINDS[d["kind"]],
        options=options_to_proto(d["options"]),
        deadline_unix_ms=int(d["deadline_ms"]),
        tile=_tile(d.get("tile")),
        from_seat=_seat(d.get("from_seat")),
    )


def _revealed(d: dict[str, Any]) -> pb.RevealedHand:
    return pb.RevealedHand(
        seat=_seat(d["seat"]),
        concealed=_tiles(d["concealed"]),
        melds=[meld_json_to_proto(m) for m in d["melds"]],
        flowers=_tiles(d["flowers"]),
    )


def _hand_result(d: dict[str, Any]) -> pb.HandResult:
    r = pb.HandResult(
        outcome=OUTCOMES[d["outcome"]],
        payments=d["payments"],
        house=d["house"],
        next_dealer=_seat(d.get("next_dealer")),
        next_huangfan=d.get("next_huangfan", 0),
        escaped_seat=_seat(d.get("escaped_seat")),
        garden_stacks=d.get("garden_stacks", []),
    )
    for w in d["winners"]:
        r.winners.add(
            seat=_seat(w["seat"]),
            hand_type=hand_type_to_proto(HandType.from_label(w["hand"])),
            win_kind=win_kind_to_proto(w.get("win_kind") or None),
            win_tile=_tile(w.get("win_tile")),
            from_seat=_seat(d.get("from_seat")),
            flowers=w["flowers"],
            value=w["value"],
        )
    for b in d["breakdown"]:
        r.breakdown.add(
            seat=_seat(b.get("seat")), code=b["code"], label=b["label"], amount=b["amount"]
        )
    r.revealed.extend(_revealed(h) for h in d["revealed"])
    return r


def event_to_proto(seq: int, t: int, kind: str, d: dict[str, Any]) -> pb.Event:
    """One viewer's projection of a stored event (see services.gateway.domain.events)."""
    e = pb.Event(
        sequence=seq,
        time_unix_ms=t,
        hand_id=d.get("hand_id", ""),
        hand_number=d.get("hand_number", 0),
    )
    if kind == "table_started":
        e.table_started.CopyFrom(
            pb.TableStarted(
                ruleset=common_pb2.RulesetRef(name=d["ruleset"], options=d["overrides"]),
                stake=d["stake"],
                seats=[pb.SeatAssignment(**s) for s in d["seats"]],
                max_hands=d["max_hands"],
                tag=d["tag"],
                max_rounds=d.get("max_rounds", 0),
                seat_deadline_unix_ms=d.get("seat_deadline_ms", 0),
            )
        )
    elif kind == "hand_started":
        e.hand_started.CopyFrom(
            pb.HandStarted(
                hand_id=d["hand_id"],
                hand_number=d["hand_number"],
                dealer=_seat(d["dealer"]),
                dice=common_pb2.Dice(first=d["dice"][0], second=d["dice"][1]),
                commitment=d["commitment"],
                kaibao=d["kaibao"],
                huangfan=d["huangfan"],
                garden_stacks=d.get("garden_stacks", []),
                huangfan_dice=d.get("huangfan_dice", 0),
            )
        )
    elif kind == "tiles_dealt":
        counts = d.get("counts") or [len(T.parse(h)) for h in d["hands"]]
        e.tiles_dealt.tiles_left = d["tiles_left"]
        for seat, h in enumerate(d["hands"]):
            e.tiles_dealt.hands.add(seat=_seat(seat), tiles=_tiles(h), count=counts[seat])
    elif kind == "flowers_exposed":
        reps = d.get("replacements", "")
        e.flowers_exposed.CopyFrom(
            pb.FlowersExposed(
                seat=_seat(d["seat"]),
                flowers=_tiles(d["flowers"]),
                replacements=_tiles(reps),
                replacement_count=d.get("replacement_count", len(T.parse(reps))),
                tiles_left=d["tiles_left"],
            )
        )
    elif kind == "tile_drawn":
        e.tile_drawn.CopyFrom(
            pb.TileDrawn(
                seat=_seat(d["seat"]),
                tile=_tile(d.get("tile")),
                replacement=d["replacement"],
                tiles_left=d["tiles_left"],
            )
        )
    elif kind == "tile_discarded":
        e.tile_discarded.CopyFrom(
            pb.TileDiscarded(
                seat=_seat(d["seat"]),
                tile=_tile(d["tile"]),
                declared_ready=d["declared_ready"],
                auto=d["auto"],
                drawn_tile=d["drawn_tile"],
            )
        )
    elif kind == "meld_declared":
        e.meld_declared.CopyFrom(
            pb.MeldDeclared(seat=_seat(d["seat"]), meld=meld_json_to_proto(d["meld"]))
        )
    elif kind == "ready_declared":
        e.ready_declared.seat = _seat(d["seat"])
    elif kind == "prompt":
        e.prompt.CopyFrom(_prompt(d))
    elif kind == "win_declared":
        e.win_declared.CopyFrom(
            pb.WinDeclared(
                seat=_seat(d["seat"]),
                win_kind=win_kind_to_proto(d["win_kind"]),
                tile=_tile(d.get("tile")),
                from_seat=_seat(d.get("from_seat")),
            )
        )
    elif kind == "hand_result":
        e.hand_result.CopyFrom(_hand_result(d))
    elif kind == "seed_revealed":
        e.seed_revealed.CopyFrom(pb.SeedRevealed(seed=d["seed"], commitment=d["commitment"]))
    elif kind == "hand_drawn":
        e.hand_drawn.tiles_left = d["tiles_left"]
    elif kind == "table_finished":
        e.table_finished.CopyFrom(
            pb.TableFinished(
                hands_played=d["hands_played"],
                chips=d["chips"],
                reason=d["reason"],
                rounds_played=d.get("rounds_played", 0),
                garden_stacks=d.get("garden_stacks", []),
            )
        )
    elif kind == "seat_changed":
        e.seat_changed.CopyFrom(
            pb.SeatChanged(
                seat=_seat(d["seat"]),
                player_id=d.get("player_id", ""),
                bot=bool(d.get("bot")),
                auto_play=bool(d.get("auto_play")),
                left=bool(d.get("left")),
                reason=d.get("reason", ""),
                deadline_unix_ms=int(d.get("deadline_ms", 0)),
            )
        )
    elif kind == "tiles_swapped":
        buried = d.get("buried", "")
        e.tiles_swapped.CopyFrom(
            pb.TilesSwapped(
                seat=_seat(d["seat"]),
                buried=_tiles(buried),
                taken=_tiles(d.get("taken", "")),
                count=d.get("count", len(T.parse(buried))),
            )
        )
    elif kind == "wild_flipped":
        e.wild_flipped.CopyFrom(
            pb.WildFlipped(
                indicator=_tile(d["indicator"]),
                wild=_tile(d["wild"]),
                set_aside=_tiles(d["set_aside"]),
                tiles_left=d["tiles_left"],
            )
        )
    elif kind == "timed_out":
        e.timed_out.CopyFrom(
            pb.TimedOut(seat=_seat(d["seat"]), kind=PROMPT_KINDS[d["kind"]], in_a_row=d["in_a_row"])
        )
    return e


# --- views -----------------------------------------------------------------------------------
def view_to_proto(v: dict[str, Any]) -> pb.TableView:
    """A seat's (or spectator's) view (TableSession.seat_view plus the table's config)."""
    cfg = v["config"]
    tv = pb.TableView(
        table_id=v["table_id"],
        ruleset=common_pb2.RulesetRef(name=cfg.ruleset_name, options=cfg.overrides),
        stake=cfg.stake,
        tag=cfg.tag,
        max_hands=cfg.max_hands,
        hands_played=v["hands_played"],
        phase=PHASES[v["phase"]],
        last_sequence=v["last_sequence"],
        viewer=_seat(v["viewer"]),
        huangfan=v["huangfan"],
        max_rounds=v["max_rounds"],
        rounds_played=v["rounds_played"],
        garden=v["garden"],
        seat_deadline_unix_ms=v.get("seat_deadline_ms", 0),
    )
    for s in v["seats"]:
        sv = tv.seats.add(
            seat=_seat(s["seat"]),
            player_id=s["player_id"],
            display_name=s["display_name"],
            bot=s["bot"],
            auto_play=s["auto_play"],
            left=s["left"],
            chips=s["chips"],
            concealed_count=s.get("concealed_count", 0),
            ready=s.get("ready", False),
            garden_stack=s.get("garden_stack", 0),
        )
        sv.concealed.extend(tiles_to_proto(s.get("concealed", [])))
        sv.melds.extend(meld_json_to_proto(m) for m in s.get("melds", []))
        sv.flowers.extend(tiles_to_proto(s.get("flowers", [])))
        sv.discards.extend(tiles_to_proto(s.get("discards", [])))
        if s.get("drawn") is not None:
            sv.drawn = tile_to_proto(s["drawn"])
    h = v.get("hand")
    if h:
        tv.hand.CopyFrom(
            pb.HandView(
                hand_id=h["hand_id"],
                hand_number=h["hand_number"],
                dealer=_seat(h["dealer"]),
                dice=common_pb2.Dice(first=h["dice"][0], second=h["dice"][1]),
                commitment=h["commitment"],
                kaibao=h["kaibao"],
                huangfan=h["huangfan"],
                tiles_left=h["tiles_left"],
                to_act=_seat(h["to_act"]),
                deadline_unix_ms=h["deadline_ms"],
                last_discard=tile_to_proto(h["last_discard"])
                if h["last_discard"] is not None
                else 0,
                last_discard_seat=_seat(h["last_discard_seat"]),
                finished=h["finished"],
            )
        )
    p = v.get("prompt")
    if p is not None:
        tv.prompt.CopyFrom(_prompt(p))
    return tv
