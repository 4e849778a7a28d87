"""托管 (auto-play) deadlines and ending it (F6): a seat on 托管 is answered by the bot after
``auto_play_delay_ms``, so its prompts and the view carry that deadline; ``ResumePlay`` ends 托管
at once (no prompt needed) and a decision pending gets the seat's normal timer again."""

from __future__ import annotations

import random

import pytest

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.domain.events import codec
from services.gateway.domain.hand import OWN_TURN
from services.gateway.domain.session import (
    BETWEEN_HANDS,
    PLAYING,
    Ports,
    Seat,
    SessionConfig,
    TableSession,
    simple_policy,
)
from shared.errors import FailedPrecondition
from shared.ruleset import resolve_ruleset
from shared.table import ResumePlay
from tests.doubles.scheduler import ManualScheduler

DISCARD_MS, CLAIM_MS, AUTO_MS = 10_000, 5_000, 700


def make(*, auto_play: bool, max_hands=1, humans=1):
    events: list[tuple[str, dict, int]] = []  # kind, data, the time it was emitted
    sched = ManualScheduler()
    seats = [Seat(player_id=f"p{i}", bot=i >= humans, joined=True) for i in range(4)]
    seats[0].auto_play = auto_play
    session = TableSession(
        SessionConfig(
            table_id="t-auto",
            ruleset=resolve_ruleset("shanghai-qiaoma", {}),
            ruleset_name="shanghai-qiaoma",
            overrides={},
            stake=1,
            max_hands=max_hands,
            first_dealer=0,
            discard_ms=DISCARD_MS,
            claim_ms=CLAIM_MS,
            auto_play_delay_ms=AUTO_MS,
            between_hands_ms=1_000,
        ),
        seats,
        ports=Ports(InProcessWall(), InProcessRules(), InProcessScoring()),
        scheduler=sched,
        emit=lambda ev: events.append((ev.KIND, codec.to_json(ev), sched.now_ms())) or len(events),
        report=lambda kind, data: None,
        policy=simple_policy,
        rng=random.Random(1),
    )
    session.start()
    return session, sched, events


def test_a_seat_on_auto_play_is_prompted_with_the_bots_deadline():
    session, sched, events = make(auto_play=True)
    p = session.hand.pending[0]
    assert p.kind == OWN_TURN and p.deadline_ms == sched.now_ms() + AUTO_MS
    view = session.seat_view(0)
    assert view["prompt"].deadline_ms == view["hand"]["deadline_ms"] == p.deadline_ms
    sched.drain()  # the whole hand: every prompt of seat 0 says when the bot answers it
    mine = [(d, t) for k, d, t in events if k == "prompt" and d["seat"] == 0]
    others = [(d, t) for k, d, t in events if k == "prompt" and d["seat"] != 0]
    assert len(mine) > 1 and others
    assert all(d["deadline_ms"] == t + AUTO_MS for d, t in mine)
    for d, t in others:  # bots keep the ruleset's timers
        assert d["deadline_ms"] == t + (DISCARD_MS if d["kind"] == OWN_TURN else CLAIM_MS)
    # ... and the bot did answer each by then: no timeout, every action of seat 0 automatic
    assert not [d for k, d, _ in events if k == "timed_out"]
    acted = [(d, t) for k, d, t in events if k == "action" and d["seat"] == 0]
    assert acted and all(d["auto"] for d, _ in acted)


def test_without_auto_play_the_prompt_keeps_the_discard_timer():
    session, sched, _ = make(auto_play=False)
    assert session.hand.pending[0].deadline_ms == sched.now_ms() + DISCARD_MS


def test_resume_ends_auto_play_at_once_and_the_pending_decision_gets_the_normal_timer():
    session, sched, events = make(auto_play=True)
    sched.advance(100)
    resumed_at = sched.now_ms()
    p = session.hand.pending[0]
    session.act(0, ResumePlay())
    assert not session.seats[0].auto_play
    kind, changed, _ = events[-1]
    assert kind == "seat_changed" and changed["reason"] == "auto_play_off"
    assert changed["deadline_ms"] == p.deadline_ms == resumed_at + DISCARD_MS
    assert session.seat_view(0)["prompt"].deadline_ms == resumed_at + DISCARD_MS
    sched.advance(AUTO_MS)  # the bot's moment passes: the decision is the player's now
    assert session.hand.pending.get(0) is p
    assert not [d for k, d, _ in events if k == "action"]
    sched.advance(resumed_at + DISCARD_MS - sched.now_ms() - 1)
    assert not [d for k, d, _ in events if k == "timed_out"]
    sched.advance(1)  # the normal timer runs out
    timed = [d for k, d, _ in events if k == "timed_out"]
    assert [(d["seat"], d["in_a_row"]) for d in timed] == [(0, 1)]
    assert 0 not in session.hand.pending or session.hand.pending[0] is not p


def test_resume_when_not_on_auto_play_is_refused_and_changes_nothing():
    session, _, events = make(auto_play=False)
    before = (len(events), session.hand.copy_state(), session.hand.pending[0].deadline_ms)
    with pytest.raises(FailedPrecondition) as err:
        session.act(0, ResumePlay())
    assert err.value.reason == "NOT_AUTO_PLAY"
    assert (len(events), session.hand.copy_state(), session.hand.pending[0].deadline_ms) == before


def test_resume_between_hands():
    session, sched, events = make(auto_play=True, max_hands=2)
    while session.phase == PLAYING:
        sched.advance(100)
    assert session.phase == BETWEEN_HANDS and session.seats[0].auto_play
    session.act(0, ResumePlay())
    kind, changed, _ = events[-1]
    assert kind == "seat_changed" and changed["reason"] == "auto_play_off"
    assert "deadline_ms" not in changed
    sched.run_due()
    sched.advance(1_000)  # the next hand: seat 0 plays with the normal timer
    assert session.phase == PLAYING
    prompts = [(d, t) for k, d, t in events if k == "prompt" and d["seat"] == 0]
    d, t = prompts[-1]
    assert d["deadline_ms"] in (t + DISCARD_MS, t + CLAIM_MS)
