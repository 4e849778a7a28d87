"""The itemized breakdown of a settlement (说明): what a support desk shows a player who asks
"why did I pay 30?".

Every step of a settlement adds one :class:`Item`: each 花 source, the hand, each multiplier,
floor and cap, each share owed and why, each cap or rounding on the payments, every transfer,
the next dealer and 荒番 counter. An item has a stable machine ``code`` and is named in English
with the Chinese term (both from :data:`CATALOG`, the one place the names live), an ``amount``
in a :class:`Unit`, the seats it concerns, and a ``detail`` sentence with the numbers.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Unit(enum.Enum):
    """What an item's ``amount`` counts. Values match the proto's ``BreakdownUnit``."""

    HUA = 1  # 花, flower points of the winner
    POINTS = 2  # points (分): a value before it is multiplied by the stake
    MULTIPLIER = 3  # a factor applied to the value
    LEZI = 4  # 勒子
    SHARES = 5  # 份 of the winner's value
    CHIPS = 6  # chips (points × stake)
    COUNTER = 7  # the 荒番 counter or a number of claims
    SEAT = 8  # a seat number 0-3
    HU = 9  # 户 hu points (shanghai-old)
    FAN = 10  # 番 doublings (shanghai-old)


# code -> (English label, Chinese term). Codes are stable API: clients may translate by code.
CATALOG: dict[str, tuple[str, str]] = {
    # 花 sources (RULES §8)
    "FLOWER_TILE": ("flower tile", "花牌"),
    "BASE_FLOWERS": ("base flowers", "底注花"),
    "SUITED_EXPOSED_KONG": ("suited exposed kong", "明杠"),
    "SUITED_CONCEALED_KONG": ("suited concealed kong", "暗杠"),
    "WIND_PONG": ("wind pong", "风刻"),
    "WIND_EXPOSED_KONG": ("wind exposed kong", "风明杠"),
    "WIND_CONCEALED_KONG": ("wind concealed kong", "风暗杠"),
    "DRAGON_PONG": ("dragon pong", "字牌刻"),
    "DRAGON_EXPOSED_KONG": ("dragon exposed kong", "字牌明杠"),
    "DRAGON_CONCEALED_KONG": ("dragon concealed kong", "字牌暗杠"),
    "FLOWERS_TOTAL": ("flowers in all", "花数"),
    # the value (RULES §8 steps 1-5)
    "HAND": ("winning hand", "胡牌牌型"),
    "BASE_POINTS": ("base points", "底分"),
    "RAW_VALUE": ("raw value", "底分+花分"),
    "FIXED_VALUE": ("fixed value in lezi", "勒子牌"),
    "BIG_HANGING": ("big hanging: single wait with every other set laid down", "大吊车"),
    "HEAVENLY_WIN": ("heavenly win: dealer wins on the initial 14", "天胡"),
    "EARTHLY_WIN": ("earthly win: non-dealer wins in the first go-around", "地胡"),
    "FLOOR_TO_LEZI": ("raised to 1 lezi", "不足勒子按勒子算"),
    "CONCEALED_HAND": ("concealed hand", "门清"),
    "DICE_BONUS": ("dice bonus", "开宝"),
    "DRAWN_HAND_BONUS": ("drawn-hand bonus", "荒番"),
    "REPLACEMENT_WIN": ("win on a replacement draw", "杠开"),
    "ROB_KONG": ("robbing a kong", "抢杠"),
    "HAND_CAP": ("hand cap", "封顶勒子"),
    "TABLE_CAP": ("table cap per hand", "单局封顶"),
    "VALUE": ("value of one share", "一份"),
    # payments (RULES §9)
    "CHENGBAO_RELATION": ("liability relation", "承包"),
    "PAY_SELF_DRAW": ("pays a self-drawn win", "自摸"),
    "PAY_DISCARD": ("discarded the winning tile", "点炮"),
    "PAY_ROB_KONG": ("kong was robbed", "抢杠"),
    "PAY_CHENGBAO": ("liable player pays", "承包"),
    "PAY_FAN_CHENGBAO": ("claimer pays the liable player's win", "反承包"),
    "PAY_OUTSIDER_UNREADY": ("unready discarder into a liability relation", "未听牌点炮"),
    "PAY_OUTSIDER_READY": ("ready discarder into a liability relation", "听牌点炮"),
    "DOUBLE_CARD": ("Double card ×2", "加倍卡 ×2"),  # RULES-items §2
    "LOSS_CAP": ("loss cap per player", "单局封顶"),
    "GARDEN_LIMIT": ("pays no more than the chips left", "逛花园"),
    "ROUNDING": ("rounding remainder", "余数"),
    "TRANSFER": ("chips paid", "付"),
    # 户 of the 户/番 model (RULES-presets §13.A.5): HU_ + the [old_hu] option
    "OLD_READING": ("hand read as", "牌型"),
    "HU_WIN": ("winning hand", "和底"),
    "HU_SELF_DRAW": ("self-drawn winning tile", "自摸"),
    "HU_ONLY_WAIT": ("only wait", "独听"),
    "HU_FLOWER": ("bonus tiles", "坐花"),
    "HU_PAIR_DRAGON": ("pair of dragons", "箭将"),
    "HU_PAIR_SEAT_WIND": ("pair of the seat wind", "门风将"),
    "HU_PONG_SIMPLE_EXPOSED": ("exposed pong of simples", "明刻"),
    "HU_PONG_SIMPLE_CONCEALED": ("concealed pong of simples", "暗刻"),
    "HU_PONG_TERMINAL_EXPOSED": ("exposed pong of terminals or honors", "幺九明刻"),
    "HU_PONG_TERMINAL_CONCEALED": ("concealed pong of terminals or honors", "幺九暗刻"),
    "HU_KONG_SIMPLE_EXPOSED": ("exposed kong of simples", "明杠"),
    "HU_KONG_SIMPLE_CONCEALED": ("concealed kong of simples", "暗杠"),
    "HU_KONG_TERMINAL_EXPOSED": ("exposed kong of terminals or honors", "幺九明杠"),
    "HU_KONG_TERMINAL_CONCEALED": ("concealed kong of terminals or honors", "幺九暗杠"),
    "HU_TOTAL": ("hu in all", "户数"),
    "HU_ROUNDED": ("hu rounded up", "户数进位"),
    # 番 of the 户/番 model (§13.A.6): FAN_ + the [old_fan] option
    "FAN_MENQING": ("concealed hand", "门清"),
    "FAN_PONG_PONG": ("all pongs", "碰碰胡"),
    "FAN_HALF_FLUSH": ("half flush", "混一色"),
    "FAN_FULL_FLUSH": ("full flush", "清一色"),
    "FAN_ALL_HONORS": ("all honors", "字一色"),
    "FAN_SEVEN_PAIRS": ("seven pairs", "七对"),
    "FAN_BIG_HANGING": ("big hanging: single wait with four melds laid down", "大吊车"),
    "FAN_REPLACEMENT": ("win on a replacement draw", "杠上开花"),
    "FAN_LAST_TILE": ("win on the last tile of the wall", "海底捞月"),
    "FAN_ROB_KONG": ("robbing a kong", "抢杠"),
    "FAN_DRAGON_PONG": ("dragon pong", "箭刻"),
    "FAN_SEAT_WIND_PONG": ("pong of the seat wind", "门风刻"),
    "FAN_TOTAL": ("fan in all: hu doubled per fan", "番数"),
    "OLD_LIMIT": ("limit", "封顶"),
    # payments of the 户/番 model (§13.A.8-9)
    "PAY_CHUCHONG": ("discarded the winning tile: pays double", "出冲"),
    "PAY_CHUCHONG_OTHER": ("pays a single share of a discard win", "照付"),
    "PAY_BAOCHONG": ("discarder pays for the whole table", "包冲"),
    "PAY_BAOSHU": ("nine tiles laid down: the discarder pays all", "清一色九张落地包输"),
    "BAOSHU_READY": ("discarder's ready hand in fan", "三番叫胡"),
    # the 倍 model (RULES-presets §13.B.6)
    "BAIDA_READING": ("hand read as", "牌型"),
    "WILDCARD": ("wildcard stands for", "百搭"),
    "BONUS_TILE": ("bonus tile", "花"),
    "BEI_SHAPE": ("hand shape", "牌型倍数"),
    "BEI_FULL_FLUSH": ("full flush", "清一色"),
    "BEI_HALF_FLUSH": ("half flush", "混一色"),
    "BEI_KONG": ("kong doubles", "杠翻"),
    "BEI_LAST_TILE": ("win on the last tile of the wall", "海底捞月"),
    "BEI_KONG_REPLACEMENT": ("win on the replacement for a kong", "杠上花"),
    "BEI_NO_WILDCARD": ("no wildcard in the hand", "无百搭"),
    "BEI_TOTAL": ("multiplier in all", "倍数"),
    "BAIDA_CAP": ("hand cap", "封顶"),
    # drawn hands, escapes, bookkeeping (RULES §2, §9, §10)
    "DRAWN_HAND": ("drawn hand: nobody pays", "流局"),
    "ESCAPE_PENALTY": ("escape penalty", "逃跑罚分"),
    "ESCAPE_SHARE": ("share of the escape penalty", "罚分分配"),
    "HOUSE_SHARE": ("house share", "系统得分"),
    "HUANGFAN_DICE": ("dice add to the drawn-hand counter", "骰子荒番"),
    "HUANGFAN_THIS_HAND": ("drawn-hand counter of this hand", "荒番"),
    "NEXT_HUANGFAN": ("drawn-hand counter of the next hand", "下局荒番"),
    "NEXT_DEALER": ("next dealer", "下局庄家"),
}


class Item:
    """One line of the breakdown. ``seat`` is whom it concerns (winner, payer); ``other_seat``
    the counterparty (the payee of a payment). A value: compared and hashed by its fields.

    A plain class rather than a dataclass: compiled (mypyc), a dataclass keeps the Python
    ``__init__`` that dataclasses writes, and a settlement builds a dozen items or more."""

    __slots__ = ("amount", "code", "detail", "label", "label_zh", "other_seat", "seat", "unit")

    def __init__(
        self,
        code: str,
        label: str,
        label_zh: str,
        amount: int,
        unit: Unit,
        seat: int | None = None,
        other_seat: int | None = None,
        detail: str = "",
    ) -> None:
        self.code = code
        self.label = label
        self.label_zh = label_zh
        self.amount = amount
        self.unit = unit
        self.seat = seat
        self.other_seat = other_seat
        self.detail = detail

    def _fields(self) -> tuple[str, str, str, int, Unit, int | None, int | None, str]:
        return (
            self.code,
            self.label,
            self.label_zh,
            self.amount,
            self.unit,
            self.seat,
            self.other_seat,
            self.detail,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Item):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"Item(code={self.code!r}, label={self.label!r}, label_zh={self.label_zh!r}, "
            f"amount={self.amount!r}, unit={self.unit!r}, seat={self.seat!r}, "
            f"other_seat={self.other_seat!r}, detail={self.detail!r})"
        )

    def to_json(self) -> dict:
        d: dict = {
            "code": self.code,
            "label": self.label,
            "label_zh": self.label_zh,
            "amount": self.amount,
            "unit": self.unit.name.lower(),
        }
        if self.seat is not None:
            d["seat"] = self.seat
        if self.other_seat is not None:
            d["other_seat"] = self.other_seat
        if self.detail:
            d["detail"] = self.detail
        return d


def item(
    code: str,
    amount: int,
    unit: Unit,
    seat: int | None = None,
    other_seat: int | None = None,
    detail: str = "",
) -> Item:
    """An item named from :data:`CATALOG` (an unknown code is a programming error)."""
    label, label_zh = CATALOG[code]
    return Item(code, label, label_zh, amount, unit, seat, other_seat, detail)


def _amount_text(it: Item) -> str:
    if it.unit is Unit.MULTIPLIER:
        return f"×{it.amount}"
    if it.unit is Unit.SEAT:
        return f"seat {it.amount}"
    suffix = {
        Unit.HUA: " 花",
        Unit.POINTS: " pts",
        Unit.LEZI: " 勒子",
        Unit.SHARES: " 份",
        Unit.CHIPS: " chips",
        Unit.COUNTER: "",
        Unit.HU: " 户",
        Unit.FAN: " 番",
    }[it.unit]
    return f"{it.amount}{suffix}"


def render_table(items: Iterable[Item], title: str = "") -> str:
    """The breakdown as a plain-text table for people (``mahjong score --explain``)."""
    rows = [("seat", "item", "", "amount", "why")]
    for it in items:
        seat = "" if it.seat is None else str(it.seat)
        if it.other_seat is not None:
            seat = f"{seat}→{it.other_seat}"
        rows.append((seat, it.label, it.label_zh, _amount_text(it), it.detail))
    widths = [max(_width(r[i]) for r in rows) for i in range(4)]
    lines = [title] if title else []
    for r in rows:
        cells = [r[i] + " " * (widths[i] - _width(r[i])) for i in range(4)]
        lines.append("  ".join([*cells, r[4]]).rstrip())
    return "\n".join(lines)


def _width(text: str) -> int:
    """Display width: CJK characters take two columns."""
    return sum(2 if ord(ch) >= 0x2E80 else 1 for ch in text)
