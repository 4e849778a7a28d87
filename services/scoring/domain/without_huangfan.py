"""Wins, drawn hands and escapes under the scoring models that keep no 荒番 counter (``old``
and ``baida``, RULES-presets §13.1, §13.A.10, §13.B.8).

* A win's last steps: the debts paid under the 逛花园 limit when the table plays it (no loss
  cap: each model's limit caps a share), the transfers, the next dealer (RULES §2); the
  counter stays 0.
* Drawn hand (荒): nobody pays, the dealer deals again. No 荒番: the counter stays 0 and an
  input ``huangfan`` is ignored.
* Escape: penalty = ``payment.escape_penalty_base`` × stake × the model's 底分 (``old_hu.win``
  in old, ``baida_scoring.base_points`` in baida); 75% shared in whole chips by the other
  three, the rest to the house, as RULES §9 (:mod:`services.scoring.domain.escape`).
"""

from __future__ import annotations

from collections.abc import Sequence

from services.scoring.domain import bookkeeping as B
from services.scoring.domain.breakdown import Item, Unit, item
from services.scoring.domain.collect import Debts, collect, transfer_items
from services.scoring.domain.escape import escape_settlement, split_escape
from services.scoring.domain.garden import stacks_after
from services.scoring.domain.model import HandContext, Settlement, SettlementKind, WinnerResult
from services.scoring.domain.rules import scoring_rules
from services.scoring.domain.validate import check_context, check_seat
from shared.errors import InvalidArgument

MAX_CHIPS = 2**63 - 1  # a protobuf int64


def check_amount(amount: int, what: str) -> None:
    """Refuse an amount a 64-bit field cannot carry (options far beyond any real table)."""
    if amount > MAX_CHIPS:
        raise InvalidArgument(
            f"{what} is {amount}, more than a 64-bit amount: the ruleset's options are too large "
            "(set a limit)",
            field="options",
        )


def next_dealer_item(seat: int, why: str) -> Item:
    return item("NEXT_DEALER", seat, Unit.SEAT, seat, detail=why)


def value_lines(code: str, option: str, cap: int, raw: int, value: int, seat: int) -> list[Item]:
    """The value of one share: a ``code`` line when the cap (``option``, ``cap`` points)
    lowered ``raw`` to ``value``, then the VALUE line."""
    out = []
    if value < raw:
        out.append(item(code, cap, Unit.POINTS, seat, detail=f"{raw} → {value} ({option})"))
    out.append(item("VALUE", value, Unit.POINTS, seat, detail="points of one share (份)"))
    return out


def won_settlement(
    ctx: HandContext,
    results: Sequence[WinnerResult],
    debts: Debts,
    items: list[Item],
    from_seat: int | None,
) -> Settlement:
    """A won hand from each winner's result, the debts booked and the items so far."""
    transfers, payments, limit_items = collect(debts, ctx)
    for seat, chips in enumerate(payments):
        check_amount(abs(chips), f"seat {seat}'s chips")
    items.extend(limit_items)
    items.extend(transfer_items(transfers))
    winners = [r.seat for r in results]
    dealer, why = B.next_dealer_after_win(scoring_rules(ctx.ruleset), winners, from_seat)
    items.append(next_dealer_item(dealer, why))
    return Settlement(
        SettlementKind.WIN,
        tuple(results),
        tuple(payments),
        0,
        tuple(transfers),
        dealer,
        0,
        0,
        tuple(items),
        stacks_after(ctx.garden_stacks, payments) if ctx.garden_stacks is not None else None,
    )


def settle_draw(ctx: HandContext) -> Settlement:
    """A drawn hand: no payments, the dealer deals again, no 荒番."""
    check_context(ctx, needs_dice=False)
    items = (
        item("DRAWN_HAND", 0, Unit.CHIPS, detail="the wall ran out with no winner; no 荒番"),
        next_dealer_item(ctx.dealer, "a drawn hand: the dealer deals again"),
    )
    return Settlement(
        SettlementKind.DRAW, (), (0, 0, 0, 0), 0, (), ctx.dealer, 0, 0, items, ctx.garden_stacks
    )


def settle_escape(ctx: HandContext, escaped: object, base: int) -> Settlement:
    """Seat ``escaped`` (checked here) escapes: the penalty with 底分 ``base`` points, shared
    out; no 荒番."""
    check_context(ctx, needs_dice=False)
    seat = check_seat(escaped, "escaped seat")
    shares = split_escape(scoring_rules(ctx.ruleset), ctx.stake, seat, ctx.garden_stacks, base)
    tail = [next_dealer_item(ctx.dealer, "the hand was abandoned: the dealer deals again")]
    return escape_settlement(ctx, seat, shares, tail, 0, 0)
