"""``chain_bot_decisions``: a table of bots whose decisions are chained in one scheduler
callback plays exactly the hands it plays with one callback per decision — same events, same
order — and needs far fewer callbacks. Seeded walls and bots, in-process ports."""

from __future__ import annotations

import random

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.bots import RandomBot
from services.gateway.bots.policy import engine_policy
from services.gateway.domain.session import Ports
from shared.ruleset import DEFAULT_RULESET
from tests.support.sessions import SeededWall, local_table, seats, session_config


def play(chain: bool, hands: int = 6) -> tuple[list[tuple[str, dict]], int]:
    table = local_table(
        session_config(
            "chain", ruleset=DEFAULT_RULESET, max_hands=hands, chain_bot_decisions=chain
        ),
        seats(),
        ports=Ports(SeededWall("chain"), InProcessRules(), InProcessScoring()),
        policy=engine_policy({s: RandomBot(100 + s) for s in range(4)}),
        rng=random.Random(7),  # the first dealer
    )
    callbacks = table.play_out()
    assert table.session.hands_played == hands
    return table.events, callbacks


def test_chained_bots_play_the_same_hands_with_fewer_callbacks():
    plain, plain_callbacks = play(chain=False)
    chained, chained_callbacks = play(chain=True)
    assert [k for k, _ in chained] == [k for k, _ in plain]
    assert chained == plain
    actions = sum(1 for k, _ in plain if k == "action")
    assert plain_callbacks > actions  # one callback per decision at least
    assert chained_callbacks < actions / 10  # a callback per hand, about
