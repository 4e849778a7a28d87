"""Taking a table over from its event log: the restored session equals the one that wrote the
log, plays on from there, and every hand of the combined log verifies."""

from __future__ import annotations

import random

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.domain.replay import export_hand
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import (
    FINISHED,
    HALTED,
    PLAYING,
    Ports,
    Seat,
    SessionConfig,
    TableSession,
    simple_policy,
)
from services.gateway.verify import verify_hand
from shared.errors import InvalidArgument, Unavailable
from shared.ruleset import load_ruleset
from tests.doubles.scheduler import ManualScheduler
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


def restore(ports, log, table_id: str = "t-restore"):
    sched = ManualScheduler()
    session = restore_session(
        table_id,
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


class OnceWall(InProcessWall):
    """A wall that, like the wall service, refuses a NewHand request id asked again with
    another dealer."""

    def __init__(self) -> None:
        super().__init__()
        self.dealers: dict[str, int] = {}

    def new_hand(self, ruleset_name, overrides, dealer, request_id):
        first = self.dealers.setdefault(request_id, dealer)
        if first != dealer:
            raise InvalidArgument(f"request id {request_id!r} started a hand with dealer {first}")
        return super().new_hand(ruleset_name, overrides, dealer, request_id)


def test_a_table_taken_over_before_its_first_hand_deals_from_the_same_seat():
    """The first dealer is drawn at random unless asked for. An owner that dies after asking
    the wall for the first hand but before logging it leaves a log of TableStarted alone; the
    replica taking over must ask for the same hand (the same dealer), or the wall refuses it
    and the table halts."""
    for seed in range(8):
        wall = OnceWall()
        ports = Ports(wall, InProcessRules(), InProcessScoring())
        first_sched = ManualScheduler()
        log: list = []
        keep = log_recorder(log)

        def emit(ev, keep=keep):
            if ev.KIND == "hand_started":  # the owner dies before it reaches the log
                raise Unavailable("the store is gone")
            return keep(ev)

        original = TableSession(
            SessionConfig("t-first", load_ruleset(), "shanghai-qiaoma", {}, 1, max_hands=1),
            [Seat(player_id=f"b{i}", bot=True) for i in range(4)],
            ports=ports,
            scheduler=first_sched,
            emit=emit,
            report=lambda kind, data: None,
            policy=simple_policy,
            rng=random.Random(seed),
        )
        original.announce()
        original.begin()
        for _ in range(100):  # until it asked the wall for the hand (its retries: never)
            if wall.dealers:
                break
            first_sched.advance(10)
        assert list(wall.dealers.values()) == [original.dealer]
        assert [e.event.KIND for e in log] == ["table_started"]
        restored, sched = restore(ports, log, "t-first")
        for _ in range(100_000):
            if restored.phase in (FINISHED, HALTED):
                break
            sched.advance(250)
        assert restored.phase == FINISHED, (seed, restored.phase)
        started = next(e.event for e in log if e.event.KIND == "hand_started")
        assert started.dealer == original.dealer


class DiesAtSecondDeal(InProcessWall):
    """The owner's last call: the second hand's Deal, which never answers."""

    def __init__(self) -> None:
        super().__init__()
        self.deals = 0

    def deal(self, hand_id):
        self.deals += 1
        if self.deals == 2:
            raise Unavailable("the owner died waiting for the deal")
        return super().deal(hand_id)


def test_a_table_taken_over_between_its_hand_start_and_the_deal_plays_on():
    """The owner logged HandStarted, then died in the Deal call that follows: the replica
    taking over has the hand's start but no deal in the log; it deals the hand from the wall
    and plays on, and the hand verifies."""
    wall = DiesAtSecondDeal()
    log: list = []
    _, sched = start(Ports(wall, InProcessRules(), InProcessScoring()), log, max_hands=2)
    for _ in range(20_000):
        if wall.deals >= 2:
            break
        sched.advance(10)
    assert log[-1].event.KIND == "hand_started" and log[-1].event.hand_number == 2
    restored, sched2 = restore(Ports(wall, InProcessRules(), InProcessScoring()), log)
    for _ in range(100_000):
        if restored.phase in (FINISHED, HALTED):
            break
        sched2.advance(250)
    assert restored.phase == FINISHED and restored.hands_played == 2
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    header = {"table_id": "t-restore", "ruleset": "shanghai-qiaoma", "overrides": {}, "stake": 1}
    for hid in [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]:
        verdict = verify_hand(export_hand(header, log, hid))
        assert verdict.ok, verdict.problems
