"""Settling a hand: a win, a drawn hand, an escape, by the scoring model of the hand's ruleset
(:mod:`services.scoring.domain.models`). Each model checks the whole request first, then
computes; nothing has side effects, so a rejected request settles nothing."""

from __future__ import annotations

from services.scoring.domain.model import HandContext, Settlement, WinInput
from services.scoring.domain.models import model_of


def settle_win(w: WinInput) -> Settlement:
    """Settle a won hand: each winner's value, who pays whom, the next dealer (and, under the
    敲麻 model, the 荒番 counter), with the itemized breakdown."""
    return model_of(w.context.ruleset).settle_win(w)


def settle_draw(ctx: HandContext) -> Settlement:
    """A drawn hand (流局/荒): nobody pays, the dealer deals again."""
    return model_of(ctx.ruleset).settle_draw(ctx)


def settle_escape(ctx: HandContext, seat: object) -> Settlement:
    """A player escapes or disconnects from a running hand: the penalty, shared out. ``seat``
    is checked (a seat 0-3) by the model, so it arrives as the caller gave it."""
    return model_of(ctx.ruleset).settle_escape(ctx, seat)
