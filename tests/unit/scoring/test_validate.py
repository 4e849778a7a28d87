"""Bad input is INVALID_ARGUMENT naming the problem, before anything is settled."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.scoring.vector_format import settle_object
from shared.errors import InvalidArgument
from tests.conftest import load_vectors
from tests.unit.scoring.builders import hand_obj, meld, settle, winner

PONG_PONG = winner(1, "222m444p9s111z", "9s", [meld("pong", "777s", 0)], "13f")


def rejects(match, **kw):
    with pytest.raises(InvalidArgument, match=match) as info:
        settle(**kw)
    return info.value


def test_a_claimed_win_that_is_no_win():
    plain = winner(1, "123m456p789s11z234m", "1z")
    plain["concealed"] = "123m456p789s1z234m"
    err = rejects("is no allowed winning hand", winners=[plain], win="self_draw")
    assert err.reason == "NOT_A_WIN"


def test_a_win_without_the_ready_declaration():
    rejects("without having declared ready", winners=[PONG_PONG], win="self_draw", ready=[0])


def test_ready_not_needed_when_the_ruleset_says_so():
    s = settle(
        winners=[PONG_PONG],
        win="self_draw",
        ready=[],
        options={"ready.require_declare_ready": False},
    )
    assert s.winners[0].value == 5


def test_wrong_tile_count():
    short = dict(PONG_PONG, concealed="222m444p111z")
    rejects("13 tiles in all .* a winning hand has 14", winners=[short], win="self_draw")


def test_more_than_four_copies_counting_melds():
    five = winner(1, "777s444p9s111z", "9s", [meld("exposed_kong", "7777s", 0)])
    five["concealed"] = "77s444p99s111z"
    five["win_tile"] = "4p"
    rejects("holds 6 copies of 7s|copies of 7s", winners=[five], win="self_draw")


def test_more_than_four_copies_across_winners():
    a = winner(1, "999m444p9s111z", "9s", [meld("pong", "777s", 0)])
    b = winner(2, "999m666p9s555z", "9s", [meld("pong", "888s", 3)])
    rejects("the winners hold 6 copies of 9m", winners=[a, b], win="discard", **{"from": 0})


def test_a_flower_held_by_two_winners():
    a = winner(1, "222m444p9s111z", "9s", [meld("pong", "777s", 0)], "1f")
    b = winner(2, "555m666p9s555z", "9s", [meld("pong", "888s", 3)], "1f")
    rejects("flower 1f held by 2 winners", winners=[a, b], win="discard", **{"from": 0})


def test_discarder_who_is_also_the_winner():
    rejects(
        "seat 1 is both the discarder and a winner",
        winners=[PONG_PONG],
        win="discard",
        **{"from": 1},
    )


def test_seats_out_of_range():
    rejects("winner seat 4 out of range 0-3", winners=[dict(PONG_PONG, seat=4)], win="self_draw")
    rejects("discarder seat 7 out of range", winners=[PONG_PONG], win="discard", **{"from": 7})
    rejects("dealer seat -1 out of range", winners=[PONG_PONG], win="self_draw", dealer=-1)
    rejects("ready seat 9 out of range", winners=[PONG_PONG], win="self_draw", ready=[1, 9])


def test_negative_or_zero_stake():
    rejects("stake -5 must be a positive", winners=[PONG_PONG], win="self_draw", stake=-5)
    rejects("stake 0 must be a positive", winners=[PONG_PONG], win="self_draw", stake=0)


def test_unknown_ruleset():
    rejects(
        "unknown ruleset 'shanghai-moon'",
        winners=[PONG_PONG],
        win="self_draw",
        ruleset="shanghai-moon",
    )
    rejects(
        "unknown ruleset option", winners=[PONG_PONG], win="self_draw", options={"scoring.nope": 1}
    )


def test_discard_win_needs_a_discarder_and_self_draw_has_none():
    rejects("needs the discarder", winners=[PONG_PONG], win="discard")
    rejects("has no discarder, but from = 2", winners=[PONG_PONG], win="self_draw", **{"from": 2})


def test_replacement_only_on_a_self_draw():
    rejects(
        "杠开.* is a self-draw", winners=[PONG_PONG], win="discard", **{"from": 2}, replacement=True
    )


def test_rob_kong_when_the_winner_holds_the_robbed_kind():
    rejects(
        "robs a kong of 9s but holds 1 more", winners=[PONG_PONG], win="rob_kong", **{"from": 2}
    )


def test_meld_claimed_from_the_winner_itself():
    w = dict(PONG_PONG, melds=[meld("pong", "777s", 1)])
    rejects("claimed from itself", winners=[w], win="self_draw")


def test_claims_must_cover_the_winners_melds():
    rejects(
        "shows 1 melds claimed from seat 0 but the claims list only 0",
        winners=[PONG_PONG],
        win="self_draw",
        claims=[[2, 3]],
    )


def test_eight_flowers_needs_all_eight():
    w = winner(3, "1235m467p3s12z999s", "8f", [], "123456f")
    rejects("missing 7f", winners=[w], win="eight_flowers", ready=[])


def test_dice_out_of_range_or_missing():
    rejects("die 7 out of range 1-6", winners=[PONG_PONG], win="self_draw", dice=[7, 1])
    obj = hand_obj(winners=[PONG_PONG], win="self_draw")
    del obj["dice"]
    with pytest.raises(InvalidArgument, match="dice are required"):
        settle_object(obj)


def test_bad_notation_and_unknown_win_kind():
    rejects("no tile 8z", winners=[dict(PONG_PONG, concealed="222m444p9s888z")], win="self_draw")
    rejects("unknown win 'tsumo'", winners=[PONG_PONG], win="tsumo")


def test_several_winners_only_on_a_discard():
    b = winner(2, "555m666p9s555z", "9s", [meld("pong", "888s", 3)])
    rejects("exactly one winner", winners=[PONG_PONG, b], win="self_draw")


# --- any malformed JSON is INVALID_ARGUMENT, never a crash --------------------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
VECTORS = load_vectors("scoring.jsonl")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(VECTORS), st.data())
def test_malformed_vector_input_is_invalid_argument(vector, data):
    obj = copy.deepcopy(vector)
    target = obj
    if obj.get("winners") and data.draw(st.booleans()):
        target = data.draw(st.sampled_from(obj["winners"]))
        if target.get("melds") and data.draw(st.booleans()):
            target = data.draw(st.sampled_from(target["melds"]))
    key = data.draw(st.sampled_from(sorted(target)))
    target[key] = data.draw(JSON)
    try:
        settle_object(obj)
    except InvalidArgument as exc:
        assert exc.message


def test_the_baida_tiles_are_refused_outside_shanghai_baida():
    wild = winner(1, "222m444p1j111z", "9s", [meld("pong", "777s", 0)])
    assert rejects("百搭 1j", winners=[wild], win="self_draw").details["field"] == (
        "seat 1 concealed tiles"
    )
    in_meld = winner(1, "222m444p9s111z", "9s", [meld("pong", "1j1j1j", 0)])
    assert (
        rejects("playing tiles only", winners=[in_meld], win="self_draw").details["field"]
        == "melds"
    )
    extra = winner(1, "222m444p9s111z", "9s", [meld("pong", "777s", 0)], "1a")
    assert rejects("not a flower", winners=[extra], win="self_draw").details["field"] == (
        "seat 1 flowers"
    )
