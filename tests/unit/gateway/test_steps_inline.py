"""``TableSession.steps_inline``: a player's action and the engine steps it leads to (claim
options, the next draw and its prompt) are one step of the table — emitted before the call
returns, with nothing left for the scheduler — where without it the action alone is emitted
and the rest waits for a scheduler callback. A refused action changes nothing. Seeded walls
and bots, in-process ports, a manual clock."""

from __future__ import annotations

import random

import pytest

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.bots import RandomBot
from services.gateway.bots.policy import engine_policy
from services.gateway.domain.events import kinds as K
from services.gateway.domain.session import Ports
from shared.errors import FailedPrecondition
from shared.ruleset import DEFAULT_RULESET
from shared.table import Discard
from tests.support.sessions import SeededWall, local_table, seats, session_config

ACTION = [K.ActionTaken, K.TileDiscarded]  # a discard's own events


def own_turn_of_the_person():
    """A table of one person (seat 0) and three bots, run until the person's own turn."""
    table = local_table(
        session_config(
            "inline", ruleset=DEFAULT_RULESET, discard_ms=60_000, claim_ms=60_000, bot_delay_ms=10
        ),
        seats(humans=1),
        ports=Ports(SeededWall("inline"), InProcessRules(), InProcessScoring()),
        policy=engine_policy({s: RandomBot(100 + s) for s in range(1, 4)}),
        rng=random.Random(7),
    )
    table.session.start()
    for _ in range(10_000):
        hand = table.session.hand
        p = hand.pending.get(0) if hand is not None else None
        if p is not None and p.kind == K.OWN_TURN:
            return table
        table.scheduler.advance(10)
    raise AssertionError("the person was never prompted")


def test_an_action_and_the_steps_after_it_are_emitted_before_the_call_returns():
    table = own_turn_of_the_person()
    session, before = table.session, len(table.typed)
    with session.steps_inline():
        session.act(0, session.hand.default_action(0))
    new = table.typed[before:]
    assert [type(e) for e in new[:2]] == ACTION and new[1].seat == 0
    # what follows a discard: the claim prompts, or the next seat's draw and its prompt
    assert any(isinstance(e, K.Prompt | K.TileDrawn) for e in new[2:]), new
    assert table.scheduler.run_due() == 0  # nothing of it was left to the scheduler


def test_without_it_the_steps_after_an_action_wait_for_the_scheduler():
    table = own_turn_of_the_person()
    session, before = table.session, len(table.typed)
    session.act(0, session.hand.default_action(0))
    assert [type(e) for e in table.typed[before:]] == ACTION
    assert table.scheduler.run_due() >= 1
    assert any(isinstance(e, K.Prompt | K.TileDrawn) for e in table.typed[before + 2 :])


def test_a_refused_action_changes_nothing_and_leaves_nothing_queued():
    table = own_turn_of_the_person()
    session, before = table.session, len(table.typed)
    held = set(session.hand.seats[0].concealed_tiles())
    absent = next(t for t in range(1, 35) if t not in held)
    with pytest.raises(FailedPrecondition), session.steps_inline():
        session.act(0, Discard(absent))
    assert len(table.typed) == before
    assert table.scheduler.run_due() == 0
    assert session.inline_steps is None
    assert session.hand.pending[0].kind == K.OWN_TURN  # still the person's decision
