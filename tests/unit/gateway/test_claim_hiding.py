"""Who may claim a discard (or rob a kong) is known only to that seat: not
through refusal messages, not through ``timed_out`` events or the 托管 they start, not through
the views' deadlines. On a fake clock, four human seats that act only when the test says."""

from __future__ import annotations

import random
import re

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.domain.hand import CLAIM, OWN_TURN, ROB_KONG
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import (
    PLAYING,
    Ports,
    Seat,
    SessionConfig,
    TableSession,
    simple_policy,
)
from shared.errors import FailedPrecondition
from shared.ruleset import resolve_ruleset
from shared.table import Pass
from tests.doubles.scheduler import ManualScheduler
from tests.support.events import json_log_recorder, log_from_json, project_json
from tests.support.sessions import NO_HOLDS

TIMERS = {"discard_ms": 60_000, "claim_ms": 500}


def make(seed: int):
    log: list[tuple[int, int, str, dict]] = []
    sched = ManualScheduler()
    ports = Ports(InProcessWall(), InProcessRules(), InProcessScoring())
    session = TableSession(
        SessionConfig(
            table_id="t-hide",
            ruleset=resolve_ruleset("shanghai-qiaoma", NO_HOLDS),
            ruleset_name="shanghai-qiaoma",
            overrides=NO_HOLDS,
            stake=1,
            max_hands=1,
            first_dealer=0,
            **TIMERS,
        ),
        [Seat(player_id=f"p{i}") for i in range(4)],
        ports=ports,
        scheduler=sched,
        emit=json_log_recorder(log),
        report=lambda kind, data: None,
        policy=simple_policy,
        rng=random.Random(seed),
    )
    session.start()
    sched.run_due()
    return session, sched, log, ports


def claim_window(seed: int, want):
    """A session stopped in a claim window where some seat is prompted and another is not,
    and ``want(session)`` holds (everyone discards the drawn tile; claims are passed until
    such a window comes)."""
    session, sched, log, ports = make(seed)
    for _ in range(400):
        hand = session.hand
        if session.phase != PLAYING or hand.finished:
            return None
        pend = dict(hand.pending)
        if not pend:
            sched.advance(0)
            continue
        kinds = {p.kind for p in pend.values()}
        if kinds <= {CLAIM, ROB_KONG}:
            # the discarder is never prompted: one more seat is idle
            if len(pend) < 4 - 1 and want(session):
                return session, sched, log, ports
            for seat in pend:
                session.act(seat, Pass())
        else:
            seat = next(iter(pend))
            session.act(seat, hand.default_action(seat))
        sched.advance(0)
    return None


def find_window(want=lambda session: True, seeds=range(40)):
    for seed in seeds:
        found = claim_window(seed, want)
        if found is not None:
            return found
    raise AssertionError("no such claim window in 40 hands")


def not_next(session) -> list[int]:
    """Seats prompted now whose own turn does not come right after this window."""
    nxt = (session.hand.last.seat + 1) % 4
    return sorted(s for s in session.hand.pending if s != nxt)


def missed_claim_starts_auto_play(session, sched, seat: int) -> None:
    """The other seats pass; ``seat`` lets its claim time out, which puts it on 托管."""
    session.seats[seat].timeouts_in_row = session.auto_play_after - 1
    for s in [s for s in session.hand.pending if s != seat]:
        session.act(s, Pass())
    sched.advance(TIMERS["claim_ms"])


def idle_seats(session) -> list[int]:
    return [s for s in range(4) if s not in session.hand.pending]


def test_a_refusal_never_names_the_seats_deciding_on_a_claim():
    session, _, log, _ = find_window()
    prompted = sorted(session.hand.pending)
    for seat in idle_seats(session):
        n = len(log)
        try:
            session.act(seat, Pass())
        except FailedPrecondition as exc:
            message = exc.message
        else:
            raise AssertionError("an idle seat's pass was accepted")
        assert len(log) == n
        assert "claim" not in message and "deciding" not in message, message
        named = {int(x) for x in re.findall(r"seats? (\d)", message)} - {seat}
        assert not named & set(prompted), message
    # An own turn is public: a seat acting out of turn is told whose turn it is.
    for seat in list(session.hand.pending):
        session.act(seat, Pass())
    session.scheduler.advance(0)
    turn = next(p.seat for p in session.hand.pending.values() if p.kind == OWN_TURN)
    other = (turn + 1) % 4
    try:
        session.act(other, Pass())
    except FailedPrecondition as exc:
        assert f"it is seat {turn}'s turn" in exc.message


def test_views_show_a_claim_deadline_only_to_the_seats_prompted():
    session, _, _, _ = find_window()
    prompted = set(session.hand.pending)
    for viewer in [None, *range(4)]:
        hand = session.seat_view(viewer)["hand"]
        assert hand["to_act"] is None
        if viewer in prompted:
            assert hand["deadline_ms"] == session.hand.pending[viewer].deadline_ms > 0
        else:
            assert hand["deadline_ms"] == 0, f"viewer {viewer} learns a claim window is open"


def test_a_missed_claim_is_told_to_its_seat_only():
    session, sched, log, _ = find_window()
    prompted = sorted(session.hand.pending)
    n = len(log)
    sched.advance(TIMERS["claim_ms"])
    timed = [(q, d) for q, _, k, d in log[n:] if k == "timed_out"]
    assert sorted(d["seat"] for _, d in timed) == prompted
    for _, d in timed:
        assert d["kind"] in (CLAIM, ROB_KONG)
        assert project_json("timed_out", d, d["seat"]) == d
        for viewer in [None, *range(4)]:
            if viewer != d["seat"]:
                assert project_json("timed_out", d, viewer) is None


def test_an_own_turn_timeout_is_public_without_the_count_of_missed_claims():
    data = {"seat": 2, "kind": OWN_TURN, "in_a_row": 2}
    assert project_json("timed_out", data, 2) == data
    for viewer in (None, 0, 1, 3):
        assert project_json("timed_out", data, viewer) == {**data, "in_a_row": 0}


def test_auto_play_after_a_missed_claim_is_announced_at_the_seats_next_own_turn():
    for seed in range(60):
        found = claim_window(seed, not_next)
        if found is not None and _announced_at_next_own_turn(*found):
            return
    raise AssertionError("no seat on 托管 reached its own turn in 60 hands")


def _announced_at_next_own_turn(session, sched, log, ports) -> bool:
    seat = not_next(session)[0]
    n = len(log)
    missed_claim_starts_auto_play(session, sched, seat)
    on = [(q, d) for q, _, k, d in log[n:] if k == "seat_changed" and d["seat"] == seat]
    assert [d["reason"] for _, d in on] == ["auto_play_on"] and on[0][1]["private"]
    assert session.seats[seat].auto_play
    for viewer in [None, *range(4)]:
        shown = project_json("seat_changed", on[0][1], viewer)
        assert (shown is not None) == (viewer == seat)
        assert session.seat_view(viewer)["seats"][seat]["auto_play"] == (viewer == seat)
    # A table taken over from this log keeps the secret too.
    taken = restore_session(
        "t-hide",
        log_from_json(log),
        timers=TIMERS,
        ports=ports,
        scheduler=ManualScheduler(),
        emit=lambda ev: 0,
        report=lambda kind, data: None,
        policy=simple_policy,
    )
    assert taken.seats[seat].auto_play and taken.auto_play_hidden == {seat}

    # Play on (the others pass claims and discard, 托管 plays the seat) until its own turn.
    def own_turn_came() -> bool:
        return any(
            k == "prompt" and d["seat"] == seat and d["kind"] == OWN_TURN for _, _, k, d in log[n:]
        )

    while not own_turn_came():
        if session.phase != PLAYING or session.hand.finished:
            return False  # the hand ended first: the 托管 stayed the seat's own, also right
        pend = session.hand.pending
        for s in [s for s in pend if s != seat]:
            session.act(s, Pass() if pend[s].kind != OWN_TURN else session.hand.default_action(s))
        sched.advance(1)
    public = [
        d
        for _, _, k, d in log
        if k == "seat_changed" and d["seat"] == seat and not d.get("private")
    ]
    assert [d["reason"] for d in public] == ["auto_play_on"]
    assert project_json("seat_changed", public[0], None) == public[0]
    assert session.seat_view(None)["seats"][seat]["auto_play"]
    return True


def test_acting_ends_an_unannounced_auto_play_without_telling_the_others():
    # The seat misses a claim (托管 starts, unannounced), then is prompted on another claim
    # before its own turn and answers it itself: 托管 ends, unannounced as well.
    for seed in range(60):
        found = claim_window(seed, not_next)
        if found is None:
            continue
        session, sched, log, _ = found
        seat = not_next(session)[0]
        session.config.auto_play_delay_ms = 10**9  # 托管 never gets to act here
        missed_claim_starts_auto_play(session, sched, seat)
        assert seat in session.auto_play_hidden
        while session.phase == PLAYING and not session.hand.finished:
            pend = session.hand.pending
            p = pend.get(seat)
            if p is not None and p.kind == OWN_TURN:
                break  # announced: not the case this test is about
            if p is not None:
                n = len(log)
                session.act(seat, Pass())
                off = [d for _, _, k, d in log[n:] if k == "seat_changed"]
                assert [(d["reason"], d.get("private")) for d in off] == [("auto_play_off", True)]
                assert seat not in session.auto_play_hidden
                assert not session.seat_view(None)["seats"][seat]["auto_play"]
                return
            for s in list(pend):
                session.act(
                    s, Pass() if pend[s].kind != OWN_TURN else session.hand.default_action(s)
                )
            sched.advance(1)
    raise AssertionError("no seat got a second claim before its own turn in 60 hands")


def test_resuming_while_a_claim_is_pending_tells_the_new_deadline_to_the_seat_only():
    session, _, log, _ = find_window()
    seat = sorted(session.hand.pending)[0]
    session.seats[seat].auto_play = True  # on 托管, announced (an own-turn timeout)
    n = len(log)
    session.resume(seat)
    (change,) = [d for _, _, k, d in log[n:] if k == "seat_changed"]
    assert change["reason"] == "auto_play_off" and change["deadline_ms"] > 0
    assert project_json("seat_changed", change, seat)["deadline_ms"] == change["deadline_ms"]
    for viewer in [None, *range(4)]:
        if viewer != seat:
            shown = project_json("seat_changed", change, viewer)
            assert shown["reason"] == "auto_play_off"
            assert "deadline_ms" not in shown and "deadline_private" not in shown


def test_resuming_an_unannounced_auto_play_tells_nobody_else():
    session, sched, log, _ = find_window(not_next)
    seat = not_next(session)[0]
    missed_claim_starts_auto_play(session, sched, seat)
    assert seat in session.auto_play_hidden  # the next turn is another seat's
    n = len(log)
    session.resume(seat)
    (change,) = [d for _, _, k, d in log[n:] if k == "seat_changed"]
    assert change["reason"] == "auto_play_off" and change["private"]
    assert seat not in session.auto_play_hidden
    assert [project_json("seat_changed", change, v) is None for v in (None, *range(4))] == [
        v != seat for v in (None, *range(4))
    ]
