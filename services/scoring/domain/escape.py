"""Escape or disconnect (逃跑或掉线) from a running hand (RULES §9, seed 000).

Penalty = ``payment.escape_penalty_base`` × stake × 底分 (一倍底分). **Decision**: 底分 in points
is the base part of every flower-scored hand's value, ``scoring.base_points`` +
``flowers.base`` (qiaoma 2 + 0; classic 0 + its 3 底注花), so presets that count their base as
底注花 still have a penalty. ``100 − escape_house_percent`` % (75%) of it goes to the other three
in equal whole chips, the rest (25% plus the rounding remainder) to the house. Under 逛花园 the
escaper pays at most the chips it has left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.scoring.domain.breakdown import Item, Unit, item
from services.scoring.domain.garden import stacks_after
from services.scoring.domain.model import HandContext, Settlement, SettlementKind, Transfer
from services.scoring.domain.rules import ScoringRules


@dataclass(frozen=True, slots=True)
class EscapeShares:
    penalty: int
    each: int  # chips to each of the other three
    house: int
    items: tuple[Item, ...]


def escape_penalty(r: ScoringRules, stake: int, base: int | None = None) -> int:
    """The full penalty in chips (before any 逛花园 limit); ``base`` is the model's 底分 in
    points (default the 敲麻 one, ``base_points`` + ``flowers.base``)."""
    if base is None:
        base = r.base_points + r.base_flowers
    return r.escape_penalty_base * stake * base


def split_escape(
    r: ScoringRules,
    stake: int,
    seat: int,
    stacks: Sequence[int] | None = None,
    base: int | None = None,
) -> EscapeShares:
    """The penalty of ``seat`` and how it is shared out (``base``: as :func:`escape_penalty`)."""
    if base is None:
        base = r.base_points + r.base_flowers
    penalty = escape_penalty(r, stake, base)
    items = [
        item(
            "ESCAPE_PENALTY",
            penalty,
            Unit.CHIPS,
            seat,
            detail=f"{r.escape_penalty_base} × stake {stake} × 底分 {base}",
        )
    ]
    if stacks is not None and stacks[seat] < penalty:
        items.append(
            item(
                "GARDEN_LIMIT",
                stacks[seat],
                Unit.CHIPS,
                seat,
                detail=f"has {stacks[seat]} chips left, owes {penalty}",
            )
        )
        penalty = stacks[seat]
    to_players = penalty * (100 - r.escape_house_percent) // 100
    each = to_players // 3
    house = penalty - 3 * each
    for step in (1, 2, 3):
        other = (seat + step) % 4
        items.append(
            item(
                "ESCAPE_SHARE",
                each,
                Unit.CHIPS,
                seat,
                other,
                detail=f"{100 - r.escape_house_percent}% of {penalty} in three equal whole parts",
            )
        )
    items.append(
        item(
            "HOUSE_SHARE",
            house,
            Unit.CHIPS,
            seat,
            detail=f"{r.escape_house_percent}% plus the rounding remainder",
        )
    )
    return EscapeShares(penalty, each, house, tuple(items))


def escape_settlement(
    ctx: HandContext,
    seat: int,
    shares: EscapeShares,
    tail: Sequence[Item],
    huangfan: int,
    next_huangfan: int,
) -> Settlement:
    """The settlement of an escape: the penalty paid out as ``shares`` says, the dealer deals
    again; ``tail`` are the bookkeeping items after the shares, ``huangfan`` and
    ``next_huangfan`` the 荒番 counter of this hand and the next."""
    payments = [shares.each] * 4
    payments[seat] = -shares.penalty
    transfers = [Transfer(seat, (seat + s) % 4, shares.each) for s in (1, 2, 3) if shares.each]
    if shares.house:
        transfers.append(Transfer(seat, None, shares.house))
    return Settlement(
        SettlementKind.ESCAPE,
        (),
        tuple(payments),
        shares.house,
        tuple(transfers),
        ctx.dealer,
        huangfan,
        next_huangfan,
        (*shares.items, *tail),
        stacks_after(ctx.garden_stacks, payments) if ctx.garden_stacks is not None else None,
    )
