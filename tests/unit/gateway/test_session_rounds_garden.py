"""Rounds (圈) and 逛花园 at the table session, over the in-process engine with scripted walls:
stacks start at payment.garden_stack, go to scoring, are updated after each hand and shown in
views and events; a seat at 0 pays nothing more and can win chips back; the table ends after
payment.garden_rounds rounds (or CreateTable's max_rounds)."""

from __future__ import annotations

import random

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.domain.restore import restore_session
from services.gateway.domain.rounds import deal_advance, rounds_completed
from services.gateway.domain.session import (
    FINISHED,
    Ports,
    Seat,
    SessionConfig,
    TableSession,
    simple_policy,
)
from shared.ruleset import resolve_ruleset
from shared.table import Pass, Win
from tests.doubles.scheduler import ManualScheduler
from tests.support.events import json_recorder, log_recorder, records_log
from tests.unit.gateway.scripted import ScriptedWall


class ScriptedWalls:
    """One scripted wall per hand, in order."""

    def __init__(self, walls: list[ScriptedWall]) -> None:
        self.walls = walls
        self.current: ScriptedWall | None = None
        self.hands = 0

    def new_hand(self, ruleset_name, overrides, dealer, request_id):
        self.current = self.walls[self.hands]
        self.hands += 1
        return self.current.new_hand(ruleset_name, overrides, dealer, request_id)

    def __getattr__(self, name):  # deal, draw, draw_replacement, reveal
        return getattr(self.current, name)


NO_DECLARE = {"ready.require_declare_ready": "false"}
GARDEN = {**NO_DECLARE, "payment.garden": "true", "payment.garden_stack": "1"}
GARDEN_ONE_ROUND = {**GARDEN, "payment.garden_rounds": "1"}

# Hand 1, dealer 0: seat 0 wins on its deal (自摸); the others pay 1 share each, capped at the
#   1 chip they hold — all three are at 0 after it.
# Hand 2, dealer 0: seat 0's discard (its right-most tile, 9p) wins for seat 1, at 0: it wins
#   chips back from seat 0.
# Hand 3, dealer 1: seat 1 wins on its deal; seats 2 and 3 are at 0 and pay nothing.
# Hand 4, dealer 1: seat 1's discard (9s) wins for seat 0, who deals next: the deal has moved
#   0 -> 0 -> 1 -> 1 -> 0, i.e. 0 + 1 + 0 + 3 = 4 seats: one round (圈) complete.
OTHERS = ["2p5p8p2s5s8s3p6p9p3s6s9s2z", "6z6z7z7z1z2z3z4z5z9m9m8m7m"]
HANDS = [
    ["11122233344455m", "147p258p369p1s4s7s1z", *OTHERS],
    ["1m2m3m5p6p1s2s3s9s1z2z3z4z9p", "111s222s333p444p9p", *OTHERS],
    ["1m4m7m2s5s8s1z2z3z4z5z6z7z", "11122233344455p", "2m5m8m2s5s8s3m6m9m3s6s7s2z", OTHERS[1]],
    ["111m222m333p444p9s", "1p4p7p2s5s8s1z2z3z4z5z6z7z9s", "2m5m8m2p5p8p3m6m9m3s6s7s2z", OTHERS[1]],
]


def garden_table(overrides, hands=HANDS, max_rounds=0, humans=0, max_hands=0):
    events: list[tuple[str, dict]] = []
    sched = ManualScheduler()
    wall = ScriptedWalls([ScriptedWall(h, live="7s7s7s") for h in hands])
    session = TableSession(
        SessionConfig(
            table_id="t-garden",
            ruleset=resolve_ruleset("shanghai-qiaoma", overrides),
            ruleset_name="shanghai-qiaoma",
            overrides=overrides,
            stake=1,
            max_rounds=max_rounds,
            max_hands=max_hands,
            first_dealer=0,
            discard_ms=1_000,
            claim_ms=500,
        ),
        [Seat(player_id=f"p{i}", bot=i >= humans) for i in range(4)],
        ports=Ports(wall, InProcessRules(), InProcessScoring()),
        scheduler=sched,
        emit=json_recorder(events),
        report=lambda kind, data: None,
        policy=simple_policy,
        rng=random.Random(1),
    )
    return session, sched, events


def of(events, kind):
    return [d for k, d in events if k == kind]


def test_deal_advance_and_rounds():
    assert [deal_advance(0, n) for n in range(4)] == [0, 1, 2, 3]
    assert deal_advance(3, 0) == 1 and deal_advance(2, 1) == 3
    assert [rounds_completed(n) for n in (0, 3, 4, 5, 7, 8)] == [0, 0, 1, 1, 1, 2]


def test_garden_stacks_go_to_scoring_and_a_seat_at_zero_pays_nothing_more():
    session, sched, events = garden_table(GARDEN_ONE_ROUND)
    assert session.seat_view(None)["seats"][2]["garden_stack"] == 1
    session.start()
    sched.drain()
    started, results = of(events, "hand_started"), of(events, "hand_result")
    assert len(results) == 4 and [r["outcome"] for r in results] == ["win"] * 4
    assert [r["winners"][0]["seat"] for r in results] == [0, 1, 1, 0]
    for s, r in zip(started, results, strict=True):
        after = [b + p for b, p in zip(s["garden_stacks"], r["payments"], strict=True)]
        assert r["garden_stacks"] == after and min(after) >= 0
        for seat, before in enumerate(s["garden_stacks"]):
            if before == 0:
                assert r["payments"][seat] >= 0, "a seat at 0 paid"
        assert sum(r["garden_stacks"]) == 4 and r["house"] == 0
    assert started[0]["garden_stacks"] == [1, 1, 1, 1]
    assert results[0]["payments"] == [3, -1, -1, -1]  # capped at the 1 chip each holds
    assert results[1]["payments"][1] > 0 and started[1]["garden_stacks"][1] == 0  # wins back
    assert results[2]["payments"][2:] == [0, 0]  # seats 2 and 3 at 0 pay nothing more
    assert session.phase == FINISHED
    finished = of(events, "table_finished")[-1]
    assert finished["reason"] == "max_rounds" and finished["rounds_played"] == 1
    assert finished["garden_stacks"] == results[-1]["garden_stacks"]
    view = session.seat_view(0)
    assert view["garden"] and view["rounds_played"] == 1 and view["max_rounds"] == 1
    assert [s["garden_stack"] for s in view["seats"]] == finished["garden_stacks"]
    assert [s["chips"] + 1 for s in view["seats"]] == finished["garden_stacks"]


def test_a_garden_table_plays_garden_rounds_and_a_table_can_limit_rounds():
    # Without 逛花园, max_rounds alone ends the table once the deal has gone round.
    session, sched, events = garden_table(NO_DECLARE, max_rounds=1)
    session.start()
    sched.drain()
    assert session.phase == FINISHED and len(of(events, "hand_result")) == 4
    assert of(events, "table_finished")[-1]["reason"] == "max_rounds"
    assert "garden_stacks" not in of(events, "hand_result")[0]
    assert "garden_stack" not in session.seat_view(0)["seats"][0]
    # payment.garden_rounds (default 4) is the limit of a 逛花园 table.
    session, _, events = garden_table(GARDEN)
    assert session.max_rounds == 4
    assert of(events, "table_started") == [] and session.rounds_played == 0


def test_an_escape_under_garden_is_capped_and_the_hand_settles_on_the_stacks_left():
    session, sched, events = garden_table(GARDEN_ONE_ROUND, hands=[HANDS[1]], humans=4, max_hands=1)
    session.start()
    sched.run_due()
    assert session.leave(0) == 1  # the penalty (2 chips) capped at the 1 chip seat 0 holds
    escape = next(r for r in of(events, "hand_result") if r["outcome"] == "escape")
    assert escape["garden_stacks"][0] == 0 and sum(escape["payments"]) + escape["house"] == 0
    sched.run_due()  # a bot discards 9p for seat 0; seat 1 may win on it
    assert session.hand.pending[1].options.win is not None
    for seat in sorted(session.hand.pending):
        session.act(seat, Win() if seat == 1 else Pass())
    sched.drain()
    result = next(r for r in of(events, "hand_result") if r["outcome"] == "win")
    assert result["winners"][0]["seat"] == 1
    assert result["payments"][0] == 0  # the discarder, at 0 since its escape, pays nothing
    assert min(result["garden_stacks"]) >= 0


def test_a_round_ends_when_the_deal_has_gone_round_even_past_seats_that_never_dealt():
    # Dealer 0's discard wins for seat 1 (the deal moves 1 seat), then dealer 1's discard wins
    # for seat 0 (3 seats): the deal is back at seat 0 and seats 2 and 3 never dealt.
    session, sched, events = garden_table(
        NO_DECLARE, hands=[HANDS[1], HANDS[3], HANDS[1]], max_rounds=1
    )
    session.start()
    sched.drain()
    assert [r["next_dealer"] for r in of(events, "hand_result")] == [1, 0]
    assert [d["dealer"] for d in of(events, "hand_started")] == [0, 1]
    assert session.phase == FINISHED and session.rounds_played == 1
    assert of(events, "table_finished")[-1]["reason"] == "max_rounds"


def test_a_taken_over_garden_table_keeps_its_stacks_and_rounds():
    session, sched, events = garden_table(GARDEN_ONE_ROUND)
    session.config.between_hands_ms = 10_000
    session.start()
    sched.run_due()
    sched.advance(10_000)
    assert session.hands_played == 2 and session.deal_moved == 1
    log = records_log(events)
    restored = restore_session(
        "t-garden",
        log,
        timers={"discard_ms": 1_000, "claim_ms": 500},
        ports=session.ports,  # the scripted walls go on with hand 3
        scheduler=(sched2 := ManualScheduler()),
        emit=log_recorder(log),
        report=lambda kind, data: None,
        policy=simple_policy,
    )
    assert restored.garden_stacks() == session.garden_stacks()
    assert (restored.deal_moved, restored.max_rounds) == (1, 1)
    sched2.drain()
    assert restored.phase == FINISHED and restored.hands_played == 4
    assert log[-1].kind == "table_finished" and log[-1].event.reason == "max_rounds"
