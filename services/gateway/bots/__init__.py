"""Built-in bots of the gateway (pure domain: no gRPC, no I/O).

A bot decides for one seat from that seat's own view (:class:`SeatView`: own concealed tiles,
melds and flowers; every seat's discards, melds, flowers and 敲 flags; tiles left) and the legal
options the rules offered for the decision (:class:`shared.table.OwnTurnOptions` or
:class:`shared.table.ClaimOptions`). It returns one :mod:`shared.table` action:

    bot.own_turn(view, options) -> Discard | DeclareReady | ConcealedKong | AddedKong | Win
    bot.claim(view, options, tile) -> Win | Pong | ExposedKong | Chow | Pass
    bot.tile_swap(view, count) -> tiles to bury (换牌)

* :class:`PlanningBot` (``"planner"``) plays to win: it chooses a plan among 碰碰胡, 清/混一色
  and 风一色/风碰 (:mod:`.plan`), discards away from the plan, claims only what fits it,
  declares 敲 as soon as it waits and wins whenever it can. The gateway uses it for bot seats
  and 托管 (auto-play).
* :class:`RandomBot` (``"random"``) picks uniformly among the legal actions, seeded.

:func:`make_bot` builds one by name; :func:`engine_policy` wraps bots as the table engine's
policy (``policy(pending, hand)``) for in-process seats.
"""

from __future__ import annotations

from services.gateway.bots.plan import Plan, PlanChoice, PlanKind, choose_plan
from services.gateway.bots.planner import PlanningBot, plan_of, plan_summary
from services.gateway.bots.policy import engine_policy
from services.gateway.bots.random_bot import RandomBot, legal_actions
from services.gateway.bots.view import SeatView, unseen_counts

BOT_NAMES = ("planner", "random")


def make_bot(name: str = "planner", seed: int | None = None) -> PlanningBot | RandomBot:
    """A bot by name: ``planner`` or ``random`` (seeded)."""
    if name == "planner":
        return PlanningBot()
    if name == "random":
        return RandomBot(seed)
    raise ValueError(f"unknown bot {name!r}; known: {', '.join(BOT_NAMES)}")


__all__ = [
    "BOT_NAMES",
    "Plan",
    "PlanChoice",
    "PlanKind",
    "PlanningBot",
    "RandomBot",
    "SeatView",
    "choose_plan",
    "engine_policy",
    "legal_actions",
    "make_bot",
    "plan_of",
    "plan_summary",
    "unseen_counts",
]
