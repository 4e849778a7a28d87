"""The table session on a fake clock: timers, 托管, bots, escape, dealer and 荒番 bookkeeping,
successive hands. Never sleeps: time moves with ManualScheduler.advance."""

from __future__ import annotations

import random

import pytest

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.domain.hand import OWN_TURN
from services.gateway.domain.session import FINISHED, PLAYING, Ports, simple_policy
from shared import tiles as T
from shared.errors import FailedPrecondition
from shared.table import Discard
from tests.support.sessions import SeededWall, local_table, seats, session_config


def make(humans=1, max_hands=1, dealer=0, seed=1, overrides=None):
    table = local_table(
        session_config(
            "t1",
            overrides,
            max_hands=max_hands,
            first_dealer=dealer,
            discard_ms=1_000,
            claim_ms=500,
        ),
        seats(humans, prefix="p"),
        policy=simple_policy,
        rng=random.Random(seed),
        # the same walls every run: what a test sees of a hand never depends on luck
        ports=Ports(SeededWall(seed), InProcessRules(), InProcessScoring()),
    )
    table.session.start()
    return table.session, table.scheduler, table.events, table.reports


def own_turn(session, seat):
    p = session.hand.pending.get(seat)
    return p is not None and p.kind == OWN_TURN


def test_missed_discard_discards_the_drawn_tile_and_two_in_a_row_start_auto_play():
    session, sched, events, _ = make()
    sched.run_due()
    assert own_turn(session, 0)
    drawn = session.hand.drawn[0]
    sched.advance(999)
    assert own_turn(session, 0)  # not yet
    sched.advance(1)
    timed = [d for k, d in events if k == "timed_out"]
    assert timed == [
        {
            "hand_id": session.hand.hand_id,
            "hand_number": 1,
            "seat": 0,
            "kind": "own_turn",
            "in_a_row": 1,
        }
    ]
    discard = next(d for k, d in events if k == "tile_discarded")
    assert discard["seat"] == 0 and discard["auto"] and discard["drawn_tile"]
    from shared import tiles as T

    assert discard["tile"] == T.format_tile(drawn)
    # Play on until seat 0 decides again, and let it time out again: 托管 starts.
    while session.phase == PLAYING and not session.hand.pending.get(0):
        sched.advance(1)
    assert session.phase == PLAYING, "this seed's hand ended before seat 0 decided again"
    sched.advance(1_000)
    assert session.seats[0].auto_play
    assert any(k == "seat_changed" and d["reason"] == "auto_play_on" for k, d in events)


def test_acting_ends_auto_play():
    session, sched, events, _ = make()
    sched.run_due()
    session.seats[0].auto_play = True
    session.config.auto_play_delay_ms = 10_000
    p = session.hand.pending[0]
    session.act(0, session.hand.default_action(0))
    assert not session.seats[0].auto_play and session.seats[0].timeouts_in_row == 0
    assert events[-1][0] != "seat_changed" or events[-1][1]["reason"] == "auto_play_off"
    assert any(k == "seat_changed" and d["reason"] == "auto_play_off" for k, d in events)
    assert p.sequence > 0


def test_out_of_turn_is_refused_and_changes_nothing():
    session, sched, events, _ = make(humans=4)
    sched.run_due()
    n, before = len(events), session.hand.copy_state()
    with pytest.raises(FailedPrecondition):
        session.act(1, session.hand.default_action(0))
    assert len(events) == n and session.hand.copy_state() == before


def test_leaving_a_running_hand_pays_the_penalty_and_a_bot_finishes():
    session, sched, events, reports = make(humans=2, max_hands=2)
    sched.run_due()
    session.huangfan = 3
    penalty = session.leave(1)
    assert penalty == 2  # 1 × stake 1 × base points 2
    assert session.huangfan == 0 and session.seats[1].left
    escape = next(d for k, d in events if k == "hand_result" and d["outcome"] == "escape")
    assert escape["escaped_seat"] == 1 and sum(escape["payments"]) + escape["house"] == 0
    assert reports[0][1]["escaped_seat"] == 1
    with pytest.raises(FailedPrecondition):
        session.leave(1)
    # seat 0 never acts: it times out into 托管 and the table plays on to its end.
    for _ in range(200_000):
        if session.phase == FINISHED:
            break
        sched.advance(250)
    assert session.phase == FINISHED and session.hands_played == 2
    assert session.huangfan == 0 or session.hands_played == 2
    assert [k for k, _ in reports].count("hand") == 3 and reports[-1][0] == "finished"


def test_four_bots_play_successive_hands_with_dealer_and_huangfan_from_scoring():
    session, sched, events, _reports = make(humans=0, max_hands=6, dealer=2)
    sched.drain()
    assert session.phase == FINISHED and session.hands_played == 6
    results = [d for k, d in events if k == "hand_result"]
    starts = [d for k, d in events if k == "hand_started"]
    assert starts[0]["dealer"] == 2
    for prev, nxt, start in zip(results, results[1:], starts[1:], strict=False):
        assert start["dealer"] == prev["next_dealer"]
        assert start["huangfan"] == prev["next_huangfan"]
        del nxt
    chips = [0, 0, 0, 0]
    for r in results:
        assert sum(r["payments"]) + r["house"] == 0
        chips = [a + b for a, b in zip(chips, r["payments"], strict=True)]
    assert chips == [s.chips for s in session.seats]
    assert events[-1][0] == "table_finished"
    assert session.hand.tiles_accounted() == 144


def test_tile_swap_before_play_then_replays_verify():
    """换牌 (table.tile_swap): bots bury tiles before play; every hand still verifies."""
    from services.gateway.bots import engine_policy, make_bot
    from services.gateway.domain.replay import export_hand
    from services.gateway.verify import verify_hand

    overrides = {"table.tile_swap": "true"}
    table = local_table(
        session_config("t-swap", overrides, max_hands=3, first_dealer=1),
        seats(),
        policy=engine_policy(make_bot("planner", seed=3)),
    )
    table.play_out()
    session, events = table.session, table.events
    assert session.phase == FINISHED
    swaps = [d for k, d in events if k == "tiles_swapped"]
    assert len(swaps) == 12 and all(len(T.parse(d["buried"])) == 5 for d in swaps)
    log = table.log()
    header = {
        "table_id": "t-swap",
        "ruleset": "shanghai-qiaoma",
        "overrides": overrides,
        "stake": 1,
    }
    for hid in [d["hand_id"] for k, d in events if k == "hand_started"]:
        verdict = verify_hand(export_hand(header, log, hid))
        assert verdict.ok, verdict.problems


def test_swap_window_refuses_play_and_a_missed_swap_keeps_the_tiles():
    from services.gateway.domain.hand import SWAP
    from shared.table import TileSwap

    session, sched, events, _ = make(humans=4, overrides={"table.tile_swap": "true"})
    sched.run_due()
    hand = session.hand
    assert set(hand.pending) == {0, 1, 2, 3} and all(p.kind == SWAP for p in hand.pending.values())
    before, n = hand.copy_state(), len(events)
    held = T.from_counts(hand.seats[1].counts)
    with pytest.raises(FailedPrecondition):
        session.act(1, TileSwap((33,) * 5))
    with pytest.raises(FailedPrecondition):
        session.act(1, Discard(held[0]))
    assert hand.copy_state() == before and len(events) == n
    session.act(1, TileSwap(tuple(held[:5])))
    swapped = next(d for k, d in events if k == "tiles_swapped")
    assert swapped["seat"] == 1 and T.parse(swapped["buried"]) == held[:5]
    assert sum(hand.seats[1].counts) == 13
    sched.advance(15_000)  # tile_swap_seconds: the others keep their tiles, no timeout counted
    assert all(s.timeouts_in_row == 0 for s in session.seats)
    assert list(hand.pending) == [0] and hand.pending[0].kind == "own_turn"
    assert hand.tiles_accounted() == 144
