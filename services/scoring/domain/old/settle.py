"""The 户/番 scoring model (``table.scoring_model = "old"``: shanghai-old, RULES-presets
§13.A): settling a win, a drawn hand and an escape.

A win: per winner the best arrangement's 户 and 番 and the value of one share (:mod:`.value`),
what each other player owes (:mod:`.payments`), or 九张落地包输 instead (:mod:`.baoshu`); then
the 逛花园 limit when the table plays it (no loss cap: the limit caps a share), the transfers
and the next dealer (§2). No 荒番 is kept, no 承包 exists.
"""

from __future__ import annotations

from services.scoring.domain import without_huangfan
from services.scoring.domain.breakdown import Item, Unit, item
from services.scoring.domain.collect import Debts, owe
from services.scoring.domain.model import (
    HandContext,
    OldResult,
    Settlement,
    WinInput,
    WinKind,
    WinnerResult,
)
from services.scoring.domain.old import baoshu
from services.scoring.domain.old.check import OldChecked, check_old_win
from services.scoring.domain.old.hu import OldSituation, seat_wind
from services.scoring.domain.old.payments import owed_old
from services.scoring.domain.old.rules import OldRules, old_rules
from services.scoring.domain.old.value import OldValue, best_value
from services.scoring.domain.payments import Owed
from services.scoring.domain.situations import is_big_hanging, is_menqing
from services.scoring.domain.without_huangfan import check_amount, value_lines
from shared import tiles as T
from shared.hand import HandType
from shared.hand.preset_hands import hand_waits


def situation_of(w: WinInput, c: OldChecked, rules: OldRules) -> OldSituation:
    h = c.hand
    before = list(c.counts)
    before[h.win_tile] -= 1
    replaced = w.replacement and (
        w.replacement_after.value == "kong" or rules.replacement_after_flower
    )
    return OldSituation(
        seat_wind=seat_wind(h.seat, w.context.dealer),
        self_drawn=w.win is WinKind.SELF_DRAW,
        only_wait=len(hand_waits(before, h.melds, w.context.ruleset)) == 1,
        flowers=tuple(h.flowers),
        menqing=is_menqing(h.melds),
        big_hanging=is_big_hanging(
            h.concealed, h.melds, h.win_tile, rules.big_hanging_concealed_kong
        ),
        replacement=replaced,
        last_tile=w.last_tile,
        rob_kong=w.win is WinKind.ROB_KONG,
    )


def value_items(v: OldValue, seat: int, rules: OldRules, considered: int) -> list[Item]:
    """The breakdown of one winner's value: the reading, each 户 and 番 line, totals, the
    rounding and the limit."""
    arr = v.arrangement
    if arr.seven_pairs:
        reading = "七对 " + " ".join(T.format_tiles((k, k)) for k in arr.pairs)
    else:
        sets = " ".join(str(s) for s in arr.sets)
        assert arr.pair is not None  # a standard arrangement has its pair
        reading = f"{sets} pair {T.format_tiles((arr.pair, arr.pair))}"
    hand = HandType.SEVEN_PAIRS if arr.seven_pairs else HandType.STANDARD
    items = [
        item(
            "OLD_READING",
            considered,
            Unit.COUNTER,
            seat,
            detail=f"{hand.label}: {reading}; the winning tile completes {arr.completes} "
            f"(best of {considered} arrangements)",
        )
    ]
    items.extend(
        item(f"HU_{line.option.upper()}", line.amount, Unit.HU, seat, detail=line.detail)
        for line in v.hu_lines
    )
    items.append(item("HU_TOTAL", v.hu, Unit.HU, seat, detail="户 of the winner"))
    if v.hu_rounded != v.hu:
        items.append(
            item(
                "HU_ROUNDED",
                v.hu_rounded,
                Unit.HU,
                seat,
                detail=f"{v.hu} rounded up to a multiple of {rules.hu_round_up_to}",
            )
        )
    items.extend(
        item(f"FAN_{line.option.upper()}", line.amount, Unit.FAN, seat, detail=line.detail)
        for line in v.fan_lines
    )
    items.append(
        item(
            "FAN_TOTAL",
            v.fan,
            Unit.FAN,
            seat,
            detail=f"{v.hu_rounded} 户 × 2^{v.fan} = {v.unlimited}",
        )
    )
    limit = "old_scoring.limit_hu"
    items.extend(value_lines("OLD_LIMIT", limit, rules.limit_hu, v.unlimited, v.value, seat))
    return items


def owed_to(
    w: WinInput, c: OldChecked, winners: list[int], rules: OldRules
) -> tuple[list[Owed], list[Item]]:
    """What the others owe one winner: §13.A.8, or 包输 (§13.A.9)."""
    h = c.hand
    if w.win.has_feeder and baoshu.is_nine_tiles_down(c.colour.full_flush, h.melds, rules):
        d = w.from_seat
        assert d is not None  # a win from another seat names it (validated)
        items = []
        exempt = False
        if rules.baoshu_exempt_fan > 0:
            assert w.feeder_hand is not None  # required for 九张落地 (check_feeder_hand)
            ready = baoshu.ready_fan(w.feeder_hand, d, w.context, rules)
            exempt = baoshu.is_exempt(ready, rules)
            waited = (
                f"waits on {T.format_tile(ready.wait)} with {ready.fan} 番 "
                f"({', '.join(ready.items) or 'none'})"
                if ready.wait is not None
                else "waits on nothing"
            )
            verdict = (
                "三番叫胡: not liable, paid as usual"
                if exempt
                else f"below {rules.baoshu_exempt_fan} 番: liable"
            )
            items.append(
                item("BAOSHU_READY", ready.fan, Unit.FAN, d, h.seat, detail=f"{waited}; {verdict}")
            )
        if not exempt:
            melds = baoshu.exposed_melds(h.melds)
            why = f"清一色 with {melds} exposed melds (九张落地): pays all that the winner is due"
            return [Owed(d, h.seat, rules.baoshu_shares, "PAY_BAOSHU", why)], items
        return owed_old(w.win, h.seat, d, winners, rules), items
    return owed_old(w.win, h.seat, w.from_seat, winners, rules), []


def settle_win(w: WinInput) -> Settlement:
    """Settle a won hand under the 户/番 model (see module doc)."""
    ctx = w.context
    rules = old_rules(ctx.ruleset)
    checked = check_old_win(w, rules)
    stake = ctx.stake
    winners = [c.hand.seat for c in checked]
    items: list[Item] = []
    results = []
    debts: Debts = {}
    for c in checked:
        h = c.hand
        v = best_value(c.arrangements, c.colour, situation_of(w, c, rules), rules)
        check_amount(v.hu_rounded, f"seat {h.seat}'s 户")
        check_amount(v.fan, f"seat {h.seat}'s 番")
        items.extend(value_items(v, h.seat, rules, len(c.arrangements)))
        hand = HandType.SEVEN_PAIRS if v.arrangement.seven_pairs else HandType.STANDARD
        old = OldResult(v.hu, v.hu_rounded, v.fan, v.fan_items)
        results.append(WinnerResult(h.seat, hand, len(h.flowers), v.value, old=old))
        owed, pay_items = owed_to(w, c, winners, rules)
        items.extend(pay_items)
        for o in owed:
            check_amount(o.shares * v.value * stake, f"what seat {o.payer} owes seat {h.seat}")
            items.append(owe(o, v.value, stake, debts))
    return without_huangfan.won_settlement(ctx, results, debts, items, w.from_seat)


def settle_draw(ctx: HandContext) -> Settlement:
    """A drawn hand: nobody pays, the dealer deals again (§13.A.10)."""
    return without_huangfan.settle_draw(ctx)


def settle_escape(ctx: HandContext, seat: object) -> Settlement:
    """An escape: the RULES §9 penalty with 底分 = ``old_hu.win`` (§13.A.10)."""
    return without_huangfan.settle_escape(ctx, seat, old_rules(ctx.ruleset).hu["win"])
