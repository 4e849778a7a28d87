"""One bot policy for the engine (services.gateway.bots.policy.engine_policy): it answers every
kind of decision, the 换牌 tile swap included, for any bot, one for all seats or by seat."""

from __future__ import annotations

import importlib
import random

import pytest

from services.gateway.bots import RandomBot, engine_policy, make_bot
from services.gateway.domain.session import FINISHED
from shared import tiles as T
from shared.table import TileSwap
from tests.support.sessions import local_table, seats, session_config


def play(policy, overrides, hands=2):
    table = local_table(
        session_config("t-pol", overrides, max_hands=hands, first_dealer=0),
        seats(),
        policy=policy,
        rng=random.Random(5),
    )
    table.play_out()
    return table.session, table.events


@pytest.mark.parametrize("bot", ["planner", "random"])
def test_engine_policy_swaps_tiles_for_every_bot(bot):
    seen: list[TileSwap] = []
    inner = engine_policy(make_bot(bot, seed=4))

    def policy(p, hand):
        action = inner(p, hand)
        if isinstance(action, TileSwap):
            seen.append(action)
        return action

    session, events = play(policy, {"table.tile_swap": "true"})
    assert session.phase == FINISHED
    swaps = [d for k, d in events if k == "tiles_swapped"]
    assert len(seen) == 8 and len(swaps) == 8
    assert all(len(T.parse(d["buried"])) == 5 for d in swaps)


def test_engine_policy_by_seat():
    asked: dict[int, int] = {}

    class Counting(RandomBot):
        def __init__(self, seat):
            super().__init__(seat)
            self.seat = seat

        def claim(self, view, options, tile):
            asked[self.seat] = asked.get(self.seat, 0) + 1
            return super().claim(view, options, tile)

        def own_turn(self, view, options):
            asked[self.seat] = asked.get(self.seat, 0) + 1
            return super().own_turn(view, options)

    session, _ = play(engine_policy({s: Counting(s) for s in range(4)}), {}, hands=1)
    assert session.phase == FINISHED and set(asked) == {0, 1, 2, 3}


def test_the_second_policy_module_is_gone():
    with pytest.raises(ImportError):
        importlib.import_module("services.gateway.domain.policy")
