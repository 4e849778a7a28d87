"""Taking a table over from its event log: the restored session equals the one that wrote the
log, plays on from there, and every hand of the combined log verifies."""

from __future__ import annotations

import random

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.domain.clock import ManualScheduler
from services.gateway.domain.replay import export_hand
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import (
    FINISHED,
    PLAYING,
    Ports,
    Seat,
    SessionConfig,
    TableSession,
    simple_policy,
)
from services.gateway.verify import verify_hand
from shared.ruleset import load_ruleset
from tests.support.events import json_log, log_recorder

TIMERS = {"discard_ms": 1_000, "claim_ms": 500, "bot_delay_ms": 10, "auto_play_delay_ms": 10}


def start(ports, log, max_hands=3):
    sched = ManualScheduler()
    session = TableSession(
        SessionConfig(
            "t-restore",
            load_ruleset(),
            "shanghai-qiaoma",
            {},
            1,
            max_hands=max_hands,
            first_dealer=0,
            **TIMERS,
        ),
        [Seat(player_id=f"p{i}", bot=i > 0) for i in range(4)],
        ports=ports,
        scheduler=sched,
        emit=log_recorder(log),
        report=lambda kind, data: None,
        policy=simple_policy,
        rng=random.Random(2),
    )
    session.start()
    return session, sched


def restore(ports, log):
    sched = ManualScheduler()
    session = restore_session(
        "t-restore",
        list(log),
        timers=TIMERS,
        ports=ports,
        scheduler=sched,
        emit=log_recorder(log),
        report=lambda kind, data: None,
        policy=simple_policy,
    )
    return session, sched


def same(a: TableSession, b: TableSession) -> None:
    assert (a.phase, a.dealer, a.huangfan, a.hands_played) == (
        b.phase,
        b.dealer,
        b.huangfan,
        b.hands_played,
    )
    assert [(s.chips, s.left, s.auto_play, s.timeouts_in_row) for s in a.seats] == [
        (s.chips, s.left, s.auto_play, s.timeouts_in_row) for s in b.seats
    ]
    assert a.hand.copy_state() == b.hand.copy_state()
    assert a.hand.hand_id == b.hand.hand_id and a.hand.drawn == b.hand.drawn


def test_a_restored_table_equals_the_original_and_plays_on():
    ports = Ports(InProcessWall(), InProcessRules(), InProcessScoring())
    log: list = []
    original, sched = start(ports, log)

    # seat 0 never acts: timeouts, then 托管; stop in the middle of the second hand.
    def discards_in_hand() -> int:
        return sum(len(s.discards) for s in original.hand.seats)

    for _ in range(20_000):
        if original.hands_played >= 1 and discards_in_hand() >= 10 and original.hand.pending:
            break
        sched.advance(10)
    assert original.phase == PLAYING, (original.phase, original.hands_played)
    n = len(log)
    restored, sched2 = restore(ports, log)
    assert len(log) == n, "restoring wrote nothing already in the log"
    same(original, restored)
    for _ in range(100_000):
        if restored.phase == FINISHED:
            break
        sched2.advance(250)
    assert restored.phase == FINISHED and restored.hands_played == 3
    seqs = [e[0] for e in log]
    assert seqs == list(range(1, len(log) + 1))
    header = {"table_id": "t-restore", "ruleset": "shanghai-qiaoma", "overrides": {}, "stake": 1}
    for hid in [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]:
        verdict = verify_hand(export_hand(header, log, hid))
        assert verdict.ok, verdict.problems


def test_an_escape_is_restored_and_its_hand_still_verifies():
    ports = Ports(InProcessWall(), InProcessRules(), InProcessScoring())
    log: list = []
    original, sched = start(ports, log, max_hands=2)
    sched.run_due()
    original.leave(0)
    sched.advance(1)
    restored, sched2 = restore(ports, log)
    same(original, restored)
    assert restored.seats[0].left and restored.huangfan == 0
    sched2.drain()
    assert restored.phase == FINISHED
    header = {"table_id": "t-restore", "ruleset": "shanghai-qiaoma", "overrides": {}, "stake": 1}
    for hid in [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]:
        verdict = verify_hand(export_hand(header, log, hid))
        assert verdict.ok, verdict.problems
