"""八花齐 over the API (B1): the options say which wins are possible, and ``Win.eight_flowers``
picks 八花齐 over the winning hand when both are (a bare Win declares the winning hand)."""

from __future__ import annotations

import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb

from mahjong_client.convert import options_from_prompt
from services.gateway.bots import legal_actions
from services.gateway.bots.view import SeatView
from services.gateway.convert.actions import action_from_proto, action_to_proto
from shared.errors import FailedPrecondition
from shared.hand.hand_type import HandType
from shared.table import Win
from tests.support.events import options_proto
from tests.unit.gateway.scripted import ScriptedWall, engine

NO_DECLARE = {"ready.require_declare_ready": "false"}  # a winning hand without 敲 first


def dealer_with_eight_flowers(overrides):
    """The dealer is dealt all eight flowers; its replacements complete 碰碰胡."""
    wall = ScriptedWall(
        ["12345678f111m222m", "1234567s123p45z", "1234567s123p46z", "1234567p123s47z"],
        live="9p9p9p9p",
        tail="333p444p55s1z1z1z1z",
    )
    eng, events = engine(wall, overrides=overrides)
    eng.start()
    return eng, events


def last_prompt(events):
    return [d for k, d in events if k == "prompt"][-1]


def test_prompt_names_both_wins_and_eight_flowers_is_chosen_when_asked():
    eng, events = dealer_with_eight_flowers(NO_DECLARE)
    opts = last_prompt(events)["options"]
    assert opts["win"] and opts["win_eight_flowers"] and opts["win_shape"]
    eng.act(0, Win(eight_flowers=True))
    win = next(d for k, d in events if k == "win_declared")
    assert win["hand"] == HandType.EIGHT_FLOWERS.label
    assert win["win_kind"] == "eight_flowers"


def test_a_bare_win_declares_the_winning_hand():
    eng, events = dealer_with_eight_flowers(NO_DECLARE)
    eng.act(0, Win())
    win = next(d for k, d in events if k == "win_declared")
    assert win["hand"] == HandType.PONG_PONG.label


def test_only_eight_flowers_offered_says_so_and_a_bare_win_takes_it():
    eng, events = dealer_with_eight_flowers({})  # 敲 required: no winning hand yet
    opts = last_prompt(events)["options"]
    assert opts["win"] and opts["win_eight_flowers"] and not opts["win_shape"]
    eng.act(0, Win())
    assert next(d for k, d in events if k == "win_declared")["win_kind"] == "eight_flowers"


def test_eight_flowers_asked_without_them_is_refused_and_changes_nothing():
    wall = ScriptedWall(
        ["111m222m333p444p55s", "1234567s123p45z", "1234567s123p46z", "1234567p123s47z"],
        live="9p9p9p9p",
    )
    eng, events = engine(wall, overrides=NO_DECLARE)
    eng.start()
    opts = last_prompt(events)["options"]
    assert opts["win"] and "win_eight_flowers" not in opts
    before = eng.copy_state()
    with pytest.raises(FailedPrecondition, match="八花齐"):
        eng.act(0, Win(eight_flowers=True))
    assert eng.copy_state() == before


def test_proto_round_trip_of_the_flag_and_the_options():
    assert action_from_proto(pb.Action(win=pb.Win(eight_flowers=True))) == Win(True)
    assert action_from_proto(pb.Action(win=pb.Win())) == Win(False)
    assert action_to_proto(Win(True)).win.eight_flowers
    both = options_proto({"win": True, "win_eight_flowers": True, "win_shape": True})
    assert both.win and both.win_eight_flowers and both.win_shape
    shape_only = options_proto({"win": True})  # an older prompt, or a claim: a winning hand
    assert shape_only.win_shape and not shape_only.win_eight_flowers
    assert not options_proto({"win": False}).win_shape


def test_a_client_offers_both_wins():
    """The Python client (mahjong play, RemotePlayer bots) turns the prompt into both actions."""
    eng, events = dealer_with_eight_flowers(NO_DECLARE)
    prompt = pb.Prompt(
        kind=pb.PROMPT_KIND_OWN_TURN, options=options_proto(last_prompt(events)["options"])
    )
    view = SeatView.from_snapshot(eng.snapshot(), 0)
    options = options_from_prompt(prompt, view)
    assert {w.hand for w in options.wins} == {HandType.PONG_PONG, HandType.EIGHT_FLOWERS}
    wins = [a for a in legal_actions(options) if isinstance(a, Win)]
    assert sorted(w.eight_flowers for w in wins) == [False, True]
