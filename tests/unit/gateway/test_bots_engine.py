"""Bots seated in the gateway's in-process engine (the arena) play whole hands legally."""

from __future__ import annotations

import pytest

from services.gateway.bots import PlanningBot, RandomBot, legal_actions
from tests.support.arena import play_table


def assert_legal(pending, action):
    assert action in legal_actions(pending.options), (pending.options, action)


@pytest.mark.parametrize("seed", [1, 2])
def test_planning_bots_play_whole_hands_legally(seed):
    result = play_table(PlanningBot(), 3, seed=seed, check=assert_legal)
    assert len(result.hands) == 3
    assert result.decisions > 0
    for hand in result.hands:
        assert sum(hand.payments) + hand.house == 0
    assert sum(result.chips) == -sum(h.house for h in result.hands)


def test_random_bots_play_whole_hands_legally():
    result = play_table(RandomBot(9), 3, seed=3, check=assert_legal)
    assert len(result.hands) == 3


def test_planner_against_random_bots_wins_some_hands():
    bots = {0: PlanningBot(), 1: RandomBot(1), 2: RandomBot(2), 3: RandomBot(3)}
    result = play_table(bots, 12, seed=5, check=assert_legal)
    assert len(result.hands) == 12
    # random bots almost never complete an allowed hand; the planner regularly does
    assert result.wins_of(0) >= 3
    assert result.wins_of(0) > max(result.wins_of(s) for s in (1, 2, 3))


def test_planning_bots_play_the_classic_preset_legally():
    result = play_table(PlanningBot(), 2, seed=4, ruleset="shanghai-classic", check=assert_legal)
    assert len(result.hands) == 2
