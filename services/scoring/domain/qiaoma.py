"""The 敲麻 scoring model (``table.scoring_model = "qiaoma"``: shanghai-qiaoma, -classic;
RULES §8-§10): settling a win, a drawn hand, an escape. Each function checks the whole request
first (:mod:`services.scoring.domain.validate`), then computes; it has no side effects, so a
rejected request settles nothing. :mod:`services.scoring.domain.settle` picks the model.
"""

from __future__ import annotations

from collections import defaultdict

from services.scoring.domain import bookkeeping as B
from services.scoring.domain.breakdown import Item, Unit, item
from services.scoring.domain.chengbao import claim_counts, claims_from_melds, relations_of
from services.scoring.domain.collect import collect, owe, transfer_items
from services.scoring.domain.escape import escape_settlement, split_escape
from services.scoring.domain.flowers import count_flowers
from services.scoring.domain.garden import stacks_after
from services.scoring.domain.loss_cap import loss_cap_chips
from services.scoring.domain.model import (
    HandContext,
    Settlement,
    SettlementKind,
    WinInput,
    WinKind,
    WinnerResult,
)
from services.scoring.domain.payments import owed_to_winner
from services.scoring.domain.rules import ScoringRules, scoring_rules
from services.scoring.domain.situations import (
    is_big_hanging,
    is_earthly_win,
    is_heavenly_win,
    is_menqing,
)
from services.scoring.domain.validate import check_context, check_seat, check_win
from services.scoring.domain.value import Situations, hand_value
from shared.dice import is_kaibao


def settle_win(w: WinInput) -> Settlement:
    """Settle a won hand: each winner's 花 and value (RULES §8), who pays whom (§9, 承包,
    loss cap, 逛花园), the next dealer and 荒番 counter (§2, §10), and the breakdown."""
    checked = check_win(w)
    ctx = w.context
    r = scoring_rules(ctx.ruleset)
    stake = ctx.stake
    items: list[Item] = []
    now, hf_items = B.huangfan_this_hand(r, ctx.huangfan, ctx.dice)
    items.extend(hf_items)
    claims = w.claims if w.claims is not None else claims_from_melds(w.winners)
    counts = claim_counts(claims, r.chengbao_excludes_declared_feeder)
    winner_seats = [c.hand.seat for c in checked]
    kaibao = is_kaibao(ctx.dice)
    heavenly_earthly = r.heavenly_earthly
    results: list[WinnerResult] = []
    owed_by_payer: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for c in checked:
        h = c.hand
        eight = w.win is WinKind.EIGHT_FLOWERS
        # 八花齐: the eighth flower is the winning tile, listed among the flowers or not
        flower_tiles = sorted({*h.flowers, h.win_tile}) if eight else h.flowers
        hua, f_items = count_flowers(c.counts, h.melds, flower_tiles, r.flowers, h.seat)
        items.extend(f_items)
        items.append(item("FLOWERS_TOTAL", hua, Unit.HUA, h.seat))
        situ = Situations(
            menqing=is_menqing(h.melds),
            kaibao=kaibao,
            huangfan=now > 0,
            replacement=w.replacement,
            big_hanging=not eight
            and is_big_hanging(h.concealed, h.melds, h.win_tile, r.big_hanging_concealed_kong),
            rob_kong=w.win is WinKind.ROB_KONG,
            heavenly=heavenly_earthly
            and is_heavenly_win(h.seat, ctx.dealer, w.win.is_self_draw, w.first_go_around),
            earthly=heavenly_earthly and is_earthly_win(h.seat, ctx.dealer, w.first_go_around),
        )
        hv = hand_value(c.hand_type, hua, situ, r, h.seat)
        items.extend(hv.items)
        results.append(WinnerResult(h.seat, c.hand_type, hua, hv.value, hv.cap_lezi))
        relations = relations_of(h.seat, counts, r.chengbao_threshold) if r.chengbao_on else []
        for rel in relations:
            who = (
                f"seat {rel.partner} claimed {rel.claims}× from seat {h.seat} (反承包)"
                if rel.reverse
                else f"seat {h.seat} claimed {rel.claims}× from seat {rel.partner}"
            )
            items.append(
                item("CHENGBAO_RELATION", rel.claims, Unit.COUNTER, h.seat, rel.partner, detail=who)
            )
        for o in owed_to_winner(w.win, h.seat, w.from_seat, winner_seats, w.ready, relations, r):
            items.append(owe(o, hv.value, stake, owed_by_payer))
    transfers, payments, cap_items = collect(
        owed_by_payer, ctx, loss_cap_chips(r, stake), lambda: _cap_text(r, stake)
    )
    items.extend(cap_items)
    items.extend(transfer_items(transfers))
    dealer, why = B.next_dealer_after_win(r, winner_seats, w.from_seat)
    after = B.next_huangfan(now, won=True)
    items.extend(B.bookkeeping_items(dealer, why, now, after, "a hand with a win: −1, not below 0"))
    return Settlement(
        SettlementKind.WIN,
        tuple(results),
        tuple(payments),
        0,
        tuple(transfers),
        dealer,
        now,
        after,
        tuple(items),
        stacks_after(ctx.garden_stacks, payments) if ctx.garden_stacks is not None else None,
    )


def _cap_text(r: ScoringRules, stake: int) -> str:
    return f"at most {r.loss_cap_lezi} 勒子 × {r.lezi} × stake {stake}"


def settle_draw(ctx: HandContext) -> Settlement:
    """A drawn hand (流局/荒): nobody pays, the dealer deals again, the 荒番 counter rises."""
    r = scoring_rules(ctx.ruleset)
    check_context(ctx, needs_dice=r.dice_huangfan)
    now, items = B.huangfan_this_hand(r, ctx.huangfan, ctx.dice)
    items.insert(0, item("DRAWN_HAND", 0, Unit.CHIPS, detail="the wall ran out with no winner"))
    after = B.next_huangfan(now, won=False)
    items.extend(
        B.bookkeeping_items(
            ctx.dealer, "a drawn hand: the dealer deals again", now, after, "a drawn hand: +1"
        )
    )
    return Settlement(
        SettlementKind.DRAW,
        (),
        (0, 0, 0, 0),
        0,
        (),
        ctx.dealer,
        now,
        after,
        tuple(items),
        ctx.garden_stacks,
    )


def settle_escape(ctx: HandContext, escaped: object) -> Settlement:
    """A player escapes or disconnects from a running hand: the penalty, shared out to the
    other three and the house (RULES §9). A player left, so the 荒番 counter resets (§10)."""
    check_context(ctx, needs_dice=False)
    seat = check_seat(escaped, "escaped seat")
    shares = split_escape(scoring_rules(ctx.ruleset), ctx.stake, seat, ctx.garden_stacks)
    tail = B.bookkeeping_items(
        ctx.dealer,
        "the hand was abandoned: the dealer deals again",
        ctx.huangfan,
        0,
        "a player left the table: reset to 0",
    )
    return escape_settlement(ctx, seat, shares, tail, ctx.huangfan, 0)
