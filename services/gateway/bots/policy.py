"""Bots as the table engine's policy: bot seats, 托管 (auto-play) and stand-ins for players who
left, in the gateway and in in-process play (tests, the arena, benchmarks).

The gateway's table session asks a policy ``policy(pending, hand)`` for a seat's action,
where ``pending`` holds the seat's options (own turn, claim or 换牌 tile swap) and the tile under
decision, and ``hand`` can give the rules' table snapshot. :func:`engine_policy` wraps bots into
such a policy; the bot sees only the seat's own view (:meth:`SeatView.from_snapshot`), never the
wall or another seat's concealed tiles. This is the one place bots meet the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.gateway.bots.planner import PlanningBot
from services.gateway.bots.view import SeatView
from services.gateway.domain.hand import HandEngine, Pending, SwapOptions
from services.gateway.domain.session import Policy
from shared.table import Action, OwnTurnOptions, TileSwap


def engine_policy(bots: Mapping[int, Any] | Any | None = None) -> Policy:
    """A policy from one bot for every seat, or ``{seat: bot}`` (seats left out get a planning
    bot); None: a planning bot everywhere. Build a bot by name with
    :func:`services.gateway.bots.make_bot`. A bot with ``needs_view = False`` (the random bot) is
    not given a view for its own turn or claims, which keeps the engine benchmark free of work a
    random choice does not need; a tile swap always gets the view (it picks concealed tiles)."""
    default = PlanningBot()
    if bots is None:
        by_seat: dict[int, Any] = {}
        default_bot = default
    elif isinstance(bots, Mapping):
        by_seat, default_bot = dict(bots), default
    else:
        by_seat, default_bot = {}, bots

    # Each seat's bot and whether it needs a view, looked up once here, not per decision.
    seats = tuple(
        (bot, getattr(bot, "needs_view", True))
        for bot in (by_seat.get(seat, default_bot) for seat in range(4))
    )

    def policy(pending: Pending, hand: HandEngine) -> Action | TileSwap:  # type: ignore[return]
        bot, needs_view = seats[pending.seat]
        options = pending.options
        if isinstance(options, OwnTurnOptions):
            view = seat_view(hand, pending.seat) if needs_view else None
            return bot.own_turn(view, options)
        if isinstance(options, SwapOptions):
            return TileSwap(tuple(bot.tile_swap(seat_view(hand, pending.seat), options.count)))
        view = seat_view(hand, pending.seat) if needs_view else None
        return bot.claim(view, options, pending.tile)

    return policy  # type: ignore[return-value]


def seat_view(hand: HandEngine, seat: int) -> SeatView:
    """The seat's own view of the hand in progress, discards as its clients see them."""
    return SeatView.from_snapshot(hand.snapshot(), seat, hand.discard_piles())
