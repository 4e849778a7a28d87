"""Who decides for a seat nobody is playing: bot seats, 托管 (auto-play) and seats whose player
left. The built-in planning bot (services.gateway.bots) is used when it is present; otherwise
:func:`services.gateway.domain.session.simple_policy` (win when offered, 敲 as soon as
possible, else discard the drawn tile / pass)."""

from __future__ import annotations

from services.gateway.domain.hand import HandEngine, Pending, SwapOptions, TileSwap
from services.gateway.domain.session import Policy, simple_policy
from shared.table import Action, OwnTurnOptions


def bot_policy(name: str = "planner", seed: int | None = None) -> Policy:
    """A policy backed by one of the built-in bots (``planner`` or ``random``)."""
    try:
        from services.gateway.bots import SeatView, make_bot
    except ImportError:  # the bots package is optional for the engine
        return simple_policy
    bot = make_bot(name, seed)

    def decide(p: Pending, hand: HandEngine) -> Action:
        seat_view = SeatView.from_snapshot(hand.snapshot(), p.seat)
        if isinstance(p.options, SwapOptions):
            return TileSwap(tuple(bot.tile_swap(seat_view, p.options.count)))
        if isinstance(p.options, OwnTurnOptions):
            return bot.own_turn(seat_view, p.options)
        assert p.tile is not None
        return bot.claim(seat_view, p.options, p.tile)

    return decide
