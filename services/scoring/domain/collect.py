"""From what each payer owes to the chips that move: every scoring model's last step.

First the hand's 加倍卡 (``ctx.doubled_seats``) double the debts between a doubled seat and
another (:mod:`services.scoring.domain.double_card`); then each payer's debts (payee, chips)
are limited by the loss cap when the model has one (doubled for a payer who doubled) and by
its 逛花园 stack when the table plays 逛花园 (the lower limit wins), scaled down
proportionally as :mod:`services.scoring.domain.loss_cap` does; the result is the transfers,
the net chips per seat and the breakdown items of every limit and transfer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from services.scoring.domain.breakdown import Item, Unit, item
from services.scoring.domain.double_card import Debts, double_debts, payer_cap
from services.scoring.domain.garden import garden_limit
from services.scoring.domain.loss_cap import limit_payer
from services.scoring.domain.model import HandContext, Transfer
from services.scoring.domain.payments import Owed

__all__ = ["Debts", "collect", "owe", "transfer_items"]


def owe(o: Owed, value: int, stake: int, debts: Debts) -> Item:
    """Book ``o``'s shares of ``value`` points × ``stake`` in ``debts``; its breakdown item."""
    chips = o.shares * value * stake
    debts.setdefault(o.payer, []).append((o.payee, chips))
    return item(
        o.code,
        chips,
        Unit.CHIPS,
        o.payer,
        o.payee,
        detail=f"{o.shares} 份 × {value} pts × stake {stake}: {o.why}",
    )


def collect(
    owed_by_payer: Mapping[int, Sequence[tuple[int, int]]],
    ctx: HandContext,
    cap: int | None = None,
    cap_text: Callable[[], str] = str,
) -> tuple[list[Transfer], list[int], list[Item]]:
    """Double the debts of the hand's 加倍卡, then apply each payer's loss ``cap`` (chips;
    None: none, ``cap_text`` says what it is; doubled for a payer who doubled) and 逛花园
    limit; the transfers, net chips per seat and the doubling and limit items."""
    transfers: list[Transfer] = []
    payments = [0, 0, 0, 0]
    doubled = ctx.doubled_seats
    owed_by_payer, items = double_debts(owed_by_payer, doubled)
    for payer in sorted(owed_by_payer):
        amounts = list(owed_by_payer[payer])
        own_cap = payer_cap(cap, payer, doubled)
        limit, code, why = own_cap, "LOSS_CAP", cap_text
        if own_cap != cap:
            why = _doubled_cap_text(cap_text)
        stack = garden_limit(ctx.garden_stacks, payer)
        if stack is not None and (limit is None or stack < limit):
            limit, code, why = stack, "GARDEN_LIMIT", _chips_left_text(stack)
        if limit is not None:
            amounts, cap_items = limit_payer(payer, amounts, limit, code, why)
            items.extend(cap_items)
        for payee, chips in amounts:
            if chips:
                transfers.append(Transfer(payer, payee, chips))
                payments[payer] -= chips
                payments[payee] += chips
    return transfers, payments, items


def _chips_left_text(stack: int) -> Callable[[], str]:
    return lambda: f"has {stack} chips left"


def _doubled_cap_text(cap_text: Callable[[], str]) -> Callable[[], str]:
    return lambda: f"{cap_text()}, ×2 for the payer's 加倍卡"


def transfer_items(transfers: Sequence[Transfer]) -> list[Item]:
    """One TRANSFER item per movement of chips."""
    return [
        item(
            "TRANSFER",
            t.chips,
            Unit.CHIPS,
            t.payer,
            t.payee,
            detail=f"seat {t.payer} pays seat {t.payee}",
        )
        for t in transfers
    ]
