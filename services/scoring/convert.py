"""Conversion of ``mahjong.scoring.v1`` messages to and from the scoring domain
(:mod:`services.scoring.domain`).

Requests → domain (``*_from_proto``) validate the protobuf-level shape (set enums, tiles and
seats in range, meld shapes) and raise :class:`~shared.errors.InvalidArgument` naming the
field; the rules checks (is it a win, do the tiles add up, …) are the domain's. Domain → proto
(``*_to_proto``) serve the servicer for responses and callers (the gateway, benchmarks) for
requests.
"""

from __future__ import annotations

from mahjong.scoring.v1 import scoring_pb2

from infra.convert import common as C
from services.scoring.domain import (
    Claim,
    FeederHand,
    HandContext,
    Item,
    ReplacementAfter,
    Settlement,
    WinInput,
    WinKind,
    WinnerHand,
    WinnerResult,
)
from services.scoring.domain.old.rules import FAN_OPTIONS
from shared.errors import InvalidArgument
from shared.ruleset import Ruleset


# --- requests: proto → domain -----------------------------------------------------------------
def context_from_proto(pb: scoring_pb2.HandContext, field: str = "context") -> HandContext:
    ruleset = C.ruleset_from_ref(pb.ruleset if pb.HasField("ruleset") else None, f"{field}.ruleset")
    dice = C.dice_from_proto(pb.dice, f"{field}.dice") if pb.HasField("dice") else None
    return HandContext(
        ruleset=ruleset,
        stake=pb.stake,
        dealer=C.seat_from_proto(pb.dealer, f"{field}.dealer"),
        dice=dice,
        huangfan=pb.huangfan,
        garden_stacks=tuple(pb.garden_stacks) if len(pb.garden_stacks) else None,
        doubled_seats=doubled_seats_from_proto(pb.doubled_seats, f"{field}.doubled_seats"),
    )


def doubled_seats_from_proto(seats, field: str) -> frozenset[int]:
    """The seats that played a 加倍卡, each set and named once."""
    out = [C.seat_from_proto(s, f"{field}[{i}]") for i, s in enumerate(seats)]
    if len(set(out)) != len(out):
        raise InvalidArgument(f"{field} names a seat twice: {sorted(out)}", field=field)
    return frozenset(out)


def winner_from_proto(pb: scoring_pb2.WinnerHand, field: str) -> WinnerHand:
    return WinnerHand(
        seat=C.seat_from_proto(pb.seat, f"{field}.seat"),
        concealed=tuple(C.tiles_from_proto(pb.concealed, f"{field}.concealed")),
        melds=tuple(C.melds_from_proto(pb.melds, f"{field}.melds")),
        flowers=tuple(C.tiles_from_proto(pb.flowers, f"{field}.flowers")),
        win_tile=C.tile_from_proto(pb.win_tile, f"{field}.win_tile"),
    )


_REPLACEMENT_AFTER = {
    scoring_pb2.REPLACEMENT_AFTER_UNSPECIFIED: ReplacementAfter.KONG,
    scoring_pb2.REPLACEMENT_AFTER_KONG: ReplacementAfter.KONG,
    scoring_pb2.REPLACEMENT_AFTER_FLOWER: ReplacementAfter.FLOWER,
}
_REPLACEMENT_AFTER_PB = {
    ReplacementAfter.KONG: scoring_pb2.REPLACEMENT_AFTER_KONG,
    ReplacementAfter.FLOWER: scoring_pb2.REPLACEMENT_AFTER_FLOWER,
}
# OldFan values are the [old_fan] options in table order, from 1
_OLD_FAN_PB = {name: i + 1 for i, name in enumerate(FAN_OPTIONS)}


def replacement_after_from_proto(value: int) -> ReplacementAfter:
    try:
        return _REPLACEMENT_AFTER[value]
    except KeyError:
        raise InvalidArgument(
            f"replacement_after has no value {value}; 0-2", field="replacement_after"
        ) from None


def feeder_hand_from_proto(req: scoring_pb2.SettleWinRequest) -> FeederHand | None:
    if not req.HasField("from_hand"):
        return None
    pb = req.from_hand
    return FeederHand(
        concealed=tuple(C.tiles_from_proto(pb.concealed, "from_hand.concealed")),
        melds=tuple(C.melds_from_proto(pb.melds, "from_hand.melds")),
    )


def win_input_from_proto(req: scoring_pb2.SettleWinRequest) -> WinInput:
    claims = tuple(
        Claim(
            C.seat_from_proto(c.claimer, f"claims[{i}].claimer"),
            C.seat_from_proto(c.claimed_from, f"claims[{i}].claimed_from"),
            c.claimed_from_ready,
        )
        for i, c in enumerate(req.claims)
    )
    return WinInput(
        context=context_from_proto(req.context),
        winners=tuple(winner_from_proto(w, f"winners[{i}]") for i, w in enumerate(req.winners)),
        win=WinKind(C.win_kind_from_proto(req.win_kind, "win_kind")),
        from_seat=C.seat_from_proto_optional(req.from_seat, "from_seat"),
        replacement=req.replacement,
        ready=frozenset(
            C.seat_from_proto(s, f"ready_seats[{i}]") for i, s in enumerate(req.ready_seats)
        ),
        claims=claims or None,
        first_go_around=req.first_go_around,
        last_tile=req.last_tile,
        replacement_after=replacement_after_from_proto(req.replacement_after),
        feeder_hand=feeder_hand_from_proto(req),
        wild_indicator=C.tile_from_proto_optional(req.wild_indicator, "wild_indicator"),
        visible=tuple(C.tiles_from_proto(req.visible, "visible")),
    )


def escaped_seat_from_proto(req: scoring_pb2.SettleEscapeRequest) -> int:
    return C.seat_from_proto(req.escaped_seat, "escaped_seat")


# --- requests: domain → proto (for callers) ---------------------------------------------------
def context_to_proto(
    ctx: HandContext, ruleset_name: str = "", options: dict | None = None
) -> scoring_pb2.HandContext:
    """``ruleset_name``/``options`` name the ruleset (a domain :class:`Ruleset` is data already
    resolved; callers pass the reference they resolved it from, default its own name)."""
    pb = scoring_pb2.HandContext(
        ruleset=C.ruleset_to_ref(ruleset_name or _name(ctx.ruleset), options),
        stake=ctx.stake,
        dealer=C.seat_to_proto(ctx.dealer),
        huangfan=ctx.huangfan,
        garden_stacks=list(ctx.garden_stacks or ()),
        doubled_seats=[C.seat_to_proto(s) for s in sorted(ctx.doubled_seats)],
    )
    if ctx.dice is not None:
        pb.dice.CopyFrom(C.dice_to_proto(ctx.dice))
    return pb


def _name(ruleset: Ruleset) -> str:
    return ruleset.name


def win_input_to_proto(
    w: WinInput, ruleset_name: str = "", options: dict | None = None
) -> scoring_pb2.SettleWinRequest:
    req = _win_request(w, ruleset_name, options)
    if w.feeder_hand is not None:
        req.from_hand.CopyFrom(
            scoring_pb2.FeederHand(
                concealed=C.tiles_to_proto(w.feeder_hand.concealed),
                melds=C.melds_to_proto(w.feeder_hand.melds),
            )
        )
    return req


def _win_request(
    w: WinInput, ruleset_name: str, options: dict | None
) -> scoring_pb2.SettleWinRequest:
    return scoring_pb2.SettleWinRequest(
        context=context_to_proto(w.context, ruleset_name, options),
        winners=[
            scoring_pb2.WinnerHand(
                seat=C.seat_to_proto(h.seat),
                concealed=C.tiles_to_proto(h.concealed),
                melds=C.melds_to_proto(h.melds),
                flowers=C.tiles_to_proto(h.flowers),
                win_tile=C.tile_to_proto(h.win_tile),
            )
            for h in w.winners
        ],
        win_kind=C.win_kind_to_proto(w.win.value),
        from_seat=C.seat_to_proto(w.from_seat),
        replacement=w.replacement,
        ready_seats=[C.seat_to_proto(s) for s in sorted(w.ready)],
        claims=[
            scoring_pb2.Claim(
                claimer=C.seat_to_proto(c.claimer),
                claimed_from=C.seat_to_proto(c.claimed_from),
                claimed_from_ready=c.feeder_ready,
            )
            for c in (w.claims or ())
        ],
        first_go_around=w.first_go_around,
        last_tile=w.last_tile,
        replacement_after=_REPLACEMENT_AFTER_PB[w.replacement_after],
        wild_indicator=0 if w.wild_indicator is None else C.tile_to_proto(w.wild_indicator),
        visible=C.tiles_to_proto(w.visible),
    )


# --- responses: domain → proto -----------------------------------------------------------------
def item_to_proto(it: Item) -> scoring_pb2.BreakdownItem:
    return scoring_pb2.BreakdownItem(
        code=it.code,
        label=it.label,
        label_zh=it.label_zh,
        amount=it.amount,
        unit=it.unit.value,
        seat=C.seat_to_proto(it.seat),
        other_seat=C.seat_to_proto(it.other_seat),
        detail=it.detail,
    )


def winner_to_proto(r: WinnerResult) -> scoring_pb2.WinnerResult:
    pb = scoring_pb2.WinnerResult(
        seat=C.seat_to_proto(r.seat),
        hand=C.hand_type_to_proto(r.hand),
        flowers=r.flowers,
        value=r.value,
        cap_lezi=r.cap_lezi,
    )
    if r.old is not None:
        pb.old.CopyFrom(
            scoring_pb2.OldScore(
                hu=r.old.hu,
                hu_rounded=r.old.hu_rounded,
                fan=r.old.fan,
                fan_items=[_OLD_FAN_PB[name] for name in r.old.fan_items],
            )
        )
    if r.baida is not None:
        pb.baida.CopyFrom(
            scoring_pb2.BaidaScore(multiplier=r.baida.multiplier, wildcards=r.baida.wildcards)
        )
    return pb


def settlement_to_proto(s: Settlement) -> scoring_pb2.Settlement:
    return scoring_pb2.Settlement(
        winners=[winner_to_proto(r) for r in s.winners],
        payments=list(s.payments),
        house=s.house,
        transfers=[
            scoring_pb2.Transfer(
                payer=C.seat_to_proto(t.payer), payee=C.seat_to_proto(t.payee), chips=t.chips
            )
            for t in s.transfers
        ],
        next_dealer=C.seat_to_proto(s.next_dealer),
        huangfan=s.huangfan,
        next_huangfan=s.next_huangfan,
        breakdown=[item_to_proto(it) for it in s.breakdown],
        garden_stacks_after=list(s.garden_stacks_after or ()),
    )
