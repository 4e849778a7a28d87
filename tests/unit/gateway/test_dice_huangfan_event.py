"""骰子荒番 shown (B5): under ``scoring.dice_huangfan`` (shanghai-classic) ``hand_started`` and
the view carry the 荒番 the hand is played under (the counter plus the dice's), the dice's part
apart, the value scoring settles with; replays still verify."""

from __future__ import annotations

from services.gateway.bots import engine_policy, make_bot
from services.gateway.domain.replay import export_hand
from services.gateway.domain.session import FINISHED
from services.gateway.verify import verify_hand
from services.wall.domain import shuffle
from tests.support.events import event_proto
from tests.support.sessions import local_table, seats, session_config

# Seeds whose dice are (1,1): +2, (2,1): +1, (5,2): +0 (services.wall.domain.shuffle).
SEEDS = {43: 2, 2: 1, 0: 0}


def test_hand_started_shows_the_dice_huangfan(monkeypatch):
    order = [43, 2, 0, 43]
    seeds = iter(order)
    monkeypatch.setattr(shuffle, "new_seed", lambda: next(seeds).to_bytes(32, "big"))
    table = local_table(
        session_config(
            "t-classic", ruleset="shanghai-classic", max_hands=len(order), first_dealer=0
        ),
        seats(),
        policy=engine_policy(make_bot("planner", seed=5)),
    )
    table.play_out()
    session, events = table.session, table.events
    assert session.phase == FINISHED
    started = [d for k, d in events if k == "hand_started"]
    results = [d for k, d in events if k == "hand_result"]
    assert len(started) == len(order)
    counter = checked = 0
    for seed, hand, result in zip(order, started, results, strict=True):
        bonus = SEEDS[seed]
        assert hand["huangfan_dice"] == bonus
        assert hand["huangfan"] == counter + bonus
        settled = {b["code"]: b["amount"] for b in result["breakdown"]}
        if "HUANGFAN_THIS_HAND" in settled:  # scoring's own count agrees
            checked += 1
            assert settled["HUANGFAN_THIS_HAND"] == hand["huangfan"]
        counter = result["next_huangfan"]
    assert checked
    assert session.seat_view(0)["hand"]["huangfan"] == started[-1]["huangfan"]
    e = event_proto(1, 0, "hand_started", started[0])
    assert e.hand_started.huangfan == 2 and e.hand_started.huangfan_dice == 2
    log = table.log()
    header = {"table_id": "t-classic", "ruleset": "shanghai-classic", "overrides": {}, "stake": 1}
    for d in started:
        verdict = verify_hand(export_hand(header, log, d["hand_id"]))
        assert verdict.ok, verdict.problems


def test_without_the_option_the_event_is_unchanged():
    """shanghai-qiaoma has no dice 荒番: no huangfan_dice key (old logs replay as before)."""
    from tests.unit.gateway.scripted import ScriptedWall, engine

    hands = ["111m222m333p444p55s", "1234567s123p45z", "1234567s123p46z", "1234567p123s47z"]
    eng, events = engine(ScriptedWall(hands, live="9p", dice=(1, 1)), huangfan=1)
    eng.start()
    started = next(d for k, d in events if k == "hand_started")
    assert started["huangfan"] == 1 and "huangfan_dice" not in started
    assert eng.huangfan == 1
