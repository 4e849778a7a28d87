"""A viewer's copy of a table event (:mod:`services.gateway.domain.events`) as the proto
``mahjong.gateway.v1.Event``: one converter per event class, in :data:`CONVERTERS` (a class
without one fails the import). A hidden tile (None in a viewer's copy) is TILE_UNSPECIFIED."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from infra.convert.common import (
    hand_type_to_proto,
    seat_to_proto,
    tile_to_proto,
    tiles_to_proto,
    win_kind_to_proto,
)
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from shared.hand.hand_type import HandType

PROMPT_KINDS = {
    K.OWN_TURN: pb.PROMPT_KIND_OWN_TURN,
    K.CLAIM: pb.PROMPT_KIND_CLAIM,
    K.ROB_KONG: pb.PROMPT_KIND_ROB_KONG,
    K.SWAP: pb.PROMPT_KIND_TILE_SWAP,
}
OUTCOMES = {
    "win": pb.HAND_OUTCOME_WIN,
    "draw": pb.HAND_OUTCOME_DRAW,
    "escape": pb.HAND_OUTCOME_ESCAPE,
}
ESCAPE_REASONS = {
    "": pb.ESCAPE_REASON_UNSPECIFIED,
    "left": pb.ESCAPE_REASON_LEFT,
    "disconnected": pb.ESCAPE_REASON_DISCONNECTED,
}


def seat(s: int | None) -> int:
    return seat_to_proto(s) if s is not None else common_pb2.SEAT_UNSPECIFIED


def tile(k: int | None) -> int:
    return tile_to_proto(k) if k is not None else common_pb2.TILE_UNSPECIFIED


def tiles(ks: Iterable[int]) -> list[int]:
    return tiles_to_proto(ks)


def meld_to_proto(m: K.MeldFact) -> common_pb2.Meld:
    out = common_pb2.Meld(kind=int(m.kind), tiles=tiles(m.tiles))
    if m.from_seat is not None:
        out.from_seat = seat_to_proto(m.from_seat)
    if m.claimed is not None:
        out.claimed_tile = tile_to_proto(m.claimed)
    return out


def options_to_proto(o: K.PromptOptions) -> pb.Options:
    out = pb.Options(
        win=o.win,
        win_eight_flowers=o.win_eight_flowers,
        win_shape=o.win_shape,
        swap_count=o.swap_count,
        pong=o.pong,
        exposed_kong=o.exposed_kong,
    )
    out.discards.extend(tiles(o.discards))
    out.ready_discards.extend(tiles(o.ready_discards))
    out.concealed_kongs.extend(tiles(o.concealed_kongs))
    out.added_kongs.extend(tiles(o.added_kongs))
    for low in o.chows:
        out.chows.add(tiles=tiles((low, low + 1, low + 2)))
    setattr(out, "pass", o.pass_)
    return out


def prompt_to_proto(p: K.Prompt) -> pb.Prompt:
    return pb.Prompt(
        seat=seat(p.seat),
        kind=PROMPT_KINDS[p.kind],
        options=options_to_proto(p.options),
        deadline_unix_ms=p.deadline_ms,
        tile=tile(p.tile),
        from_seat=seat(p.from_seat),
    )


def revealed_to_proto(r: K.RevealedHand) -> pb.RevealedHand:
    return pb.RevealedHand(
        seat=seat(r.seat),
        concealed=tiles(r.concealed),
        melds=[meld_to_proto(m) for m in r.melds],
        flowers=tiles(r.flowers),
    )


def _table_started(ev: K.TableStarted, e: pb.Event) -> None:
    e.table_started.CopyFrom(
        pb.TableStarted(
            ruleset=common_pb2.RulesetRef(name=ev.ruleset, options=ev.overrides),
            stake=ev.stake,
            seats=[
                pb.SeatAssignment(player_id=s.player_id, display_name=s.display_name, bot=s.bot)
                for s in ev.seats
            ],
            max_hands=ev.max_hands,
            tag=ev.tag,
            max_rounds=ev.max_rounds,
            seat_deadline_unix_ms=ev.seat_deadline_ms,
            end_by_unix_ms=ev.end_by_ms,
        )
    )


def _hand_started(ev: K.HandStarted, e: pb.Event) -> None:
    e.hand_started.CopyFrom(
        pb.HandStarted(
            hand_id=ev.hand_id,
            hand_number=ev.hand_number,
            dealer=seat(ev.dealer),
            dice=common_pb2.Dice(first=ev.dice[0], second=ev.dice[1]),
            commitment=ev.commitment,
            kaibao=ev.kaibao,
            huangfan=ev.huangfan,
            garden_stacks=ev.garden_stacks or (),
            huangfan_dice=ev.huangfan_dice or 0,
        )
    )


def _tiles_dealt(ev: K.TilesDealt, e: pb.Event) -> None:
    counts = ev.counts or tuple(map(len, ev.hands))
    e.tiles_dealt.tiles_left = ev.tiles_left
    for s, h in enumerate(ev.hands):
        e.tiles_dealt.hands.add(seat=seat(s), tiles=tiles(h), count=counts[s])


def _flowers_exposed(ev: K.FlowersExposed, e: pb.Event) -> None:
    count = ev.replacement_count
    e.flowers_exposed.CopyFrom(
        pb.FlowersExposed(
            seat=seat(ev.seat),
            flowers=tiles(ev.flowers),
            replacements=tiles(ev.replacements),
            replacement_count=len(ev.replacements) if count is None else count,
            tiles_left=ev.tiles_left,
        )
    )


def _tile_drawn(ev: K.TileDrawn, e: pb.Event) -> None:
    e.tile_drawn.CopyFrom(
        pb.TileDrawn(
            seat=seat(ev.seat),
            tile=tile(ev.tile),
            replacement=ev.replacement,
            tiles_left=ev.tiles_left,
        )
    )


def _tile_discarded(ev: K.TileDiscarded, e: pb.Event) -> None:
    e.tile_discarded.CopyFrom(
        pb.TileDiscarded(
            seat=seat(ev.seat),
            tile=tile(ev.tile),
            declared_ready=ev.declared_ready,
            auto=ev.auto,
            drawn_tile=ev.drawn_tile,
        )
    )


def _meld_declared(ev: K.MeldDeclared, e: pb.Event) -> None:
    e.meld_declared.CopyFrom(pb.MeldDeclared(seat=seat(ev.seat), meld=meld_to_proto(ev.meld)))


def _ready_declared(ev: K.ReadyDeclared, e: pb.Event) -> None:
    e.ready_declared.seat = seat(ev.seat)


def _prompt(ev: K.Prompt, e: pb.Event) -> None:
    e.prompt.CopyFrom(prompt_to_proto(ev))


def _win_declared(ev: K.WinDeclared, e: pb.Event) -> None:
    e.win_declared.CopyFrom(
        pb.WinDeclared(
            seat=seat(ev.seat),
            win_kind=win_kind_to_proto(ev.win_kind),
            tile=tile(ev.tile),
            from_seat=seat(ev.from_seat),
        )
    )


def _hand_result(ev: K.HandResult, e: pb.Event) -> None:
    r = pb.HandResult(
        outcome=OUTCOMES[ev.outcome],
        payments=ev.payments,
        house=ev.house,
        next_dealer=seat(ev.next_dealer),
        next_huangfan=ev.next_huangfan,
        escaped_seat=seat(ev.escaped_seat),
        garden_stacks=ev.garden_stacks or (),
        escape_reason=ESCAPE_REASONS[ev.escape_reason],
        fees=ev.fees,
    )
    for w in ev.winners:
        r.winners.add(
            seat=seat(w.seat),
            hand_type=hand_type_to_proto(HandType.from_label(w.hand)),
            win_kind=win_kind_to_proto(w.win_kind or None),
            win_tile=tile(w.win_tile),
            from_seat=seat(ev.from_seat),
            flowers=w.flowers,
            value=w.value,
        )
    for b in ev.breakdown:
        r.breakdown.add(
            seat=seat(b.seat),
            code=b.code,
            label=b.label,
            amount=b.amount,
            other_seat=seat(b.other_seat),
        )
    r.revealed.extend(revealed_to_proto(h) for h in ev.revealed)
    e.hand_result.CopyFrom(r)


def _seed_revealed(ev: K.SeedRevealed, e: pb.Event) -> None:
    e.seed_revealed.CopyFrom(pb.SeedRevealed(seed=ev.seed, commitment=ev.commitment))


def _hand_drawn(ev: K.HandDrawn, e: pb.Event) -> None:
    e.hand_drawn.tiles_left = ev.tiles_left


def _table_finished(ev: K.TableFinished, e: pb.Event) -> None:
    e.table_finished.CopyFrom(
        pb.TableFinished(
            hands_played=ev.hands_played,
            chips=ev.chips,
            reason=ev.reason,
            rounds_played=ev.rounds_played,
            garden_stacks=ev.garden_stacks or (),
        )
    )


def _seat_changed(ev: K.SeatChanged, e: pb.Event) -> None:
    e.seat_changed.CopyFrom(
        pb.SeatChanged(
            seat=seat(ev.seat),
            player_id=ev.player_id,
            bot=ev.bot,
            auto_play=ev.auto_play,
            left=ev.left,
            reason=ev.reason,
            deadline_unix_ms=ev.deadline_ms,
        )
    )


def _tiles_swapped(ev: K.TilesSwapped, e: pb.Event) -> None:
    e.tiles_swapped.CopyFrom(
        pb.TilesSwapped(
            seat=seat(ev.seat),
            buried=tiles(ev.buried),
            taken=tiles(ev.taken),
            count=len(ev.buried) if ev.count is None else ev.count,
        )
    )


def _timed_out(ev: K.TimedOut, e: pb.Event) -> None:
    e.timed_out.CopyFrom(
        pb.TimedOut(seat=seat(ev.seat), kind=PROMPT_KINDS[ev.kind], in_a_row=ev.in_a_row)
    )


def _table_halted(ev: K.TableHalted, e: pb.Event) -> None:
    e.table_halted.CopyFrom(pb.TableHalted(reason=ev.reason, message=ev.message))


def _wild_flipped(ev: K.WildFlipped, e: pb.Event) -> None:
    e.wild_flipped.CopyFrom(
        pb.WildFlipped(
            indicator=tile(ev.indicator),
            wild=tile(ev.wild),
            set_aside=tiles(ev.set_aside),
            tiles_left=ev.tiles_left,
        )
    )


def _double_card_played(ev: K.DoubleCardPlayed, e: pb.Event) -> None:
    e.double_card_played.CopyFrom(
        pb.DoubleCardPlayed(seat=seat_to_proto(ev.seat), hand_number=ev.doubled_hand)
    )


def _seat_bankrupt(ev: K.SeatBankrupt, e: pb.Event) -> None:
    e.seat_bankrupt.CopyFrom(
        pb.SeatBankrupt(
            seat=seat_to_proto(ev.seat),
            player_id=ev.player_id,
            bot_player_id=ev.bot_id,
            after_hand=ev.after_hand,
        )
    )


def _next_hand_ready(ev: K.NextHandReady, e: pb.Event) -> None:
    e.next_hand_ready.CopyFrom(
        pb.NextHandReady(seat=seat_to_proto(ev.seat), after_hand=ev.after_hand)
    )


# One converter per event class: it fills the proto Event's field of that kind.
CONVERTERS: dict[type[K.TableEvent], Callable] = {
    K.TableStarted: _table_started,
    K.HandStarted: _hand_started,
    K.TilesDealt: _tiles_dealt,
    K.FlowersExposed: _flowers_exposed,
    K.TileDrawn: _tile_drawn,
    K.TileDiscarded: _tile_discarded,
    K.MeldDeclared: _meld_declared,
    K.ReadyDeclared: _ready_declared,
    K.Prompt: _prompt,
    K.WinDeclared: _win_declared,
    K.HandResult: _hand_result,
    K.SeedRevealed: _seed_revealed,
    K.HandDrawn: _hand_drawn,
    K.TableFinished: _table_finished,
    K.SeatChanged: _seat_changed,
    K.TilesSwapped: _tiles_swapped,
    K.TimedOut: _timed_out,
    K.TableHalted: _table_halted,
    K.WildFlipped: _wild_flipped,
    K.DoubleCardPlayed: _double_card_played,
    K.SeatBankrupt: _seat_bankrupt,
    K.NextHandReady: _next_hand_ready,
}
# The log's record of actions and a claim window's fillers are seen by no viewer
# (events.views): they have no proto form.
_NEVER_SHOWN = {K.ActionTaken, K.WindowPadding}
_missing = set(K.EVENT_CLASSES) - set(CONVERTERS) - _NEVER_SHOWN
if _missing:  # pragma: no cover - a kind added without its converter
    raise ImportError(
        f"event kinds without a proto converter: {sorted(K.KIND_NAMES[c] for c in _missing)}"
    )


def event_to_proto(logged: LoggedEvent, seen: K.TableEvent) -> pb.Event:
    """A viewer's copy ``seen`` of the logged event ``logged`` as the proto Event."""
    e = pb.Event(
        sequence=logged.seq,
        time_unix_ms=logged.t,
        hand_id=getattr(seen, "hand_id", ""),
        hand_number=getattr(seen, "hand_number", 0),
    )
    CONVERTERS[type(seen)](seen, e)
    return e
