"""The room service fee (台费, RULES.md §9a) at the gateway: fixed per seat at the deal (a
player's seat pays, a bot's never), shown in the hand's result apart from payments, reported to
matchmaking with the hand, charged to a seat whose player left mid-hand, and kept by a replica
that takes the table over from its log."""

from __future__ import annotations

import random

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.domain.events import codec
from services.gateway.domain.events import kinds as K
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import (
    FINISHED,
    Ports,
    Seat,
    SessionConfig,
    TableSession,
    simple_policy,
)
from shared.ruleset import load_ruleset
from tests.doubles.scheduler import ManualScheduler
from tests.support.events import log_recorder

TIMERS = {"discard_ms": 1_000, "claim_ms": 500, "bot_delay_ms": 10, "auto_play_delay_ms": 10}
FEE = 5


def start(log: list, reports: list, fee: int = FEE, max_hands: int = 2, ports=None):
    sched = ManualScheduler()
    session = TableSession(
        SessionConfig(
            "t-fee",
            load_ruleset(),
            "shanghai-qiaoma",
            {},
            1,
            max_hands=max_hands,
            first_dealer=0,
            fee_per_hand=fee,
            **TIMERS,
        ),
        [Seat(player_id=f"p{i}" if i < 2 else f"bot-{i}", bot=i >= 2) for i in range(4)],
        ports=ports or Ports(InProcessWall(), InProcessRules(), InProcessScoring()),
        scheduler=sched,
        emit=log_recorder(log),
        report=lambda kind, data: reports.append((kind, data)),
        policy=simple_policy,
        rng=random.Random(3),
    )
    session.start()
    return session, sched


def events(log: list, kind: type) -> list:
    return [e.event for e in log if isinstance(e.event, kind)]


def test_each_hand_charges_the_players_seats_and_never_a_bots():
    log: list = []
    reports: list = []
    session, sched = start(log, reports)
    sched.drain()
    assert session.phase == FINISHED and session.hands_played == 2
    results = events(log, K.HandResult)
    assert [r.fees for r in results] == [(FEE, FEE, 0, 0)] * 2
    assert [h.fees for h in events(log, K.HandStarted)] == [(FEE, FEE, 0, 0)] * 2
    for r in results:  # apart from payments, which still sum with the house to zero
        assert sum(r.payments) + r.house == 0
    hands = [d for k, d in reports if k == "hand"]
    assert [d["fees"] for d in hands] == [[FEE, FEE, 0, 0]] * 2
    # the fee survives the log's JSON form, and a log without it reads as none
    again = codec.from_json("hand_result", codec.to_json(results[0]))
    assert again.fees == (FEE, FEE, 0, 0)


def test_a_table_without_a_fee_shows_none():
    log: list = []
    reports: list = []
    _, sched = start(log, reports, fee=0, max_hands=1)
    sched.drain()
    assert [r.fees for r in events(log, K.HandResult)] == [()]
    assert [d["fees"] for k, d in reports if k == "hand"] == [[]]


def test_leaving_mid_hand_still_pays_the_hands_fee():
    log: list = []
    reports: list = []
    session, sched = start(log, reports, max_hands=1)
    sched.run_due()
    assert session.hand is not None and session.hand.hand_id
    session.leave(0)
    sched.drain()
    escape, final = events(log, K.HandResult)
    assert escape.outcome == "escape" and escape.fees == ()  # the penalty only
    assert final.fees == (FEE, FEE, 0, 0)  # the hand's own result: seat 0 too
    hands = [d for k, d in reports if k == "hand"]
    assert "fees" not in hands[0] and hands[1]["fees"] == [FEE, FEE, 0, 0]


def test_a_replica_taking_the_table_over_keeps_its_fee():
    log: list = []
    reports: list = []
    ports = Ports(InProcessWall(), InProcessRules(), InProcessScoring())  # the store's wall
    _, sched = start(log, reports, ports=ports)
    sched.run_due()
    sched.advance(1)
    restored = restore_session(
        "t-fee",
        list(log),
        timers=TIMERS,
        ports=ports,
        scheduler=(sched2 := ManualScheduler()),
        emit=log_recorder(log),
        report=lambda kind, data: reports.append((kind, data)),
        policy=simple_policy,
    )
    assert restored.config.fee_per_hand == FEE
    assert restored.hand is not None and restored.hand.config.fees == (FEE, FEE, 0, 0)
    sched2.drain()
    assert restored.phase == FINISHED
    assert [r.fees for r in events(log, K.HandResult)] == [(FEE, FEE, 0, 0)] * 2
