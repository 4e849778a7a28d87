"""The value of a 百搭 hand (RULES-presets §13.B.6): points of one share.

花 = bonus tiles × ``flower_tile`` (flowers, dragons when they are bonus tiles, 1a-4a alike;
kongs and wind pongs give none). value = min((``base_points`` + 花) × 倍, ``hand_cap_points``)
(0 = no cap). Of every reading the highest value is scored; on a tie the higher 倍, then the
shape order 龙七对, 对对胡, 七对, 平胡 (then the first found).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from services.scoring.domain.baida.multiplier import BaidaSituation, Factor, factors, multiplier
from services.scoring.domain.baida.reading import Judged
from services.scoring.domain.baida.rules import BaidaRules

SHAPE_ORDER = {"dragon_seven_pairs": 3, "pong_pong": 2, "seven_pairs": 1, "ping_hu": 0}


@dataclass(frozen=True, slots=True)
class BaidaValue:
    judged: Judged
    factors: tuple[Factor, ...]
    multiplier: int
    flowers: int  # 花
    raw: int  # (底分 + 花) × 倍
    value: int


def value_of(j: Judged, bonus_tiles: int, situ: BaidaSituation, rules: BaidaRules) -> BaidaValue:
    fs = factors(j, situ, rules)
    bei = multiplier(fs)
    hua = bonus_tiles * rules.flower_tile
    raw = (rules.base_points + hua) * bei
    cap = rules.hand_cap_points
    return BaidaValue(j, tuple(fs), bei, hua, raw, min(raw, cap) if cap else raw)


def best_value(
    judged: Iterable[Judged], bonus_tiles: int, situ: BaidaSituation, rules: BaidaRules
) -> BaidaValue | None:
    """The reading scored, None when there is none."""
    values = [value_of(j, bonus_tiles, situ, rules) for j in judged]
    if not values:
        return None
    return max(values, key=lambda v: (v.value, v.multiplier, SHAPE_ORDER[v.judged.shape]))
