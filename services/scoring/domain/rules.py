"""The scoring options of a ruleset compiled once into plain fields and per-hand tables.

Settling reads a dozen options per winner; reading them through the ruleset's section views on
every call costs more than the arithmetic. :func:`scoring_rules` compiles a
:class:`shared.ruleset.Ruleset` once (cached per ruleset object; rulesets are immutable) into a
:class:`ScoringRules` with the values the scoring modules need, hand values and caps indexed by
:class:`shared.hand.HandType`, the 承包/反承包 share tables and the 花 table.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from services.scoring.domain.chengbao import ChengbaoTable, chengbao_table
from services.scoring.domain.flowers import FlowerTable, flower_table
from shared.hand import HandType
from shared.ruleset import Ruleset

# Situations some presets value as fixed hands (seed 001): the [hands]/[hand_caps] option.
SITUATION_OPTIONS = {
    "big_hanging": "big_hanging",
    "heavenly": "heavenly_win",
    "earthly": "earthly_win",
}


@dataclass(frozen=True, slots=True)
class ScoringRules:
    name: str
    lezi: int  # one 勒子 in points
    base_points: int  # 底分
    base_flowers: int  # 底注花
    table_cap_lezi: int
    floor_to_lezi: bool
    menqing: bool
    menqing_multiplier: int
    menqing_min_cap_lezi: int
    kaibao: bool
    kaibao_multiplier: int
    huangfan_multiplier: int
    dice_huangfan: bool
    replacement_multiplier: int
    rob_kong_multiplier: int
    big_hanging_concealed_kong: bool
    heavenly_earthly: bool
    require_ready: bool
    fixed_lezi: tuple[int, ...]  # by HandType value; 0 = flower-scored
    cap_lezi: tuple[int, ...]  # by HandType value
    situation_lezi: dict[str, tuple[int, int]]  # situation -> (fixed 勒子, cap 勒子)
    rob_kong_shares: int
    loss_cap_lezi: int
    chengbao_on: bool  # payment.chengbao: false turns 承包 off
    chengbao_threshold: int
    chengbao_excludes_declared_feeder: bool
    chengbao: ChengbaoTable
    fan_chengbao: ChengbaoTable
    escape_penalty_base: int
    escape_house_percent: int
    garden: bool
    seat_after_nearest_winner: bool
    flowers: FlowerTable


Compiled = TypeVar("Compiled")


def per_ruleset(compile_fn: Callable[[Ruleset], Compiled]) -> Callable[[Ruleset], Compiled]:
    """``compile_fn`` run once per ruleset object, its result cached while the ruleset lives
    (rulesets are immutable); every scoring model compiles its options this way."""
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @functools.wraps(compile_fn)
    def compiled(ruleset: Ruleset) -> Compiled:
        hit = cache.get(ruleset)
        if hit is None:
            hit = cache[ruleset] = compile_fn(ruleset)
        return hit

    return compiled


def scoring_rules(ruleset: Ruleset) -> ScoringRules:
    """The compiled scoring options of ``ruleset`` (built on first use, then cached)."""
    return _compiled(ruleset)


@per_ruleset
def _compiled(rs: Ruleset) -> ScoringRules:
    sc, hands, caps, pay = rs.scoring, rs.hands, rs.hand_caps, rs.payment
    size = max(HandType) + 1
    fixed = [0] * size
    cap = [caps.default] * size
    for h in HandType:  # the hands of other models (STANDARD, PING_HU …) have no option: 0
        fixed[h] = hands.get(h.label, 0)
        cap[h] = caps.get(h.label, caps.default)
    situations = {
        situ: (hands.get(option, 0), caps.get(option, caps.default))
        for situ, option in SITUATION_OPTIONS.items()
    }
    return ScoringRules(
        name=rs.name,
        lezi=sc.lezi_points,
        base_points=sc.base_points,
        base_flowers=rs.flowers.base,
        table_cap_lezi=sc.hand_cap_lezi,
        floor_to_lezi=sc.floor_to_lezi,
        menqing=sc.menqing,
        menqing_multiplier=sc.menqing_multiplier,
        menqing_min_cap_lezi=sc.menqing_min_cap_lezi,
        kaibao=sc.kaibao,
        kaibao_multiplier=sc.kaibao_multiplier,
        huangfan_multiplier=sc.huangfan_multiplier,
        dice_huangfan=sc.dice_huangfan,
        replacement_multiplier=sc.replacement_multiplier,
        rob_kong_multiplier=sc.rob_kong_multiplier,
        big_hanging_concealed_kong=sc.big_hanging_concealed_kong,
        heavenly_earthly=hands.heavenly_earthly,
        require_ready=rs.ready.require_declare_ready,
        fixed_lezi=tuple(fixed),
        cap_lezi=tuple(cap),
        situation_lezi=situations,
        rob_kong_shares=pay.rob_kong_shares,
        loss_cap_lezi=pay.loss_cap_lezi,
        chengbao_on=pay.chengbao,
        chengbao_threshold=pay.chengbao_threshold,
        chengbao_excludes_declared_feeder=pay.chengbao_excludes_declared_feeder,
        chengbao=chengbao_table(rs, reverse=False),
        fan_chengbao=chengbao_table(rs, reverse=True),
        escape_penalty_base=pay.escape_penalty_base,
        escape_house_percent=pay.escape_house_percent,
        garden=pay.garden,
        seat_after_nearest_winner=rs.table.multi_win_dealer == "seat_after_nearest_winner",
        flowers=flower_table(rs),
    )
