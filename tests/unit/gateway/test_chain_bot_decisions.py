"""``chain_bot_decisions``: a table of bots whose decisions are chained in one scheduler
callback plays exactly the hands it plays with one callback per decision — same events, same
order — and needs far fewer callbacks. Seeded walls and bots, in-process ports."""

from __future__ import annotations

import hashlib
import random

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.bots import RandomBot
from services.gateway.bots.policy import engine_policy
from services.gateway.domain.clock import ManualScheduler
from services.gateway.domain.ports import WallHand
from services.gateway.domain.session import Ports, Seat, SessionConfig, TableSession
from services.wall.record import HandWall
from shared.ruleset import load_ruleset, resolve_ruleset


class SeededWall(InProcessWall):
    """The wall domain with a seed derived from the hand's request id."""

    def new_hand(self, ruleset_name, overrides, dealer, request_id) -> WallHand:
        ruleset = resolve_ruleset(ruleset_name, overrides)
        seed = hashlib.sha256(f"chain/{request_id}".encode()).digest()
        hand = HandWall.create(
            "h_" + seed.hex()[:16], seed, dealer, reserved=ruleset.table.reserved_tiles
        )
        self.hands[hand.hand_id] = hand
        return WallHand(hand.hand_id, tuple(hand.dice), hand.commitment.hex(), 144)


def play(chain: bool, hands: int = 6) -> tuple[list[tuple[str, dict]], int]:
    events: list[tuple[str, dict]] = []

    def emit(kind, data):
        events.append((kind, data))
        return len(events)

    ruleset = load_ruleset()
    scheduler = ManualScheduler()
    session = TableSession(
        SessionConfig(
            "chain",
            ruleset,
            ruleset.name,
            {},
            1,
            max_hands=hands,
            chain_bot_decisions=chain,
        ),
        [Seat(player_id=f"b{i}", bot=True) for i in range(4)],
        ports=Ports(SeededWall(), InProcessRules(), InProcessScoring()),
        scheduler=scheduler,
        emit=emit,
        report=lambda *_: None,
        policy=engine_policy({s: RandomBot(100 + s) for s in range(4)}),
        rng=random.Random(7),  # the first dealer
    )
    session.start()
    callbacks = scheduler.drain()
    assert session.hands_played == hands
    return events, callbacks


def test_chained_bots_play_the_same_hands_with_fewer_callbacks():
    plain, plain_callbacks = play(chain=False)
    chained, chained_callbacks = play(chain=True)
    assert [k for k, _ in chained] == [k for k, _ in plain]
    assert chained == plain
    actions = sum(1 for k, _ in plain if k == "action")
    assert plain_callbacks > actions  # one callback per decision at least
    assert chained_callbacks < actions / 10  # a callback per hand, about
