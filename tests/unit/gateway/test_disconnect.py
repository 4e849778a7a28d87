"""掉线 (RULES §9) on a fake clock: a player with no stream and no call for the ruleset's grace
is on 托管 at once, and escapes at the hand's end unless back in time; the decisions are
events, so a table restored from its log settles them the same way."""

from __future__ import annotations

import random

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.domain.replay import export_hand
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import FINISHED, PLAYING, Ports, simple_policy
from services.gateway.domain.session import presence as P
from services.gateway.verify import verify_hand
from tests.support.sessions import SeededWall, local_table, seats, session_config

GRACE_S = 3
OVERRIDES = {"timers.disconnect_grace_seconds": str(GRACE_S)}
TIMERS = {"discard_ms": 10_000, "claim_ms": 5_000, "bot_delay_ms": 10, "auto_play_delay_ms": 10}


def make(max_hands=2, seed=1, ports=None):
    """Seats 0 and 1 people (0 watching its stream throughout), 2 and 3 bots."""
    table = local_table(
        session_config("t-drop", OVERRIDES, max_hands=max_hands, first_dealer=0, **TIMERS),
        seats(2, prefix="p"),
        policy=simple_policy,
        rng=random.Random(seed),
        ports=ports or Ports(SeededWall(seed), InProcessRules(), InProcessScoring()),
    )
    s = table.session
    s.start()
    P.watch(s)
    P.stream_opened(s, 0)
    P.stream_opened(s, 1)
    table.scheduler.run_due()
    return table


def changes(table, seat):
    return [d["reason"] for k, d in table.events if k == "seat_changed" and d["seat"] == seat]


def results(table):
    return [d for k, d in table.events if k == "hand_result"]


def run_until(table, done, step=50, limit=200_000):
    for _ in range(limit):
        if done():
            return
        table.scheduler.advance(step)
    raise AssertionError("never happened")


def test_a_player_gone_past_the_grace_is_on_tuoguan_at_once_and_escapes_at_the_hands_end():
    table = make()
    s, sched = table.session, table.scheduler
    P.stream_closed(s, 1)
    sched.advance(GRACE_S * 1000 - 1)
    assert "disconnected" not in changes(table, 1)  # not yet
    sched.advance(1)
    assert s.phase == PLAYING and s.hands_played == 0, "the hand ended within the grace"
    assert changes(table, 1)[-2:] == ["disconnected", "auto_play_on"]
    assert s.seats[1].auto_play and not s.seats[1].left
    # still liable for the hand: it is played out on 托管, then the escape comes
    run_until(table, lambda: s.hands_played == 1)
    hand, esc = results(table)[-2:]
    assert hand["outcome"] in ("win", "draw") and esc["outcome"] == "escape"
    assert esc["escaped_seat"] == 1 and esc["escape_reason"] == "disconnected"
    assert esc["hand_id"] == hand["hand_id"]  # itemized with the hand it was liable for
    assert esc["breakdown"][0]["code"] == "ESCAPE_REASON"
    assert esc["breakdown"][0]["amount"] == 2  # 1 × stake 1 × 底分 2
    assert esc["payments"] == [0, -2, 0, 0] and esc["house"] == 2  # 75% of 2: 0 each
    assert s.seats[1].left and s.huangfan == 0 and changes(table, 1)[-1] == "left"
    assert s.seats[1].chips == hand["payments"][1] - 2
    reported = [d for k, d in table.reports if k == "hand"]
    assert reported[-1]["escaped_seat"] == 1 and reported[-1]["payments"] == [0, -2, 0, 0]
    # a bot plays the seat for the rest of the table: seat 0's player is still there
    sched.drain()
    assert s.phase == FINISHED and s.hands_played == 2
    assert [r["outcome"] for r in results(table)].count("escape") == 1


def test_a_player_back_before_the_hands_end_keeps_the_seat_with_no_penalty():
    table = make()
    s, sched = table.session, table.scheduler
    P.stream_closed(s, 1)
    sched.advance(GRACE_S * 1000)
    assert s.seats[1].auto_play and 1 in s.presence.disconnected
    P.stream_opened(s, 1)  # back in time
    assert changes(table, 1)[-2:] == ["reconnected", "auto_play_off"]
    assert not s.seats[1].auto_play and not s.presence.disconnected
    run_until(table, lambda: s.hands_played == 1)
    assert all(r["outcome"] != "escape" for r in results(table))
    assert not s.seats[1].left


def test_a_call_restarts_the_grace_and_an_act_brings_a_disconnected_player_back():
    table = make()
    s, sched = table.session, table.scheduler
    P.stream_closed(s, 1)
    sched.advance(GRACE_S * 1000 - 500)
    assert not P.called(s, 1)  # a GetTableState, say: the grace runs from here
    sched.advance(GRACE_S * 1000 - 1)
    assert "disconnected" not in changes(table, 1)
    sched.advance(1)
    assert "disconnected" in changes(table, 1)
    # its own Act brings it back before the action is applied (the hand may end with it)
    s.config.auto_play_delay_ms = 60_000  # the player answers before the bot would
    run_until(table, lambda: 1 in s.hand.pending or s.phase != PLAYING, step=1)
    assert s.phase == PLAYING, "this seed's hand ended before seat 1 decided"
    p = s.hand.pending[1]
    s.act(1, s.hand.default_action(1) if p.kind == "own_turn" else _pass())
    assert "reconnected" in changes(table, 1) and not s.presence.disconnected
    s.config.auto_play_delay_ms = 10
    run_until(table, lambda: s.hands_played == 1)
    assert all(r["outcome"] != "escape" for r in results(table))


def _pass():
    from shared.table import Pass

    return Pass()


def test_gone_between_hands_leaves_without_a_penalty():
    table = make()
    s, sched = table.session, table.scheduler
    s.config.between_hands_ms = GRACE_S * 1000 * 3
    run_until(table, lambda: s.hands_played == 1, step=10)
    P.stream_closed(s, 1)
    sched.advance(GRACE_S * 1000)
    assert changes(table, 1)[-2:] == ["disconnected", "left"]
    assert s.seats[1].left and all(r["outcome"] != "escape" for r in results(table))


def test_the_disconnection_and_its_escape_survive_a_takeover():
    table = make(ports=Ports(SeededWall(1), InProcessRules(), InProcessScoring()))
    s, sched = table.session, table.scheduler
    P.stream_closed(s, 1)
    sched.advance(GRACE_S * 1000)
    assert s.phase == PLAYING and 1 in s.presence.disconnected
    log = table.log()
    n = len(log)
    # the new owner's wall service: the same walls, as the store holds them
    wall = SeededWall(1)
    wall.hands = {hand_id: hand.copy() for hand_id, hand in s.ports.wall.hands.items()}
    ports = Ports(wall, InProcessRules(), InProcessScoring())
    sched2 = type(sched)(sched.now_ms())
    restored = restore_session(
        "t-drop",
        log,
        timers=TIMERS,
        ports=ports,
        scheduler=sched2,
        emit=lambda ev: log.append(type(log[0])(len(log) + 1, 0, ev)) or len(log),
        report=lambda kind, data: None,
        policy=simple_policy,
    )
    assert len(log) == n
    assert restored.presence.disconnected == {1} and restored.seats[1].auto_play
    P.watch(restored)
    P.stream_opened(restored, 0)  # seat 0's stream moved to the new owner; seat 1's did not
    for _ in range(200_000):
        if restored.hands_played == 1:
            break
        sched2.advance(50)
    escapes = [e.event for e in log if e.event.KIND == "hand_result"]
    assert escapes[-1].outcome == "escape" and escapes[-1].escape_reason == "disconnected"
    assert restored.seats[1].left and restored.huangfan == 0
    # the original, run on, decides the same
    run_until(table, lambda: s.hands_played == 1)
    assert [x.chips for x in s.seats] == [x.chips for x in restored.seats]
    # and the hand still verifies with the escape after its result
    header = {"table_id": "t-drop", "ruleset": "shanghai-qiaoma", "overrides": OVERRIDES}
    header["stake"] = 1
    hid = escapes[-1].hand_id
    verdict = verify_hand(export_hand(header, log, hid))
    assert verdict.ok, verdict.problems
