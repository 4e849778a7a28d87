"""The value of a 户/番 hand (RULES-presets §13.A.7): rounding, the limit, the arrangement
chosen, and the checks that refuse a bad request."""

from __future__ import annotations

import pytest

from services.scoring.domain.old.value import limited, round_up
from services.scoring.vector_format import settle_object, settlement_json
from shared.errors import InvalidArgument
from tests.unit.scoring.builders import meld, winner


def old(winners, win="self_draw", **extra):
    obj = {"ruleset": "shanghai-old", "stake": 1, "dealer": 0, "winners": winners, "win": win}
    obj.update(extra)
    return settle_object(obj)


def first(s) -> dict:
    return settlement_json(s, breakdown=False)["winners"][0]


@pytest.mark.parametrize(
    ("hu", "step", "want"), [(22, 1, 22), (22, 10, 30), (30, 10, 30), (1, 4, 4)]
)
def test_round_up(hu, step, want):
    assert round_up(hu, step) == want


def test_limit_and_no_limit():
    assert limited(32, 4, 500) == (512, 500)
    assert limited(32, 4, 0) == (512, 512)
    assert limited(20, 1, 500) == (40, 40)


# 123m 456m 789m 23p 55s + 4p self-drawn: 22 户, 门清 → 44
PLAIN = winner(1, "123m456m789m23p55s", "4p")


def test_rounding_option_rounds_hu_before_doubling():
    s = old([PLAIN], options={"old_scoring.hu_round_up_to": 10})
    w = first(s)
    assert (w["hu"], w["value"]) == (22, 60)
    assert any(it.code == "HU_ROUNDED" and it.amount == 30 for it in s.breakdown)


def test_the_limit_is_an_option():
    flush = winner(1, "123s456s789s23s55s", "4s", flowers="1234f")  # 30 户, 门清 + 清一色 = 5 番
    assert first(old([flush]))["value"] == 500
    assert first(old([flush], options={"old_scoring.limit_hu": 0}))["value"] == 30 * 32
    s = old([flush])
    assert any(it.code == "OLD_LIMIT" for it in s.breakdown)


def test_seven_pairs_over_standard_when_it_scores_more():
    # 223344m 556677p 88s + 8s: a standard hand (chows) and 七对 at once
    w = winner(1, "223344m556677p8s", "8s")
    got = first(old([w]))
    assert got["hand"] == "seven_pairs" and "seven_pairs" in got["fan_items"]


def test_seven_pairs_can_be_switched_off():
    w = winner(1, "1133m5577p99s22z6z", "6z")
    with pytest.raises(InvalidArgument) as e:
        old([w], options={"old_fan.seven_pairs": 0})
    assert e.value.reason == "NOT_A_WIN"


def test_breakdown_lines_add_up_to_the_totals():
    w = winner(2, "555z22s11z", "2s", [meld("pong", "999m", 0), meld("chow", "234p", 1)], "6f")
    s = old([w], "discard", **{"from": 0})
    hu = sum(it.amount for it in s.breakdown if it.code.startswith("HU_") and it.code != "HU_TOTAL")
    fan = sum(
        it.amount for it in s.breakdown if it.code.startswith("FAN_") and it.code != "FAN_TOTAL"
    )
    got = first(s)
    assert (hu, fan) == (got["hu"], got["fan"])
    assert got["value"] == got["hu"] * 2 ** got["fan"]


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ({"win": "eight_flowers"}, "win"),
        ({"win": "discard", "from": 3, "last_tile": True}, "last_tile"),
        ({"replacement_after": "wall"}, "replacement_after"),
        ({"winners": [winner(1, "123m456m789m23p5s1j", "4p")]}, "seat 1 concealed tiles"),
        ({"winners": [winner(1, "123m456m789m23p55s", "4p", flowers="1a")]}, "seat 1 flowers"),
        ({"winners": [winner(1, "123m456m789m24p55s", "7p")]}, "winners"),
    ],
)
def test_bad_input_is_refused_naming_the_field(obj, field):
    base = {"ruleset": "shanghai-old", "stake": 1, "dealer": 0, "winners": [PLAIN]}
    base.update({"win": "self_draw"} | obj)
    with pytest.raises(InvalidArgument) as e:
        settle_object(base)
    assert e.value.details.get("field") == field
