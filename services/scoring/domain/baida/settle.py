"""The 倍 scoring model (``table.scoring_model = "baida"``: shanghai-baida, RULES-presets
§13.B): settling a win, a drawn hand and an escape.

A win (a self-draw, so one winner): every reading of the 百搭 hand judged (:mod:`.reading`),
its 倍 (:mod:`.multiplier`) and value (:mod:`.value`), the best scored; each other player pays
one share (:mod:`.payments`); the 逛花园 limit when the table plays it; the next dealer.
"""

from __future__ import annotations

from services.scoring.domain import without_huangfan
from services.scoring.domain.baida.check import BaidaChecked, check_baida_win
from services.scoring.domain.baida.multiplier import BaidaSituation
from services.scoring.domain.baida.payments import owed_baida
from services.scoring.domain.baida.reading import judged_readings
from services.scoring.domain.baida.rules import BaidaRules, baida_rules
from services.scoring.domain.baida.value import BaidaValue, best_value
from services.scoring.domain.breakdown import Item, Unit, item
from services.scoring.domain.collect import Debts, owe
from services.scoring.domain.model import (
    BaidaResult,
    HandContext,
    Settlement,
    WinInput,
    WinnerResult,
)
from services.scoring.domain.validate import not_a_win
from services.scoring.domain.without_huangfan import check_amount, value_lines
from shared import tiles as T


def situation_of(w: WinInput, c: BaidaChecked, rules: BaidaRules) -> BaidaSituation:
    after_kong = w.replacement_after.value == "kong"
    return BaidaSituation(
        melds=tuple(c.hand.melds),
        last_tile=w.last_tile,
        kong_replacement=w.replacement and (after_kong or rules.replacement_after_flower),
        jokers=c.jokers,
    )


def reading_text(v: BaidaValue, c: BaidaChecked) -> str:
    r = v.judged.reading
    if r.is_seven_pairs:
        shown = " ".join(T.format_tiles((k, k)) for k in r.pairs)
    else:
        d = r.decomposition
        assert d is not None  # not seven pairs: a standard decomposition
        shown = " ".join(str(s) for s in d.sets) + f" pair {T.format_tiles((d.pair, d.pair))}"
    return f"{v.judged.name}: {shown}"


def value_items(v: BaidaValue, c: BaidaChecked, rules: BaidaRules) -> list[Item]:
    seat = c.hand.seat
    items = [item("BAIDA_READING", 0, Unit.COUNTER, seat, detail=reading_text(v, c))]
    if c.jokers:
        what = "1j" if c.wild_kind is None else f"{T.format_tile(c.wild_kind)} (翻百搭)"
        stands = T.format_tiles(v.judged.reading.wild)
        items.append(
            item(
                "WILDCARD",
                c.jokers,
                Unit.COUNTER,
                seat,
                detail=f"{c.jokers} × {what} read as {stands}",
            )
        )
    for k in c.hand.flowers:
        items.append(item("BONUS_TILE", rules.flower_tile, Unit.HUA, seat, detail=T.format_tile(k)))
    items.append(item("FLOWERS_TOTAL", v.flowers, Unit.HUA, seat))
    items.extend(item(f.code, f.factor, Unit.MULTIPLIER, seat, detail=f.detail) for f in v.factors)
    items.append(item("BEI_TOTAL", v.multiplier, Unit.MULTIPLIER, seat))
    raw = f"({rules.base_points} 底分 + {v.flowers} 花) × {v.multiplier} = {v.raw}"
    items.append(item("RAW_VALUE", v.raw, Unit.POINTS, seat, detail=raw))
    cap = "baida_scoring.hand_cap_points"
    items.extend(value_lines("BAIDA_CAP", cap, rules.hand_cap_points, v.raw, v.value, seat))
    return items


def settle_win(w: WinInput) -> Settlement:
    """Settle a self-drawn 百搭 win (see module doc)."""
    ctx = w.context
    rules = baida_rules(ctx.ruleset)
    checked = check_baida_win(w, rules)
    stake = ctx.stake
    items: list[Item] = []
    results = []
    debts: Debts = {}
    for c in checked:
        h = c.hand
        judged = judged_readings(c.counts, c.jokers, h.melds, rules, c.visible)
        v = best_value(judged, len(h.flowers), situation_of(w, c, rules), rules)
        if v is None:
            why = (
                f"with {c.jokers} 百搭 makes no winning hand of ruleset {rules.name} "
                "(RULES-presets §13.B.5)"
            )
            raise not_a_win(f"seat {h.seat}", c.counts, h.melds, why)
        check_amount(v.multiplier, f"seat {h.seat}'s 倍")
        check_amount(v.value * stake, f"what seat {h.seat} is owed by each")
        items.extend(value_items(v, c, rules))
        baida = BaidaResult(v.multiplier, c.jokers)
        results.append(WinnerResult(h.seat, v.judged.hand, v.flowers, v.value, baida=baida))
        items.extend(owe(o, v.value, stake, debts) for o in owed_baida(h.seat))
    return without_huangfan.won_settlement(ctx, results, debts, items, None)


def settle_draw(ctx: HandContext) -> Settlement:
    """A drawn hand: nobody pays, the dealer deals again (§13.B.8)."""
    return without_huangfan.settle_draw(ctx)


def settle_escape(ctx: HandContext, seat: object) -> Settlement:
    """An escape: the RULES §9 penalty with 底分 = ``baida_scoring.base_points`` (§13.B.8)."""
    return without_huangfan.settle_escape(ctx, seat, baida_rules(ctx.ruleset).base_points)
