"""Whole hands of shanghai-old and shanghai-baida through the hand engine with in-process
wall, rules and scoring: at every prompt every tile of the preset's set is accounted for
(152 in baida), every hand settles to zero, its replay verifies, and baida's wins are all
self-drawn while old may win on discards."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.bots import engine_policy, make_bot
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.replay import export_hand
from services.gateway.domain.session import FINISHED, Ports, Seat, SessionConfig, TableSession
from services.gateway.verify import verify_hand
from shared import tiles as T
from shared.ruleset import resolve_ruleset
from shared.tile_set import tile_set_of
from tests.doubles.scheduler import ManualScheduler
from tests.support.events import json_log
from tests.support.sessions import reraise


def play(ruleset_name: str, overrides: dict, bot: str, seed: int, hands: int) -> list:
    log: list = []
    holder: dict = {}
    ruleset = resolve_ruleset(ruleset_name, overrides)
    size = tile_set_of(ruleset).size

    def emit(ev):
        log.append(LoggedEvent(len(log) + 1, 0, ev))
        session = holder.get("session")
        if ev.KIND == "prompt" and session is not None and session.hand is not None:
            assert session.hand.tiles_accounted() == size
        return len(log)

    sched = ManualScheduler()
    session = TableSession(
        SessionConfig("t-preset", ruleset, ruleset_name, overrides, 1, max_hands=hands),
        [Seat(player_id=f"b{i}", bot=True) for i in range(4)],
        ports=Ports(InProcessWall(), InProcessRules(), InProcessScoring()),
        scheduler=sched,
        emit=emit,
        report=lambda kind, data: None,
        policy=engine_policy(make_bot(bot, seed=seed)),
        on_halted=reraise,
    )
    holder["session"] = session
    session.start()
    sched.drain()
    assert session.phase == FINISHED
    header = {"table_id": "t-preset", "ruleset": ruleset_name, "overrides": overrides, "stake": 1}
    for hid in [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]:
        verdict = verify_hand(export_hand(header, log, hid))
        assert verdict.ok, verdict.problems
    for _, _, kind, d in json_log(log):
        if kind == "hand_result":
            assert sum(d["payments"]) + d["house"] == 0
    return json_log(log)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), preset=st.sampled_from(["shanghai-old", "shanghai-baida"]))
def test_random_bots_play_both_presets(seed, preset):
    log = play(preset, {}, "random", seed, 2)
    if preset == "shanghai-baida":
        wins = [d for _, _, k, d in log if k == "win_declared"]
        assert all(w["win_kind"] == "self_draw" for w in wins)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000), same=st.booleans())
def test_random_bots_play_the_flipped_wildcard(seed, same):
    overrides = {"baida_tiles.wildcards": "flipped"}
    if same:
        overrides["baida_tiles.flipped_wild"] = "same"
    log = play("shanghai-baida", overrides, "random", seed, 2)
    flips = [d for _, _, k, d in log if k == "wild_flipped"]
    assert len(flips) == 2 and all(d["wild"] for d in flips)


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [
        ("shanghai-old", {}),
        ("shanghai-baida", {}),
        ("shanghai-baida", {"baida_tiles.extra_bonus_tiles": "false"}),
        ("shanghai-baida", {"baida_tiles.wildcards": "flipped"}),
        (
            "shanghai-baida",
            {"baida_tiles.wildcards": "flipped", "baida_tiles.flipped_wild": "same"},
        ),
        # no fifth copies: rules and scoring both count what the winner sees
        ("shanghai-baida", {"baida_tiles.wildcard_fifth_copy": "false"}),
        (
            "shanghai-baida",
            {"baida_tiles.wildcards": "flipped", "baida_tiles.wildcard_fifth_copy": "false"},
        ),
    ],
)
def test_the_planner_finishes_hands_of_each_preset(preset, overrides):
    log = play(preset, overrides, "planner", 7, 4)
    results = [d for _, _, k, d in log if k == "hand_result"]
    assert len(results) == 4
    flips = [d for _, _, k, d in log if k == "wild_flipped"]
    assert len(flips) == (4 if overrides.get("baida_tiles.wildcards") == "flipped" else 0)


def test_the_view_shows_the_flipped_indicator_and_wild_kind():
    """A seat's and a spectator's view name the indicator turned up and this hand's wild kind,
    as the wild_flipped event did (a reconnecting client learns them from GetTableState)."""
    from tests.support.sessions import local_table, seats, session_config

    overrides = {"baida_tiles.wildcards": "flipped"}
    t = local_table(
        session_config("t-flip-view", overrides, ruleset="shanghai-baida", max_hands=1),
        seats(0),
        policy=engine_policy(make_bot("random", seed=2)),
    )
    t.session.start()
    for _ in range(50):
        if any(k == "wild_flipped" for k, _ in t.events):
            break
        t.scheduler.run_due()
    (flip,) = [d for k, d in t.events if k == "wild_flipped"]
    for viewer in (None, 0, 2):
        hand = t.session.seat_view(viewer)["hand"]
        assert T.format_tile(hand["wild_kind"]) == flip["wild"]
        assert T.format_tile(hand["wild_indicator"]) == flip["indicator"]
