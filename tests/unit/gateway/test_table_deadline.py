"""A table's deadline (SessionConfig.end_by_ms, a tournament round's time limit), on a fake
clock: once it has passed no new hand is dealt and the table ends (reason ``deadline``) when the
hand in play is over, or at the deadline itself between hands; decisions prompted after it get
at most ``timers.overtime_seconds``; the first hand is always dealt; no deadline changes
nothing; a table restored from its log keeps its deadline."""

from __future__ import annotations

import random

import pytest

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.domain.events import codec
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import (
    BETWEEN_HANDS,
    FINISHED,
    PLAYING,
    Ports,
    Seat,
    TableSession,
    simple_policy,
)
from services.gateway.domain.session.bankruptcy import HandAnswer
from tests.doubles.scheduler import ManualScheduler
from tests.support.events import log_from_json
from tests.support.sessions import SeededWall, reraise, session_config

T0 = 1_700_000_000_000
FULL = 20_000  # the ruleset's discard_seconds and claim_seconds, in ms
OVERTIME = 5_000  # timers.overtime_seconds' default, in ms
# A person who never acts and is never put on 托管 (its every prompt runs to its deadline).
NEVER_AUTO = {"timers.auto_play_after": "1000"}

Record = tuple[int, int, str, dict]


class Table:
    """A session on a ManualScheduler at T0 over a seeded wall, its log kept with each event's
    time (``(seq, t, kind, data)``) and its reports."""

    def __init__(
        self,
        end_by_ms: int,
        *,
        humans: int = 0,
        overrides: dict[str, str] | None = None,
        hand_answer: HandAnswer | None = None,
        **fields,
    ) -> None:
        self.log: list[Record] = []
        self.reports: list[tuple[str, dict]] = []
        self.ports = Ports(SeededWall("deadline"), InProcessRules(), InProcessScoring())
        self.sched = ManualScheduler(T0)
        self.hand_answer = hand_answer
        config = session_config(
            "t-deadline",
            overrides,
            first_dealer=0,
            end_by_ms=end_by_ms,
            **{"max_hands": 50, **fields},
        )
        seats = [Seat(player_id=f"p{i}", bot=i >= humans) for i in range(4)]
        self.session = TableSession(
            config,
            seats,
            scheduler=self.sched,
            policy=simple_policy,
            rng=random.Random(7),
            **self.wiring(self.sched),
        )
        self.session.start()

    def wiring(self, sched: ManualScheduler) -> dict:
        def emit(ev) -> int:
            self.log.append((len(self.log) + 1, sched.now_ms(), ev.KIND, codec.to_json(ev)))
            return len(self.log)

        return {
            "ports": self.ports,
            "emit": emit,
            "report": lambda kind, data: self.reports.append((kind, data)),
            "on_halted": reraise,
            "hand_answer": self.hand_answer,
        }

    def of(self, kind: str) -> list[Record]:
        return [r for r in self.log if r[2] == kind]

    def run_until_finished(self, sched: ManualScheduler | None = None, step_ms: int = 100) -> None:
        sched = sched or self.sched
        for _ in range(100_000):
            if self.of("table_finished"):
                return
            sched.advance(step_ms)
        raise AssertionError("the table never finished")

    def prompts(self, seat: int) -> list[tuple[int, int]]:
        """(time prompted, timer ms) of each prompt to ``seat``."""
        return [
            (t, d["deadline_ms"] - t)
            for _, t, k, d in self.log
            if k == "prompt" and d["seat"] == seat
        ]


def test_a_deadline_during_the_first_hand_finishes_that_hand_then_ends_the_table():
    end_by = T0 + 5_000
    t = Table(end_by, bot_delay_ms=1_000)  # bots think a second: hand 1 outlasts the deadline
    t.run_until_finished()
    s = t.session
    assert s.phase == FINISHED and s.finish_reason == "deadline" and s.hands_played == 1
    assert len(t.of("hand_started")) == 1 and len(t.of("hand_result")) == 1
    assert t.of("hand_result")[0][1] > end_by  # the hand was played on past the deadline
    [(_, at, _, finished)] = t.of("table_finished")
    assert finished["reason"] == "deadline" and finished["hands_played"] == 1
    assert t.log[-1][2] == "table_finished" and at == t.of("hand_result")[0][1]
    assert [k for k, _ in t.reports] == ["hand", "finished"]
    assert t.reports[-1] == ("finished", {"hands_played": 1})  # matchmaking's TableFinished
    assert t.of("table_started")[0][3]["end_by_ms"] == end_by
    assert t.sched.pending == 0


@pytest.mark.parametrize(
    ("overrides", "overtime"), [({}, OVERTIME), ({"timers.overtime_seconds": "2"}, 2_000)]
)
def test_a_decision_prompted_after_the_deadline_gets_the_overtime_timer(overrides, overtime):
    end_by = T0 + 30_000
    t = Table(end_by, humans=1, overrides={**NEVER_AUTO, **overrides})
    t.run_until_finished()
    assert t.session.finish_reason == "deadline" and t.session.hands_played == 1
    before = [ms for at, ms in t.prompts(0) if at < end_by]
    after = [ms for at, ms in t.prompts(0) if at >= end_by]
    assert before and after
    assert set(before) == {FULL}  # a prompt before the deadline keeps its whole timer
    assert set(after) == {overtime}
    # a prompt already running at the deadline ran out at its own deadline, not sooner
    spanning = [(at, ms) for at, ms in t.prompts(0) if at < end_by < at + ms]
    timed_out = {r[1] for r in t.of("timed_out") if r[3]["seat"] == 0}
    assert all(at + ms in timed_out for at, ms in spanning)


def test_a_deadline_between_hands_ends_the_table_at_the_deadline_without_dealing():
    end_by = T0 + 10_000
    t = Table(end_by, between_hands_ms=60_000)
    t.sched.run_due()  # bots answer at once: hand 1 is played at T0
    assert t.session.hands_played == 1 and t.session.phase == BETWEEN_HANDS
    t.sched.advance(10_000 - 1)
    assert t.session.phase == BETWEEN_HANDS and not t.of("table_finished")
    t.sched.advance(1)  # the deadline, long before the pause would end
    [(_, at, _, finished)] = t.of("table_finished")
    assert at == end_by and finished["reason"] == "deadline" and finished["hands_played"] == 1
    assert len(t.of("hand_started")) == 1
    assert t.sched.pending == 0


def test_a_table_waiting_for_its_last_hands_answer_ends_at_the_deadline():
    """A reporting table deals only once matchmaking answered the last hand: past the deadline
    no hand will be dealt, so it ends without waiting for that answer."""
    end_by = T0 + 3_000
    t = Table(end_by, hand_answer=lambda hand_id: None)  # the answer never comes
    t.sched.run_due()
    assert t.session.hands_played == 1 and t.session.phase == BETWEEN_HANDS
    t.sched.advance(3_000)
    assert t.session.finish_reason == "deadline"
    assert t.of("table_finished")[0][1] <= end_by + 100  # within one poll of the deadline
    assert len(t.of("hand_started")) == 1


def test_a_deadline_already_past_at_creation_plays_one_hand_under_overtime_timers():
    t = Table(T0 - 60_000, humans=1, overrides=NEVER_AUTO)
    assert t.session.phase == PLAYING  # the first hand is dealt all the same
    t.run_until_finished()
    assert t.session.finish_reason == "deadline" and t.session.hands_played == 1
    assert {ms for _, ms in t.prompts(0)} == {OVERTIME}


def test_the_tile_swap_window_after_the_deadline_is_cut_to_the_overtime_timer():
    overrides = {**NEVER_AUTO, "table.tile_swap": "true"}
    t = Table(T0 - 1, humans=1, overrides=overrides)
    swaps = [r for r in t.of("prompt") if r[3]["kind"] == "tile_swap"]
    assert swaps and {d["deadline_ms"] - at for _, at, _, d in swaps} == {OVERTIME}
    # without a deadline the window is the ruleset's table.tile_swap_seconds (15)
    plain = Table(0, humans=1, overrides=overrides)
    swaps = [r for r in plain.of("prompt") if r[3]["kind"] == "tile_swap"]
    assert {d["deadline_ms"] - at for _, at, _, d in swaps} == {15_000}


def test_resuming_after_the_deadline_gives_the_pending_decision_the_overtime_timer():
    # seat 0 times out twice (托管), then its 托管 takes a minute to answer
    t = Table(T0 + 1, humans=1, auto_play_delay_ms=60_000)
    for _ in range(100_000):
        hand = t.session.hand
        if t.session.seats[0].auto_play and hand is not None and 0 in hand.pending:
            break
        t.sched.advance(100)
    else:
        raise AssertionError("seat 0 never had a decision pending on 托管")
    t.session.resume(0)
    [(_, at, _, resumed)] = [r for r in t.of("seat_changed") if r[3]["reason"] == "auto_play_off"]
    assert resumed["deadline_ms"] - at == OVERTIME  # not the full timer
    assert t.session.hand is not None
    assert t.session.hand.pending[0].deadline_ms == at + OVERTIME


def test_without_a_deadline_nothing_changes():
    """No deadline (0) and a deadline never reached play the same table, event for event, to
    max_hands; table_started carries no end_by_ms without one (as logs written before it)."""

    def play(end_by: int) -> Table:
        t = Table(end_by, humans=1, overrides=NEVER_AUTO, max_hands=2)
        t.run_until_finished(step_ms=1_000)
        return t

    none, far = play(0), play(T0 + 10**9)
    assert "end_by_ms" not in none.of("table_started")[0][3]
    assert far.of("table_started")[0][3]["end_by_ms"] == T0 + 10**9
    assert none.session.finish_reason == "max_hands" and none.session.hands_played == 2
    assert {ms for _, ms in none.prompts(0)} == {FULL}

    def facts(t: Table) -> list:
        return [(at, k, d) for _, at, k, d in t.log if k != "table_started"]

    assert facts(none) == facts(far)


# --- restored from the log -----------------------------------------------------------------
def restore(t: Table, now_ms: int) -> tuple[TableSession, ManualScheduler]:
    """Another replica takes the table over from its log at ``now_ms``."""
    sched = ManualScheduler(now_ms)
    session = restore_session(
        "t-deadline",
        log_from_json(t.log),
        timers={"between_hands_ms": t.session.config.between_hands_ms},
        scheduler=sched,
        policy=simple_policy,
        **t.wiring(sched),
    )
    return session, sched


def test_a_table_restored_mid_hand_keeps_its_deadline():
    end_by = T0 + 30_000
    t = Table(end_by, humans=1, overrides=NEVER_AUTO)
    t.sched.advance(25_000)  # hand 1 under way, seat 0's prompts on their full timer
    assert t.session.phase == PLAYING
    session, sched = restore(t, T0 + 26_000)
    assert session.config.end_by_ms == end_by and session.phase == PLAYING
    t.run_until_finished(sched)
    assert session.finish_reason == "deadline" and session.hands_played == 1
    after = [ms for at, ms in t.prompts(0) if at >= end_by]
    assert after and set(after) == {OVERTIME}


def test_a_table_restored_between_hands_ends_at_its_deadline():
    end_by = T0 + 10_000
    t = Table(end_by, between_hands_ms=60_000)
    t.sched.run_due()
    assert t.session.phase == BETWEEN_HANDS
    session, sched = restore(t, T0 + 4_000)
    assert session.config.end_by_ms == end_by and session.phase == BETWEEN_HANDS
    sched.advance(6_000 - 1)
    assert not t.of("table_finished")
    sched.advance(1)
    assert session.finish_reason == "deadline"
    assert [r[1] for r in t.of("table_finished")] == [end_by]
    assert len(t.of("hand_started")) == 1
    # and restored after the deadline: it ends at once
    t2 = Table(end_by, between_hands_ms=60_000)
    t2.sched.run_due()
    late, sched2 = restore(t2, end_by + 1)
    sched2.run_due()
    assert late.finish_reason == "deadline" and len(t2.of("hand_started")) == 1


def test_a_log_written_before_the_deadline_existed_restores_without_one():
    t = Table(0, between_hands_ms=60_000, max_hands=2)
    t.sched.run_due()
    assert "end_by_ms" not in t.of("table_started")[0][3]
    session, sched = restore(t, T0 + 10**9)
    assert session.config.end_by_ms == 0 and not session.past_deadline()
    sched.advance(60_000)
    assert session.finish_reason == "max_hands" and session.hands_played == 2


def test_a_table_taken_over_before_its_first_hand_deals_it_even_past_the_deadline():
    """The first hand is always dealt, also by a replica that takes the table over between its
    TableStarted and its first deal."""
    t = Table(T0 - 1)
    del t.log[1:]  # only table_started was logged when its replica died
    session, sched = restore(t, T0 + 1_000)
    sched.run_due()
    assert session.finish_reason == "deadline" and session.hands_played == 1
    assert len(t.of("hand_started")) == 1
