"""What the dice of a hand decide beyond the wall's break: 开宝 and 骰子荒番 (RULES §8, §10).

The gateway announces both when a hand starts; scoring counts them when it settles.
"""

from __future__ import annotations


def is_kaibao(dice: tuple[int, int] | None) -> bool:
    """开宝 dice bonus: the hand's dice show a double, or 1 and 4 (点数一样、点数为1、4)."""
    if dice is None:
        return False
    a, b = dice
    return a == b or {a, b} == {1, 4}


def dice_huangfan_bonus(dice: tuple[int, int] | None) -> int:
    """骰子荒番 (seed 001): (1,1) or (4,4) add 2; (1,n), (4,n) and any other double add 1."""
    if dice is None:
        return 0
    a, b = dice
    if a == b and a in (1, 4):
        return 2
    if a == b or 1 in dice or 4 in dice:
        return 1
    return 0
