"""Bots as the table engine's policy (in-process play: bot seats, 托管, stand-ins).

The gateway's table session asks a policy ``policy(pending, hand)`` for a seat's action,
where ``pending`` holds the seat's options (own turn or claim) and the tile under decision, and
``hand`` can give the rules' table snapshot. :func:`engine_policy` wraps bots into such a policy;
the bot sees only the seat's own view (:meth:`SeatView.from_snapshot`), never the wall or
another seat's concealed tiles.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from services.gateway.bots.planner import PlanningBot
from services.gateway.bots.view import SeatView
from shared.table import Action, OwnTurnOptions


def engine_policy(
    bots: Mapping[int, Any] | Any | None = None,
) -> Callable[[Any, Any], Action]:
    """A policy from one bot for every seat, or ``{seat: bot}`` (seats left out get a planning
    bot). A bot with ``needs_view = False`` (the random bot) is not given a view at all, which
    keeps the engine benchmark free of work a random choice does not need."""
    default = PlanningBot()
    if bots is None:
        by_seat: dict[int, Any] = {}
        default_bot = default
    elif isinstance(bots, Mapping):
        by_seat, default_bot = dict(bots), default
    else:
        by_seat, default_bot = {}, bots

    def policy(pending: Any, hand: Any) -> Action:
        bot = by_seat.get(pending.seat, default_bot)
        view = (
            SeatView.from_snapshot(hand.snapshot(), pending.seat)
            if getattr(bot, "needs_view", True)
            else None
        )
        options = pending.options
        if isinstance(options, OwnTurnOptions):
            return bot.own_turn(view, options)
        return bot.claim(view, options, pending.tile)

    return policy
