"""The end of a hand: scoring settles it (a win or the drawn hand, 流局), the wall reveals its
seed, and the result is published: ``win_declared``, ``hand_result`` (winners, payments, the
breakdown, the hands shown — every hand on a discard win, the winners' on a self-draw),
``seed_revealed``. :func:`hand_result_event` is the one place a ``hand_result`` is built (the
session's escape uses it too). Service calls come before any event, so a failed call can be
retried without repeating facts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from services.gateway.domain.events.kinds import (
    BreakdownLine,
    HandDrawn,
    HandResult,
    MeldFact,
    RevealedHand,
    SeedRevealed,
    WinDeclared,
    WinnerLine,
)
from services.gateway.domain.hand.state import STEP_NONE, STEP_WIN
from services.gateway.domain.ports import HandFacts, Settlement, WallReveal, WinnerInput
from shared import tiles as T
from shared.hand.hand_type import HandType
from shared.melds import Meld, MeldKind
from shared.readiness import ready_seats
from shared.table import NUM_SEATS, WinKind, WinOption, visible_tiles

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_MELD_ADDED_KONG: Final = MeldKind.ADDED_KONG
_MELD_PONG: Final = MeldKind.PONG
_WIN_DISCARD: Final = WinKind.DISCARD
_WIN_ROB_KONG: Final = WinKind.ROB_KONG
_WIN_SELF_DRAW: Final = WinKind.SELF_DRAW

if TYPE_CHECKING:
    from services.gateway.domain.hand.engine import HandEngine

Wins = list[tuple[int, WinOption]]


def hand_result_event(
    st: Settlement,
    outcome: str,
    *,
    next_dealer: int,
    next_huangfan: int,
    wins: Wins | None = None,
    from_seat: int | None = None,
    revealed: tuple[RevealedHand, ...] = (),
    robbed_tile: int | None = None,
    escaped_seat: int | None = None,
    garden_stacks: tuple[int, ...] | None = None,
    hand_id: str = "",
    hand_number: int = 0,
    fees: tuple[int, ...] = (),
) -> HandResult:
    """The ``hand_result`` of a settlement (a win, a drawn hand or an escape); ``fees``: the
    room service fee (台费) each seat pays, apart from payments (the hand's own result only)."""
    win_of = dict(wins or ())
    return HandResult(
        outcome=outcome,
        winners=tuple(
            WinnerLine(
                seat=w.seat,
                hand=HandType(w.hand).label,
                flowers=w.flowers,
                value=w.value,
                win_kind=win_of[w.seat].kind.label if w.seat in win_of else "",
                win_tile=win_of[w.seat].win_tile if w.seat in win_of else None,
            )
            for w in st.winners
        ),
        payments=tuple(st.payments),
        house=st.house,
        breakdown=tuple(
            BreakdownLine(b.seat, b.code, b.label, b.amount, b.other_seat) for b in st.breakdown
        ),
        revealed=revealed,
        next_dealer=next_dealer,
        next_huangfan=next_huangfan,
        from_seat=from_seat,
        robbed_tile=robbed_tile,
        escaped_seat=escaped_seat,
        garden_stacks=garden_stacks,
        hand_id=hand_id,
        hand_number=hand_number,
        fees=fees,
    )


def facts(h: HandEngine, winners: tuple[WinnerInput, ...] = (), **kw) -> HandFacts:
    """What scoring needs to know of the hand."""
    cfg = h.config
    return HandFacts(
        ruleset_name=cfg.ruleset_name,
        overrides=dict(cfg.overrides),
        stake=cfg.stake,
        dealer=h.dealer,
        dice=h.dice,
        huangfan=cfg.huangfan,
        ready=ready_seats(h.seats, cfg.ruleset, (w.seat for w in winners)),
        claims=tuple(h.claims_made),
        first_go_around=h.first_go_around,
        garden_stacks=cfg.garden_stacks,
        doubled_seats=cfg.doubled_seats,
        winners=winners,
        **kw,
    )


def _seen_by(h: HandEngine, seat: int) -> tuple[int, ...]:
    """What the (self-drawing) winner sees outside the hand, for a 百搭 table without fifth
    copies (RULES-presets §13.B.3); empty elsewhere."""
    seen = visible_tiles(h.snapshot(), seat, indicator=False)
    return () if seen is None else tuple(T.from_counts(seen))


def finish_win(h: HandEngine, wins: Wins, from_seat: int | None) -> None:
    """Settle a win and end the hand."""
    h._step, h._step_wins, h._step_from = STEP_WIN, wins, from_seat
    win_kind = wins[0][1].kind
    winners = []
    for seat, opt in wins:
        s = h.seats[seat]
        counts = list(s.counts)
        if win_kind == _WIN_SELF_DRAW and opt.win_tile is not None:
            counts[opt.win_tile] -= 1
        winners.append(
            WinnerInput(
                seat=seat,
                concealed=tuple(T.from_counts(counts)),
                melds=tuple(s.melds),
                flowers=tuple(s.flowers),
                win_tile=opt.win_tile,
            )
        )
    settled = h.scoring.settle_win(
        facts(
            h,
            tuple(winners),
            win=win_kind.label,
            from_seat=from_seat,
            replacement=any(o.replacement for _, o in wins),
            last_tile=win_kind == _WIN_SELF_DRAW and h.remaining <= h.reserved_tiles,
            replacement_after="flower" if h.replaced_flower else "kong",
            feeder_hand=feeder_hand(h, from_seat, win_kind, wins[0][1].win_tile),
            wild_indicator=h.flipped[-1] if h.flipped else None,
            visible=_seen_by(h, wins[0][0]) if win_kind == _WIN_SELF_DRAW else (),
        )
    )
    reveal = h.wall.reveal(h.hand_id, h.wall_calls + 1)  # the next call: none after this
    h.settlement = settled
    h.pending = {}
    h.outcome = "win"
    for seat, opt in wins:
        h.emit_event(
            WinDeclared(
                seat=seat,
                win_kind=opt.kind.label,
                tile=opt.win_tile,
                from_seat=from_seat,
                hand=HandType(opt.hand).label,
                hand_id=h.hand_id,
                hand_number=h.number,
            )
        )
    shown = range(NUM_SEATS) if win_kind == _WIN_DISCARD else [s for s, _ in wins]
    from_other = win_kind in (_WIN_DISCARD, _WIN_ROB_KONG)
    _publish_result(h, "win", wins, shown, reveal, h.last.seat if from_other else None)


def feeder_hand(
    h: HandEngine, seat: int | None, kind: WinKind, tile: int | None
) -> tuple[tuple[int, ...], tuple[Meld, ...]] | None:
    """The discarder's (robbed player's) hand after the winning tile left it: a robbed added
    kong is a pong again (RULES-presets §13.0 ``from_hand``, for shanghai-old's 包输)."""
    if seat is None or kind not in (_WIN_DISCARD, _WIN_ROB_KONG):
        return None
    s = h.seats[seat]
    melds = tuple(
        Meld(_MELD_PONG, m.tiles[:3], m.from_seat)
        if kind == _WIN_ROB_KONG and m.kind is _MELD_ADDED_KONG and m.tiles[0] == tile
        else m
        for m in s.melds
    )
    return tuple(T.from_counts(s.counts)), melds


def finish_drawn_hand(h: HandEngine) -> None:
    """流局: the wall ran out before anyone won."""
    settled = h.scoring.settle_draw(facts(h))
    reveal = h.wall.reveal(h.hand_id, h.wall_calls + 1)
    h.settlement = settled
    h.pending = {}
    h.outcome = "draw"
    h.emit_event(HandDrawn(tiles_left=h.remaining, hand_id=h.hand_id, hand_number=h.number))
    _publish_result(h, "draw", [], [], reveal, None)


def _publish_result(
    h: HandEngine, outcome: str, wins: Wins, shown, rv: WallReveal, from_seat: int | None
) -> None:
    st = h.settlement
    assert st is not None
    stacks = h.config.garden_stacks  # 逛花园: the stacks after this hand
    h.emit_event(
        hand_result_event(
            st,
            outcome,
            next_dealer=st.next_dealer,
            next_huangfan=0 if h.huangfan_reset else st.next_huangfan,
            wins=wins,
            from_seat=from_seat,
            revealed=tuple(revealed_hand(h, s) for s in shown),
            robbed_tile=h.robbed_tile,
            garden_stacks=None
            if stacks is None
            else tuple(b + p for b, p in zip(stacks, st.payments, strict=True)),
            hand_id=h.hand_id,
            hand_number=h.number,
            fees=h.config.fees,
        )
    )
    h.emit_event(
        SeedRevealed(
            seed=rv.seed,
            commitment=rv.commitment or h.commitment,
            hand_id=h.hand_id,
            hand_number=h.number,
        )
    )
    h.finished = True
    h._step = STEP_NONE


def revealed_hand(h: HandEngine, seat: int) -> RevealedHand:
    s = h.seats[seat]
    return RevealedHand(
        seat=seat,
        concealed=tuple(s.concealed_tiles()),
        melds=tuple(MeldFact.of(m) for m in s.melds),
        flowers=tuple(sorted(s.flowers)),
    )
