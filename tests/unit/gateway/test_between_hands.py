"""Between hands (RULES §11 "Between hands"): a hand's result stays until every person seated
pressed Next or the pause ran out; bots and those who left are ready at once; a table of bots
never pauses. Then ReadyForNextHand's checks through the TableManager."""

from __future__ import annotations

import time

import pytest

from infra.store.memory import MemoryStore
from services.gateway.convert.events import event_to_proto
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.events.views import project
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import Seat
from services.gateway.domain.session import between_hands as bh
from services.gateway.domain.session.config import BETWEEN_HANDS, PLAYING
from services.gateway.tables import read_table_log
from shared.errors import FailedPrecondition, PermissionDenied
from tests.doubles.scheduler import ManualScheduler
from tests.support.sessions import inprocess_ports, local_table, seats, session_config
from tests.support.stacks import table_manager, table_spec
from tests.unit.gateway.test_resume_steps import greedy

PAUSE = 15_000


def until(cond, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.02)


def table(humans: int, pause: int | None = PAUSE, max_hands: int = 3):
    """``humans`` people on 托管 (the policy plays their hands), the rest bots."""
    ss = [Seat(player_id=f"p{i}", joined=True, auto_play=True) for i in range(humans)]
    ss += [Seat(player_id=f"b{i}", bot=True) for i in range(humans, 4)]
    config = session_config("t-bh", max_hands=max_hands, first_dealer=0, between_hands_ms=pause)
    return local_table(config, ss, policy=greedy)


def to_pause(t) -> None:
    """Play the first hand out; then its people are back from 托管 (they watch the result)."""
    t.session.start()
    for _ in range(10_000):
        if t.session.phase == BETWEEN_HANDS:
            break
        t.scheduler.advance(50)
    assert t.session.phase == BETWEEN_HANDS
    for s in t.session.seats:
        s.auto_play = False


def test_the_result_stays_until_every_person_pressed_next():
    t = table(humans=2)
    to_pause(t)
    assert bh.waiting_for(t.session) == [0, 1]
    view = t.session.seat_view(0)
    assert [s["next_ready"] for s in view["seats"]] == [False, False, True, True]
    assert view["next_hand_ms"] == t.session.pause.deadline_ms > t.scheduler.now_ms()
    assert bh.ready(t.session, 1) == [0]
    assert bh.ready(t.session, 1) == [0]  # twice: nothing more
    t.scheduler.advance(t.session.pause.deadline_ms - t.scheduler.now_ms() - 1)
    assert t.session.phase == BETWEEN_HANDS and t.session.hands_played == 1
    assert bh.ready(t.session, 0) == []
    t.scheduler.advance(0)
    assert t.session.phase == PLAYING and t.session.hand.config.hand_number == 2
    assert t.session.seat_view(0)["next_hand_ms"] == 0
    with pytest.raises(FailedPrecondition) as err:
        bh.ready(t.session, 0)
    assert err.value.reason == "NOT_BETWEEN_HANDS"


def test_the_pause_runs_out_without_next():
    t = table(humans=1)
    to_pause(t)
    t.scheduler.advance(t.session.pause.deadline_ms - t.scheduler.now_ms() - 1)
    assert t.session.phase == BETWEEN_HANDS
    t.scheduler.advance(1)
    assert t.session.phase == PLAYING


def test_the_ruleset_pause_and_no_pause_for_bots():
    t = table(humans=1, pause=None)
    assert bh.pause_ms(t.session) == 15_000  # timers.between_hands_seconds
    bots = local_table(
        session_config("t-bots", max_hands=2, between_hands_ms=None), seats(0), policy=greedy
    )
    assert bh.pause_ms(bots.session) == 0
    bots.play_out()
    assert bots.session.hands_played == 2


def test_a_person_who_left_is_ready_at_once():
    t = table(humans=2)
    to_pause(t)
    t.session.seats[0].auto_play = True  # 托管: still watching, still waited for
    assert bh.waiting_for(t.session) == [0, 1]
    t.session.seats[1].left = True
    assert bh.waiting_for(t.session) == [0]


def test_ready_for_next_hand_through_the_manager():
    manager = table_manager(
        MemoryStore(), inprocess_ports(), seed=3, discard_ms=600_000, between_hands_ms=600_000
    )
    try:
        tid, tokens = manager.create_table(table_spec(seats(humans=1), max_hands=2))
        with pytest.raises(FailedPrecondition) as err:  # a hand is running
            manager.ready_for_next_hand(tid, tokens[0], "r1")
        assert err.value.reason == "NOT_BETWEEN_HANDS"
        spectator = manager.join(tid, "", "", None, True)[1]
        with pytest.raises(PermissionDenied):
            manager.ready_for_next_hand(tid, spectator, "r2")
        with pytest.raises(PermissionDenied):  # another table's token
            other, _ = manager.create_table(table_spec(seats(humans=1), max_hands=1))
            manager.ready_for_next_hand(other, tokens[0], "r3")
    finally:
        manager.close()


def logged_table(humans: int):
    """:func:`table`, with each event's time as a log keeps it (the scheduler's clock)."""
    times: list[int] = []
    clock: list = []
    ss = [Seat(player_id=f"p{i}", joined=True, auto_play=True) for i in range(humans)]
    ss += [Seat(player_id=f"b{i}", bot=True) for i in range(humans, 4)]
    config = session_config("t-bh", max_hands=3, first_dealer=0, between_hands_ms=PAUSE)
    t = local_table(
        config, ss, policy=greedy, on_event=lambda kind, data: times.append(clock[0].now_ms())
    )
    clock.append(t.scheduler)
    return t, lambda: [LoggedEvent(i + 1, times[i], ev) for i, ev in enumerate(t.typed)]


def taken_over(log: list[LoggedEvent], now_ms: int):
    """The table restored from ``log`` by another replica at ``now_ms``: (session, scheduler,
    what it wrote after the log)."""
    sched = ManualScheduler(start_ms=now_ms)
    written: list[K.TableEvent] = []

    def emit(ev: K.TableEvent) -> int:
        written.append(ev)
        return len(log) + len(written)

    session = restore_session(
        "t-bh",
        log,
        timers={"between_hands_ms": PAUSE, "bot_delay_ms": 0, "auto_play_delay_ms": 0},
        ports=inprocess_ports(),
        scheduler=sched,
        emit=emit,
        report=lambda kind, data: None,
        policy=greedy,
    )
    return session, sched, written


def test_next_is_told_to_every_viewer_at_once():
    t = table(humans=2)
    to_pause(t)
    n = len(t.typed)
    bh.ready(t.session, 1)
    bh.ready(t.session, 1)  # twice: told once
    assert t.typed[n:] == [K.NextHandReady(seat=1, after_hand=1)]
    pressed = LoggedEvent(n + 1, 0, t.typed[n])
    for viewer in (None, 0, 1, 2, 3):
        seen = project(pressed.event, viewer)
        assert seen == pressed.event
        assert event_to_proto(pressed, seen).next_hand_ready.seat == 2  # proto seats from 1
    assert t.session.seat_view(2)["seats"][1]["next_ready"]


def test_a_takeover_keeps_who_pressed_next_and_when_the_pause_ends():
    t, log = logged_table(humans=2)
    to_pause(t)
    deadline = t.session.pause.deadline_ms
    t.scheduler.advance(4_000)
    bh.ready(t.session, 1)
    session, sched, written = taken_over(log(), t.scheduler.now_ms() + 1_000)
    assert session.phase == BETWEEN_HANDS and session.pause.ready == {1}
    assert bh.waiting_for(session) == [0]
    assert session.pause.deadline_ms == deadline  # not a pause begun afresh
    assert [s["next_ready"] for s in session.seat_view(None)["seats"]] == [False, True, True, True]
    sched.advance(deadline - sched.now_ms() - 1)
    assert session.phase == BETWEEN_HANDS and not written
    sched.advance(1)  # the pause ran out when it would have on the first owner
    assert session.phase == PLAYING and session.hand.config.hand_number == 2


def test_a_takeover_after_everyone_pressed_next_deals_at_once():
    t, log = logged_table(humans=2)
    to_pause(t)
    bh.ready(t.session, 0)
    assert bh.ready(t.session, 1) == []  # the owner dies before its deal (not run here)
    session, sched, _ = taken_over(log(), t.scheduler.now_ms())
    assert session.pause.ready == {0, 1} and bh.waiting_for(session) == []
    sched.advance(0)
    assert session.phase == PLAYING and session.hand.config.hand_number == 2


def test_a_takeover_before_the_first_hand_deals_it_without_a_pause():
    t, log = logged_table(humans=2)
    t.session.announce()  # the owner dies before its first deal
    session, sched, _ = taken_over(log(), t.scheduler.now_ms())
    sched.advance(0)
    assert session.phase == PLAYING and session.hand.config.hand_number == 1


def test_a_replica_taking_a_paused_table_over_keeps_its_next_presses():
    """Through two TableManagers on one store: Next pressed at the first is in the log, so the
    second, taking the table over between hands, shows it and deals once the other presses."""
    store, ports = MemoryStore(), inprocess_ports()
    fast = {"discard_ms": 20, "claim_ms": 20, "auto_play_delay_ms": 0}  # the hand ends alone
    first = table_manager(
        store, ports, seed=5, replica_id="gw-a", lease_ms=0, between_hands_ms=600_000, **fast
    )
    try:
        tid, tokens = first.create_table(table_spec(seats(humans=2), max_hands=2))
        until(lambda: first.view(tid, tokens[0], 0)["phase"] == "between_hands", "a hand's end")
        assert first.ready_for_next_hand(tid, tokens[0], "n1") == [1]
        deadline = first.view(tid, tokens[1], 1)["next_hand_ms"]
    finally:
        first.close()
    second = table_manager(
        store, ports, seed=5, replica_id="gw-b", between_hands_ms=600_000, **fast
    )
    try:
        second.table(tid)  # taken over from the log
        view = second.view(tid, tokens[1], 1)
        assert view["phase"] == "between_hands"
        assert [s["next_ready"] for s in view["seats"]] == [True, False, True, True]
        assert abs(view["next_hand_ms"] - deadline) < 1_000  # the same pause, not a new one
        assert second.ready_for_next_hand(tid, tokens[1], "n2") == []
        until(lambda: second.view(tid, tokens[1], 1)["phase"] != "between_hands", "hand 2")
    finally:
        second.close()
    kinds = [e.kind for e in read_table_log(store, tid)]
    assert kinds.count("next_hand_ready") == 2
    assert kinds.index("next_hand_ready") < kinds.index("hand_started", kinds.index("hand_result"))
