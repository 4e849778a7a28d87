"""Open seats are waited for until a deadline (SessionConfig.seat_wait_ms), on a fake clock:
a seat still open then ends the table before any hand; seats filled in time start the hand and
the timer does nothing; 0 waits forever; a table restored from its log keeps the deadline."""

from __future__ import annotations

import random

import pytest

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import (
    FINISHED,
    PLAYING,
    WAITING,
    Ports,
    Seat,
    SessionConfig,
    TableSession,
    simple_policy,
)
from shared.errors import FailedPrecondition
from shared.ruleset import load_ruleset
from tests.doubles.scheduler import ManualScheduler
from tests.support.events import json_log_recorder, log_from_json

WAIT = 120_000
T0 = 1_700_000_000_000


class Table:
    """A session with seat 0 a player, seat 1 open, seats 2-3 bots; its log and reports."""

    def __init__(self, seat_wait_ms: int = WAIT, seats: list[Seat] | None = None) -> None:
        self.log: list[tuple[int, int, str, dict]] = []
        self.reports: list[tuple[str, dict]] = []
        self.ports = Ports(InProcessWall(), InProcessRules(), InProcessScoring())
        self.sched = ManualScheduler(T0)
        self.session = TableSession(
            SessionConfig(
                "t-wait",
                load_ruleset(),
                "shanghai-qiaoma",
                {},
                1,
                max_hands=1,
                first_dealer=0,
                discard_ms=1_000,
                claim_ms=500,
                seat_wait_ms=seat_wait_ms,
            ),
            seats or [Seat(player_id="p0"), Seat(), Seat("b2", bot=True), Seat("b3", bot=True)],
            scheduler=self.sched,
            policy=simple_policy,
            rng=random.Random(3),
            **self.wiring(),
        )
        self.session.start()

    def wiring(self) -> dict:
        return {
            "ports": self.ports,
            "emit": json_log_recorder(self.log),
            "report": lambda kind, data: self.reports.append((kind, data)),
        }

    def kinds(self) -> list[str]:
        return [k for _, _, k, _ in self.log]

    def finished(self) -> list[dict]:
        return [d for _, _, k, d in self.log if k == "table_finished"]


def test_a_seat_still_open_at_the_deadline_ends_the_table_before_any_hand():
    t = Table()
    started = t.log[0][3]
    assert started["seat_deadline_ms"] == T0 + WAIT
    assert t.session.seat_view(0)["seat_deadline_ms"] == T0 + WAIT  # a lobby's countdown
    t.sched.advance(WAIT - 1)
    assert t.session.phase == WAITING and not t.finished()
    t.sched.advance(1)
    assert t.session.phase == FINISHED and t.session.finish_reason == "seats_not_filled"
    assert t.finished() == [
        {"hands_played": 0, "chips": [0, 0, 0, 0], "reason": "seats_not_filled", "rounds_played": 0}
    ]
    assert "hand_started" not in t.kinds()
    assert t.reports == [("finished", {"hands_played": 0})]  # the outbox, as any finished table
    assert t.session.seat_view(0)["seat_deadline_ms"] == 0
    n = len(t.log)
    with pytest.raises(FailedPrecondition, match="seats_not_filled") as err:
        t.session.join(1, "late", "Late")
    assert err.value.reason == "TABLE_FINISHED"
    assert err.value.details == {"finish_reason": "seats_not_filled"}
    assert len(t.log) == n and t.session.seats[1].open  # refused: nothing changed
    assert t.sched.pending == 0


def test_seats_filled_before_the_deadline_start_the_hand_and_the_timer_does_nothing():
    t = Table()
    t.sched.advance(WAIT - 1)
    t.session.join(1, "p1", "P1")
    assert t.session.phase == PLAYING
    assert t.session.seat_view(1)["seat_deadline_ms"] == 0
    t.sched.advance(WAIT)  # far past the deadline: the hand plays on (players time out)
    assert "seats_not_filled" not in [d["reason"] for d in t.finished()]
    assert "hand_started" in t.kinds()


def test_zero_waits_forever():
    t = Table(seat_wait_ms=0)
    assert "seat_deadline_ms" not in t.log[0][3]
    assert t.session.seat_view(0)["seat_deadline_ms"] == 0
    assert t.sched.pending == 0  # no timer at all
    t.sched.advance(30 * 24 * 3600 * 1000)
    assert t.session.phase == WAITING and not t.finished()
    t.session.join(1, "p1", "P1")
    assert t.session.phase == PLAYING


def test_no_open_seat_no_deadline():
    t = Table(seats=[Seat(player_id=f"p{i}") for i in range(4)])
    assert "seat_deadline_ms" not in t.log[0][3] and t.session.seat_deadline_ms == 0
    assert t.session.phase == PLAYING


def restore(t: Table, now_ms: int) -> tuple[TableSession, ManualScheduler]:
    """Another replica takes the table over from its log at ``now_ms``."""
    sched = ManualScheduler(now_ms)
    session = restore_session(
        "t-wait",
        log_from_json(t.log),
        timers={"discard_ms": 1_000, "claim_ms": 500},
        scheduler=sched,
        policy=simple_policy,
        **t.wiring(),
    )
    return session, sched


def test_a_restored_waiting_table_keeps_the_same_deadline():
    t = Table()
    t.session.join(0, "p0", "P0")  # a player came, the open seat is still open
    session, sched = restore(t, T0 + 60_000)
    assert session.phase == WAITING and session.seat_deadline_ms == T0 + WAIT
    assert session.seat_view(0)["seat_deadline_ms"] == T0 + WAIT
    sched.advance(WAIT - 60_000 - 1)
    assert session.phase == WAITING and not t.finished()
    sched.advance(1)  # the original deadline, not a fresh two minutes
    assert session.phase == FINISHED
    assert [d["reason"] for d in t.finished()] == ["seats_not_filled"]
    assert t.reports == [("finished", {"hands_played": 0})]


def test_a_table_restored_after_its_deadline_ends_at_once_and_refuses_joins():
    t = Table()
    session, sched = restore(t, T0 + WAIT + 5_000)
    sched.run_due()
    assert session.phase == FINISHED and [d["reason"] for d in t.finished()] == ["seats_not_filled"]
    again, _ = restore(t, T0 + WAIT + 9_000)  # and from a log that says it finished
    assert again.phase == FINISHED and again.finish_reason == "seats_not_filled"
    with pytest.raises(FailedPrecondition, match="seats_not_filled"):
        again.join(1, "late", "")


def test_a_restored_table_filled_in_time_plays_on():
    t = Table()
    session, sched = restore(t, T0 + 10_000)
    session.join(1, "p1", "P1")
    assert session.phase == PLAYING
    sched.advance(WAIT)
    assert "seats_not_filled" not in [d["reason"] for d in t.finished()]


def test_a_log_from_before_the_deadline_existed_waits_forever():
    t = Table(seat_wait_ms=0)  # its table_started has no seat_deadline_ms, as old logs
    session, sched = restore(t, T0 + 10 * WAIT)
    assert session.phase == WAITING and sched.pending == 0
