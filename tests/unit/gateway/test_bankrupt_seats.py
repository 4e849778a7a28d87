"""破产 at a table (RULES-items §4): a table whose hands move silver deals its next hand only
once matchmaking's answer to the last hand's report is in, and applies its bankrupt seats
before the deal — the bot takes the seat (``seat_bankrupt``, public), the player has left — and
a table rebuilt from its log, or waiting for the answer when it was taken over, does the same."""

from __future__ import annotations

from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.events.views import project
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import Seat
from services.gateway.domain.session.bankruptcy import ANSWER_POLL_MS
from services.gateway.domain.session.config import BETWEEN_HANDS, FINISHED, PLAYING
from tests.doubles.scheduler import ManualScheduler
from tests.support.sessions import local_table, session_config
from tests.unit.gateway.test_resume_steps import greedy

BOT = "bot-t-bk-s0"


def table(answers: dict[str, tuple[tuple[int, str], ...]], max_hands: int = 3, humans: int = 2):
    """Seats 0..humans-1 people on 托管 (played by the bots' policy), the rest bots; the
    answers matchmaking gave so far by hand id (absent: not in yet)."""
    seats = [
        Seat(player_id=f"p{i}", joined=True, auto_play=True)
        if i < humans
        else Seat(player_id=f"b{i}", bot=True)
        for i in range(4)
    ]
    config = session_config("t-bk", max_hands=max_hands, first_dealer=0, between_hands_ms=0)
    return local_table(config, seats, policy=greedy, hand_answer=answers.get)


def hand_ids(t) -> list[str]:
    return [e.hand_id for e in t.typed if isinstance(e, K.HandStarted)]


def test_the_next_hand_waits_for_the_answer_then_the_bot_takes_the_bankrupt_seat():
    answers: dict[str, tuple[tuple[int, str], ...]] = {}
    t = table(answers)
    t.session.start()
    t.scheduler.advance(10 * ANSWER_POLL_MS)
    first = hand_ids(t)
    assert len(first) == 1 and t.session.hands_played == 1
    assert t.session.phase == BETWEEN_HANDS  # no answer yet: no deal, however long it waits
    t.scheduler.advance(100 * ANSWER_POLL_MS)
    assert len(hand_ids(t)) == 1
    answers[first[0]] = ((0, BOT),)
    t.scheduler.advance(ANSWER_POLL_MS)
    assert len(hand_ids(t)) == 2
    (gone,) = [e for e in t.typed if isinstance(e, K.SeatBankrupt)]
    assert (gone.seat, gone.player_id, gone.bot_id, gone.after_hand) == (0, "p0", BOT, 1)
    kinds = [type(e) for e in t.typed]
    assert kinds.index(K.SeatBankrupt) < kinds.index(K.HandStarted, kinds.index(K.SeatBankrupt))
    s0 = t.session.seats[0]
    assert (s0.player_id, s0.bot, s0.auto_play) == (BOT, True, False)
    assert t.session.bankrupt[0] == gone
    assert t.session.seats[1].player_id == "p1" and not t.session.seats[1].bot
    for viewer in (None, 0, 1, 2):  # public: every seat and spectator is told
        assert project(gone, viewer) == gone


def test_an_answer_applied_twice_changes_nothing_and_a_table_without_answers_never_waits():
    answers = {}
    t = table(answers)
    t.session.start()
    t.scheduler.advance(10 * ANSWER_POLL_MS)
    answers[hand_ids(t)[0]] = ((0, BOT),)
    t.scheduler.advance(ANSWER_POLL_MS)
    t.session.seat_bankrupt(0, BOT)  # the same answer again
    assert sum(isinstance(e, K.SeatBankrupt) for e in t.typed) == 1

    seats = [Seat(player_id=f"p{i}", joined=True, auto_play=True) for i in range(4)]
    config = session_config("t-free", max_hands=2, first_dealer=0)
    free = local_table(config, seats, policy=greedy)  # no hand_answer: reports nothing
    free.session.start()
    free.scheduler.advance(10 * ANSWER_POLL_MS)
    assert free.session.phase == FINISHED and free.session.hands_played == 2


def test_the_last_player_going_bankrupt_ends_the_table():
    answers = {}
    t = table(answers, max_hands=5, humans=1)
    t.session.start()
    t.scheduler.advance(10 * ANSWER_POLL_MS)
    answers[hand_ids(t)[0]] = ((0, BOT),)
    t.scheduler.advance(ANSWER_POLL_MS)
    assert t.session.phase == FINISHED and t.session.finish_reason == "players_left"
    assert len(hand_ids(t)) == 1


def logged(t) -> list[LoggedEvent]:
    return [LoggedEvent(i + 1, 0, e) for i, e in enumerate(t.typed)]


def restore(t, answers):
    sched = ManualScheduler()
    out: list[K.TableEvent] = []

    def emit(ev):
        out.append(ev)
        return len(t.typed) + len(out)

    session = restore_session(
        "t-bk",
        logged(t),
        timers={"discard_ms": None, "claim_ms": None},
        ports=t.session.ports,
        scheduler=sched,
        emit=emit,
        report=lambda kind, data: None,
        policy=greedy,
        hand_answer=answers.get,
    )
    return session, sched, out


def test_a_table_rebuilt_from_its_log_keeps_the_bot_and_one_taken_over_waiting_still_waits():
    answers = {}
    t = table(answers)
    t.session.start()
    t.scheduler.advance(10 * ANSWER_POLL_MS)
    first = hand_ids(t)[0]

    # taken over while it waited for the answer: the new owner waits too, then applies it
    later: dict[str, tuple[tuple[int, str], ...]] = {}
    session, sched, out = restore(t, later)
    assert session.phase == BETWEEN_HANDS and session.last_hand_id == first
    sched.advance(10 * ANSWER_POLL_MS)
    assert out == []
    later[first] = ((0, BOT),)
    sched.advance(ANSWER_POLL_MS)
    assert isinstance(out[0], K.SeatBankrupt) and isinstance(out[1], K.HandStarted)
    assert session.seats[0].bot and session.seats[0].player_id == BOT

    # rebuilt after the bot took the seat (the next hand running): the seat is the bot's
    answers[first] = ((0, BOT),)
    t.scheduler.advance(ANSWER_POLL_MS)
    assert t.session.phase == PLAYING or t.session.hands_played >= 2
    session, _, _ = restore(t, answers)
    assert session.seats[0].bot and session.seats[0].player_id == BOT
    assert session.bankrupt[0].player_id == "p0"
    assert session.huangfan == t.session.huangfan
