"""The value of a winning hand: the points of one share (份), in the order of RULES §8.

1. raw: ``base_points`` + 花 for a flower-scored hand (``[hands]`` value 0); fixed 勒子 ×
   ``lezi_points`` for the others. Where a preset makes 大吊车, 天胡 or 地胡 fixed hands (seed
   001), the higher of the shape's raw value and theirs counts.
2. floor (``scoring.floor_to_lezi``): 杠开 or 大吊车 raise a raw value under 1 勒子 to 1 勒子.
3. multipliers, each once: 门清, 开宝, 荒番 (RULES §8), and the preset's 杠开 and 抢杠 factors
   (``replacement_multiplier``, ``rob_kong_multiplier``: seed 001's ×2 and ×3). 八花齐 takes
   only 开宝 and 荒番.
4. hand cap: the hand's ``[hand_caps]`` (the highest of the hands that apply) × the 开宝 factor
   × the 荒番 factor; then 门清 lifts a cap under ``menqing_min_cap_lezi`` to it (双勒).
5. table cap: ``hand_cap_lezi`` 勒子.

Each step that applies adds a breakdown item; so does each that was considered and had no
effect where a player would ask (a floor on a hand already worth a 勒子).
"""

from __future__ import annotations

from services.scoring.domain.breakdown import Item, Unit, item
from services.scoring.domain.rules import ScoringRules
from shared.hand import HandType


class Situations:
    """Which win situations (RULES §6) hold for one winner.

    A plain class rather than a dataclass, like :class:`~.breakdown.Item`: compiled, a
    dataclass keeps a Python ``__init__``, and every winner builds one."""

    __slots__ = (
        "big_hanging",
        "earthly",
        "heavenly",
        "huangfan",
        "kaibao",
        "menqing",
        "replacement",
        "rob_kong",
    )

    def __init__(
        self,
        menqing: bool = False,  # 门清
        kaibao: bool = False,  # 开宝
        huangfan: bool = False,  # 荒番 (counter above zero)
        replacement: bool = False,  # 杠开
        big_hanging: bool = False,  # 大吊车
        rob_kong: bool = False,  # 抢杠
        heavenly: bool = False,  # 天胡
        earthly: bool = False,  # 地胡
    ) -> None:
        self.menqing = menqing
        self.kaibao = kaibao
        self.huangfan = huangfan
        self.replacement = replacement
        self.big_hanging = big_hanging
        self.rob_kong = rob_kong
        self.heavenly = heavenly
        self.earthly = earthly

    def __repr__(self) -> str:
        flags = (
            ("menqing", self.menqing),
            ("kaibao", self.kaibao),
            ("huangfan", self.huangfan),
            ("replacement", self.replacement),
            ("big_hanging", self.big_hanging),
            ("rob_kong", self.rob_kong),
            ("heavenly", self.heavenly),
            ("earthly", self.earthly),
        )
        return "Situations(" + ", ".join(f"{name}={on!r}" for name, on in flags) + ")"


class HandValue:
    """The value of one winner's hand (a plain class for the reason of :class:`Situations`)."""

    __slots__ = ("cap_lezi", "items", "raw", "value")

    def __init__(self, value: int, raw: int, cap_lezi: int, items: tuple[Item, ...]) -> None:
        self.value = value  # points of one share
        self.raw = raw
        self.cap_lezi = cap_lezi  # the hand cap after its lifts
        self.items = items

    def __repr__(self) -> str:
        return (
            f"HandValue(value={self.value!r}, raw={self.raw!r}, cap_lezi={self.cap_lezi!r}, "
            f"items={self.items!r})"
        )


_SITUATION_CODES = (
    ("big_hanging", "BIG_HANGING"),
    ("heavenly", "HEAVENLY_WIN"),
    ("earthly", "EARTHLY_WIN"),
)


def hand_value(
    hand: HandType, flowers: int, situ: Situations, r: ScoringRules, seat: int | None = None
) -> HandValue:
    """The value of ``hand`` with ``flowers`` 花 under ``situ`` and the compiled rules ``r``
    (see module doc)."""
    lezi = r.lezi
    items: list[Item] = []
    name = f"{hand.name_zh} {hand.label}"

    # 1. raw value
    fixed = r.fixed_lezi[hand]
    cap_lezi = r.cap_lezi[hand]
    if fixed:
        raw = fixed * lezi
        items.append(item("HAND", raw, Unit.POINTS, seat, detail=f"{name}: {fixed} 勒子 × {lezi}"))
    else:
        raw = r.base_points + flowers
        items.append(
            item(
                "HAND",
                raw,
                Unit.POINTS,
                seat,
                detail=f"{name}: flower-scored, {r.base_points} 底分 + {flowers} 花",
            )
        )
    for attr, code in _SITUATION_CODES:
        if not getattr(situ, attr):
            continue
        lezi_of, cap_of = r.situation_lezi[attr]
        if not lezi_of:
            continue
        cap_lezi = max(cap_lezi, cap_of)
        if lezi_of * lezi > raw:
            raw = lezi_of * lezi
            items.append(item(code, raw, Unit.POINTS, seat, detail=f"{lezi_of} 勒子 × {lezi}"))
        else:
            items.append(
                item(code, raw, Unit.POINTS, seat, detail=f"{lezi_of} 勒子: no higher than {raw}")
            )

    # 2. 杠开 / 大吊车 floor
    value = raw
    eight = hand is HandType.EIGHT_FLOWERS
    if r.floor_to_lezi and not eight and (situ.replacement or situ.big_hanging):
        floors = ((situ.replacement, "杠开"), (situ.big_hanging, "大吊车"))
        why = " and ".join(zh for flag, zh in floors if flag)
        if value < lezi:
            value = lezi
            items.append(
                item("FLOOR_TO_LEZI", value, Unit.POINTS, seat, detail=f"{why}: {raw} < {lezi}")
            )
        else:
            items.append(
                item(
                    "FLOOR_TO_LEZI",
                    value,
                    Unit.POINTS,
                    seat,
                    detail=f"{why}: already at least 1 勒子, unchanged",
                )
            )

    # 3. multipliers
    menqing = situ.menqing and r.menqing and not eight
    kaibao = situ.kaibao and r.kaibao
    for on, code, factor in (
        (menqing, "CONCEALED_HAND", r.menqing_multiplier),
        (kaibao, "DICE_BONUS", r.kaibao_multiplier),
        (situ.huangfan, "DRAWN_HAND_BONUS", r.huangfan_multiplier),
        (situ.replacement and not eight, "REPLACEMENT_WIN", r.replacement_multiplier),
        (situ.rob_kong, "ROB_KONG", r.rob_kong_multiplier),
    ):
        if on and factor != 1:
            value *= factor
            items.append(item(code, factor, Unit.MULTIPLIER, seat, detail=f"value {value}"))

    # 4. hand cap with its lifts
    lifts = []
    hand_cap = cap_lezi
    if kaibao:
        cap_lezi *= r.kaibao_multiplier
        lifts.append(f"×{r.kaibao_multiplier} 开宝")
    if situ.huangfan:
        cap_lezi *= r.huangfan_multiplier
        lifts.append(f"×{r.huangfan_multiplier} 荒番")
    if menqing and cap_lezi < r.menqing_min_cap_lezi:
        cap_lezi = r.menqing_min_cap_lezi
        lifts.append(f"门清 lifts it to {cap_lezi}")
    cap = cap_lezi * lezi
    how = f"{hand_cap} 勒子" + (" " + ", ".join(lifts) if lifts else "") + f" = {cap}"
    if value > cap:
        items.append(item("HAND_CAP", cap_lezi, Unit.LEZI, seat, detail=f"{how}: {value} → {cap}"))
        value = cap
    else:
        items.append(item("HAND_CAP", cap_lezi, Unit.LEZI, seat, detail=f"{how}: not reached"))

    # 5. table cap
    table_cap = r.table_cap_lezi * lezi
    if value > table_cap:
        items.append(
            item(
                "TABLE_CAP",
                r.table_cap_lezi,
                Unit.LEZI,
                seat,
                detail=f"{r.table_cap_lezi} 勒子 = {table_cap}: {value} → {table_cap}",
            )
        )
        value = table_cap
    items.append(item("VALUE", value, Unit.POINTS, seat, detail="points of one share (份)"))
    return HandValue(value, raw, min(cap_lezi, r.table_cap_lezi), tuple(items))
