"""Bots seated in the gateway's in-process engine play whole hands with only legal actions."""

from __future__ import annotations

import random

import pytest

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.bots import PlanningBot, RandomBot, engine_policy, legal_actions
from services.gateway.domain.clock import ManualScheduler
from services.gateway.domain.session import Ports, Seat, SessionConfig, TableSession
from shared.ruleset import load_ruleset


def play(bots, hands: int, seed: int):
    ruleset = load_ruleset("shanghai-qiaoma")
    scheduler = ManualScheduler()
    inner = engine_policy(bots)
    decisions = []

    def checked(view, pending, hand):
        action = inner(view, pending, hand)
        decisions.append((pending.seat, action))
        assert action in legal_actions(pending.options), (pending.options, action)
        return action

    results = []

    def emit(kind, data):
        emit.seq += 1
        if kind == "hand_result":
            results.append(data)
        return emit.seq

    emit.seq = 0
    session = TableSession(
        SessionConfig(
            table_id="t-bots",
            ruleset=ruleset,
            ruleset_name=ruleset.name,
            overrides={},
            stake=1,
            max_hands=hands,
            first_dealer=0,
        ),
        [Seat(player_id=f"bot{i}", bot=True) for i in range(4)],
        ports=Ports(InProcessWall(), InProcessRules(), InProcessScoring()),
        scheduler=scheduler,
        emit=emit,
        report=lambda *_: None,
        policy=checked,
        rng=random.Random(seed),
    )
    session.start()
    scheduler.drain()
    return session, results, decisions


@pytest.mark.parametrize("seed", [1, 2])
def test_planning_bots_play_whole_hands_legally(seed):
    session, results, decisions = play(PlanningBot(), 3, seed)
    assert session.hands_played == 3
    assert len(results) == 3
    assert decisions
    for r in results:
        assert sum(r["payments"]) + r["house"] == 0


def test_planner_against_random_bots_wins_some_hands():
    bots = {0: PlanningBot(), 1: RandomBot(1), 2: RandomBot(2), 3: RandomBot(3)}
    session, results, _ = play(bots, 12, 5)
    assert session.hands_played == 12
    wins = [r for r in results if any(w["seat"] == 0 for w in r["winners"])]
    # random bots almost never complete an allowed hand; the planner regularly does
    assert len(wins) >= 3
