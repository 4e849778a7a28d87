"""The 倍 model of shanghai-baida (RULES-presets §13.B): 百搭 substitution, each 倍 factor, 花,
the cap, the flipped 百搭, payment, drawn hands, escapes, and the requests it refuses."""

from __future__ import annotations

import pytest

from services.scoring.vector_format import settle_object, settlement_json
from shared.errors import InvalidArgument
from tests.unit.scoring.builders import meld, winner


def baida(w, **extra):
    obj = {"ruleset": "shanghai-baida", "stake": 1, "dealer": 0, "winners": [w]}
    obj.update({"win": "self_draw"} | extra)
    return settle_object(obj)


def first(s) -> dict:
    return settlement_json(s, breakdown=False)["winners"][0]


def factors(s) -> dict[str, int]:
    return {it.code: it.amount for it in s.breakdown if it.code.startswith("BEI_")}


# 平胡 of mixed suits with one 百搭 (completing 345p), no bonus tiles: (2 + 0) × 1 = 2
PING = winner(1, "35p1j456s789s123m4z", "4z")


def test_ping_hu_with_a_wildcard():
    s = baida(PING)
    assert first(s) == {"seat": 1, "hand": "ping_hu", "flowers": 0, "multiplier": 1, "value": 2}
    assert list(s.payments) == [-2, 6, -2, -2]
    wild = next(it for it in s.breakdown if it.code == "WILDCARD")
    assert wild.amount == 1 and "4p" in wild.detail


def test_bonus_tiles_are_one_hua_each():
    s = baida(dict(PING, flowers="1f5z6z7z1a"))
    assert first(s)["flowers"] == 5 and first(s)["value"] == 7
    assert [it.detail for it in s.breakdown if it.code == "BONUS_TILE"] == [
        "1f",
        "5z",
        "6z",
        "7z",
        "1a",
    ]


@pytest.mark.parametrize(
    ("w", "hand", "bei"),
    [
        (winner(1, "222m444s9s1j33z777p", "3z"), "pong_pong", 2),
        (winner(1, "11m44m22p88p33s66s2z", "2z"), "seven_pairs", 2),
        (winner(1, "111m1j33p55p77s22z4z", "4z"), "dragon_seven_pairs", 4),
        (winner(1, "123p456p789p234p1j", "6p"), "full_flush", 4),
        (winner(1, "111p1j33p55p77p22p4p", "4p"), "full_flush_dragon_seven_pairs", 16),
    ],
)
def test_shapes_and_colour(w, hand, bei):
    got = first(baida(w))
    assert (got["hand"], got["multiplier"]) == (hand, bei)


def test_each_declared_kong_doubles():
    w = winner(
        1,
        "78s1j2z",
        "2z",
        [
            meld("added_kong", "6666m", 3),
            meld("exposed_kong", "1111z", 2),
            meld("concealed_kong", "3333p"),
        ],
    )
    s = baida(w)
    assert first(s)["multiplier"] == 8
    assert sum(1 for it in s.breakdown if it.code == "BEI_KONG") == 3


def test_last_tile_and_kong_replacement_double():
    w = winner(1, "123m678s1j55s2z", "2z", [meld("concealed_kong", "4444p")])
    assert factors(baida(w, last_tile=True))["BEI_LAST_TILE"] == 2
    assert factors(baida(w, replacement=True))["BEI_KONG_REPLACEMENT"] == 2


def test_a_flower_replacement_is_no_kong_replacement_unless_the_option_says():
    flower = {"replacement": True, "replacement_after": "flower"}
    assert "BEI_KONG_REPLACEMENT" not in factors(baida(PING, **flower))
    opts = {"options": {"baida_scoring.replacement_after_flower": True}}
    assert factors(baida(PING, **flower, **opts))["BEI_KONG_REPLACEMENT"] == 2


def test_no_wildcard_multiplier():
    natural = winner(1, "345p456s789s123m4z", "4z")
    assert first(baida(natural))["multiplier"] == 1
    opts = {"baida_scoring.no_wildcard_multiplier": 2}
    assert first(baida(natural, options=opts))["multiplier"] == 2
    assert first(baida(PING, options=opts))["multiplier"] == 1


def test_cap_and_no_cap():
    w = winner(1, "333s55s7s1j", "7s", [meld("exposed_kong", "9999s", 0), meld("pong", "111s", 2)])
    w["flowers"] = "1a2a"
    assert first(baida(w))["value"] == 50
    assert first(baida(w, options={"baida_scoring.hand_cap_points": 0}))["value"] == 64


def test_winds_only_are_a_flush_by_option():
    w = winner(1, "111z222z333z4z", "1j", [meld("pong", "444z", 0)])
    assert first(baida(w))["hand"] == "full_flush_pong_pong"
    opts = {"baida_scoring.honors_flush": False}
    assert first(baida(w, options=opts))["hand"] == "pong_pong"


def test_a_shape_worth_zero_is_no_win():
    w = winner(1, "11m44m22p88p33s66s2z", "2z")
    with pytest.raises(InvalidArgument) as e:
        baida(w, options={"baida_scoring.seven_pairs": 0})
    assert e.value.reason == "NOT_A_WIN"


def test_fifth_copy_option():
    # 1111m + 1j: every reading has the 百搭 as a fifth 1m (111m + 1m1j, or 11m + 11m1j)
    w = winner(1, "1111m1j234p567p78s", "9s")
    assert first(baida(w))["hand"] == "ping_hu"
    with pytest.raises(InvalidArgument) as e:
        baida(w, options={"baida_tiles.wildcard_fifth_copy": False})
    assert e.value.reason == "NOT_A_WIN"


def test_no_fifth_copy_counts_the_visible_tiles_and_the_indicator():
    # 222m 444s 777p, 33z + the drawn 3z, and 9s with a 百搭 that can only be its pair
    capped = {"baida_tiles.wildcard_fifth_copy": False}
    w = winner(1, "222m444s9s1j33z777p", "3z")
    assert first(baida(w, options=capped, visible="99s"))["hand"] == "pong_pong"
    with pytest.raises(InvalidArgument) as e:
        baida(w, options=capped, visible="999s")  # with the 9s held, all four are seen
    assert e.value.reason == "NOT_A_WIN"
    assert first(baida(w, visible="999s"))["hand"] == "pong_pong"  # fifth copies allowed
    # flipped: indicator 9s makes 1s wild, and the indicator is a 9s everybody sees
    flipped = capped | {"baida_tiles.wildcards": "flipped"}
    w = winner(1, "222m444s9s1s33z777p", "3z")
    assert first(baida(w, options=flipped, wild_indicator="9s", visible="9s"))["value"] == 4
    with pytest.raises(InvalidArgument) as e:
        baida(w, options=flipped, wild_indicator="9s", visible="99s")
    assert e.value.reason == "NOT_A_WIN"
    with pytest.raises(InvalidArgument, match="visible holds 4 9s and the hand 1"):
        baida(winner(1, "222m444s9s1j33z777p", "3z"), visible="9999s")


@pytest.mark.parametrize(("wild", "indicator"), [("next", "3p"), ("same", "4p")])
def test_flipped_wildcards(wild, indicator):
    opts = {"baida_tiles.wildcards": "flipped", "baida_tiles.flipped_wild": wild}
    # 4p is wild: it completes 35p as 345p or stands for 4p itself
    w = winner(1, "35p4p456s789s123m4z", "4z")
    s = baida(w, options=opts, wild_indicator=indicator)
    assert first(s)["hand"] == "ping_hu"
    assert any(it.code == "WILDCARD" for it in s.breakdown)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"win": "discard", "from": 0}, "win"),
        ({"win": "rob_kong", "from": 0}, "win"),
        ({"wild_indicator": "3p"}, "wild_indicator"),
        ({"options": {"baida_tiles.wildcards": "flipped"}}, "wild_indicator"),
        ({"winners": [winner(1, "35p1j456s789s123m5z", "5z")]}, "concealed"),
        (
            {
                "winners": [winner(1, "35p1j456s789s123m4z", "4z", flowers="1a")],
                "options": {"baida_tiles.extra_bonus_tiles": False},
            },
            "seat 1 flowers[0]",
        ),
        (
            {"winners": [winner(1, "35p1j456s78s4z", "4z", [meld("pong", "1j1j1j", 0)])]},
            "melds",
        ),
    ],
)
def test_bad_input_is_refused_naming_the_field(extra, field):
    obj = {
        "ruleset": "shanghai-baida",
        "stake": 1,
        "dealer": 0,
        "winners": [PING],
        "win": "self_draw",
    }
    obj.update(extra)
    with pytest.raises(InvalidArgument) as e:
        settle_object(obj)
    assert e.value.details.get("field") == field


def test_draw_and_escape():
    draw = settle_object({"ruleset": "shanghai-baida", "kind": "draw", "stake": 1, "dealer": 3})
    assert (list(draw.payments), draw.next_dealer, draw.house) == ([0, 0, 0, 0], 3, 0)
    esc = settle_object({"ruleset": "shanghai-baida", "kind": "escape", "stake": 4, "seat": 0})
    # 1 × stake 4 × 底分 2 = 8: 75% = 6 → 2 each, 2 to the house
    assert list(esc.payments) == [-8, 2, 2, 2] and esc.house == 2


KONG = winner(1, "123m678s1j55s2z", "2z", [meld("concealed_kong", "4444p")])  # 平胡, one kong
FLUSH = winner(1, "123p456p789p234p1j", "6p")  # 清一色 平胡


@pytest.mark.parametrize(
    ("w", "option", "value", "bei"),
    [
        (KONG, "baida_scoring.kong_doubling", 2, 4),  # 1 × 2^2
        (KONG, "baida_scoring.ping_hu", 3, 6),  # 3 × 2
        (FLUSH, "baida_scoring.full_flush", 3, 3),  # 1 × 3
    ],
)
def test_multipliers_are_options(w, option, value, bei):
    assert first(baida(w, options={option: value}))["multiplier"] == bei


def test_garden_stacks_limit_what_a_player_pays():
    opts = {"payment.garden": True}
    s = baida(PING, options=opts, garden_stacks=[1, 100, 100, 0])
    assert list(s.payments) == [-1, 3, -2, 0]
    assert s.garden_stacks_after == (0, 103, 98, 0)
