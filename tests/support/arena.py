"""An arena (a test harness, not part of the gateway): bots play whole hands through the
gateway's own table engine, in-process.

The table session (dealer rotation, 荒番, timers on a manual clock) runs on the in-process
wall, rules and scoring adapters, so the hands are exactly those the gateway plays, with no
network. The bots' benchmark (engine speed with random bots, the planning bot's win rate) and
the bot tests use it.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.bots.policy import engine_policy
from services.gateway.domain.events.kinds import HandResult, TableEvent
from services.gateway.domain.session import Ports, Seat, SessionConfig, TableSession
from shared.ruleset import DEFAULT_RULESET, load_ruleset
from shared.table import Action
from tests.doubles.scheduler import ManualScheduler


@dataclass
class ArenaResult:
    """What a table of bots did: one settled result per hand, in order."""

    hands: list[HandResult] = field(default_factory=list)
    decisions: int = 0
    chips: list[int] = field(default_factory=lambda: [0, 0, 0, 0])

    def wins_of(self, seat: int) -> int:
        return sum(1 for h in self.hands if any(w.seat == seat for w in h.winners))

    @property
    def draws(self) -> int:
        return sum(1 for h in self.hands if h.outcome == "draw")


def play_table(
    bots: Mapping[int, Any] | Any,
    hands: int,
    *,
    seed: int = 0,
    ruleset: str = DEFAULT_RULESET,
    check: Callable[[Any, Action], None] | None = None,
    wrap: Callable[[Any], Any] | None = None,
    on_event: Callable[[TableEvent], None] | None = None,
) -> ArenaResult:
    """Play ``hands`` hands at one table of bots (one bot for all seats, or ``{seat: bot}``).

    ``check(pending, action)`` sees every decision (tests assert legality with it); ``wrap``
    turns the bots' policy into another (``policy(pending, hand)``: the collusion bench's
    partners, who see more than their seat); ``on_event`` sees every event."""
    rules = load_ruleset(ruleset)
    scheduler = ManualScheduler()
    result = ArenaResult()
    inner = engine_policy(bots)
    if wrap is not None:
        inner = wrap(inner)

    def policy(pending: Any, hand: Any) -> Action:
        action = inner(pending, hand)
        result.decisions += 1
        if check is not None:
            check(pending, action)
        return action

    sequence = itertools.count(1).__next__

    def emit(event: TableEvent) -> int:
        if on_event is not None:
            on_event(event)
        if isinstance(event, HandResult):
            result.hands.append(event)
        return sequence()

    session = TableSession(
        SessionConfig(
            table_id=f"arena-{seed}",
            ruleset=rules,
            ruleset_name=rules.name,
            overrides={},
            stake=1,
            max_hands=hands,
            chain_bot_decisions=True,  # the arena has its scheduler to itself
        ),
        [Seat(player_id=f"bot{i}", display_name=f"bot {i}", bot=True) for i in range(4)],
        ports=Ports(InProcessWall(), InProcessRules(), InProcessScoring()),
        scheduler=scheduler,
        emit=emit,
        report=lambda *_: None,
        policy=policy,
        rng=random.Random(seed),
    )
    session.start()
    scheduler.drain()
    result.chips = [s.chips for s in session.seats]
    return result
