"""Who pays a 百搭 winner (RULES-presets §13.B.7): a self-draw is the only win, and each of
the three others pays 1 share (value × stake). No 承包, no 包, no loss cap beyond the value
cap."""

from __future__ import annotations

from services.scoring.domain.payments import Owed

SHARES = 1  # §13.B.7 fixes one share each; the value options scale it


def owed_baida(winner: int) -> list[Owed]:
    return [
        Owed((winner + step) % 4, winner, SHARES, "PAY_SELF_DRAW", "self-drawn win")
        for step in (1, 2, 3)
    ]
