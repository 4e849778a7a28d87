"""Per-player loss cap (单局封顶, RULES §9) and the proportional scaling it shares with 逛花园.

No player loses more than ``payment.loss_cap_lezi`` 勒子 × ``lezi_points`` × stake in one hand.
When a player owes more, each of that player's payments is scaled down proportionally to
whole chips (rounded down), and the chips the rounding leaves over go to the winner first in
turn order after the payer, so the payer pays exactly the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from services.scoring.domain.breakdown import Item, Unit, item
from services.scoring.domain.rules import ScoringRules


def loss_cap_chips(r: ScoringRules, stake: int) -> int | None:
    """The most one player loses in a hand, in chips; None when the preset has no cap."""
    return r.loss_cap_lezi * r.lezi * stake if r.loss_cap_lezi else None


def scale_to_limit(
    payer: int, amounts: Sequence[tuple[int, int]], limit: int
) -> tuple[list[tuple[int, int]], int, int | None]:
    """Scale ``payer``'s (payee, chips) payments, one per payee, so they add up to ``limit``.

    Returns the scaled payments (same order), the rounding remainder and the payee who got it
    (None when nothing was left over). Payments already within the limit come back unchanged.
    """
    total = sum(c for _, c in amounts)
    if total <= limit:
        return list(amounts), 0, None
    scaled = [(p, c * limit // total) for p, c in amounts]
    remainder = limit - sum(c for _, c in scaled)
    if not remainder:
        return scaled, 0, None
    first = min((p for p, c in amounts if c > 0), key=lambda p: (p - payer) % 4)
    return [(p, c + remainder if p == first else c) for p, c in scaled], remainder, first


def limit_payer(
    payer: int,
    amounts: Sequence[tuple[int, int]],
    limit: int,
    code: str,
    why: Callable[[], str],
) -> tuple[list[tuple[int, int]], list[Item]]:
    """:func:`scale_to_limit` with its breakdown items (``code`` LOSS_CAP or GARDEN_LIMIT;
    ``why`` gives the reason text, built only when the limit bites)."""
    total = sum(c for _, c in amounts)
    if total <= limit:
        return list(amounts), []
    scaled, remainder, to = scale_to_limit(payer, amounts, limit)
    items = [
        item(
            code,
            limit,
            Unit.CHIPS,
            payer,
            detail=f"{why()}: owes {total}, pays {limit}; "
            "each payment scaled proportionally, rounded down",
        )
    ]
    if remainder:
        items.append(
            item(
                "ROUNDING",
                remainder,
                Unit.CHIPS,
                payer,
                to,
                detail="left over by rounding; to the winner first in turn order after the payer",
            )
        )
    return scaled, items
