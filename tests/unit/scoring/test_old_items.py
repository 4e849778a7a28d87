"""户 and 番 items of the 户/番 model (RULES-presets §13.A.5-6), one behaviour per test, each
through a whole settlement in the vector format so it reads as a worked example."""

from __future__ import annotations

import pytest

from services.scoring.vector_format import settle_object, settlement_json
from tests.unit.scoring.builders import meld, winner

OLD = "shanghai-old"


def old_hand(w, win="self_draw", **extra) -> dict:
    obj = {"ruleset": OLD, "stake": 1, "dealer": 0, "winners": [w], "win": win}
    obj.update(extra)
    return obj


def settled(w, win="self_draw", **extra):
    return settle_object(old_hand(w, win, **extra))


def codes(s, prefix) -> dict[str, int]:
    out: dict[str, int] = {}
    for it in s.breakdown:
        if it.code.startswith(prefix) and not it.code.endswith("_TOTAL"):
            out[it.code] = out.get(it.code, 0) + it.amount
    return out


def result(s):
    return settlement_json(s, breakdown=False)["winners"][0]


# 123m 456m 789m 234p + 5s: a plain chow hand; the 5s pair is the winning tile (single wait)
PLAIN = winner(1, "123m456m789m234p5s", "5s")


def test_win_self_draw_and_only_wait():
    s = settled(PLAIN)
    assert codes(s, "HU_") == {"HU_WIN": 20, "HU_SELF_DRAW": 2, "HU_ONLY_WAIT": 2}
    assert result(s)["hu"] == 24


def test_a_discard_win_has_no_self_draw_hu():
    s = settled(PLAIN, "discard", **{"from": 0})
    assert "HU_SELF_DRAW" not in codes(s, "HU_")


def test_two_waits_are_no_only_wait():
    # 23p waits on 1p and 4p
    s = settled(winner(1, "123m456m789m23p55s", "4p"))
    assert "HU_ONLY_WAIT" not in codes(s, "HU_")


def test_flowers_are_two_hu_each():
    w = dict(PLAIN, flowers="1357f")
    assert codes(settled(w), "HU_")["HU_FLOWER"] == 8


@pytest.mark.parametrize(
    ("seat", "dealer", "pair", "code"),
    [
        (1, 0, "6z", "HU_PAIR_DRAGON"),
        (1, 0, "2z", "HU_PAIR_SEAT_WIND"),
        (1, 1, "1z", "HU_PAIR_SEAT_WIND"),
    ],
)
def test_pair_of_a_dragon_or_the_seat_wind(seat, dealer, pair, code):
    s = settled(winner(seat, "123m456m789m234p" + pair, pair), dealer=dealer)
    assert codes(s, "HU_")[code] == 2


def test_a_pair_of_another_wind_scores_nothing():
    s = settled(winner(1, "123m456m789m234p3z", "3z"))  # seat 1 is 南; 西 is nobody's here
    assert not {"HU_PAIR_DRAGON", "HU_PAIR_SEAT_WIND"} & set(codes(s, "HU_"))


@pytest.mark.parametrize(
    ("concealed", "melds", "code", "hu"),
    [
        ("555m", [], "HU_PONG_SIMPLE_CONCEALED", 4),
        ("", [meld("pong", "555m", 0)], "HU_PONG_SIMPLE_EXPOSED", 2),
        ("999m", [], "HU_PONG_TERMINAL_CONCEALED", 8),
        ("", [meld("pong", "777z", 0)], "HU_PONG_TERMINAL_EXPOSED", 4),
        ("", [meld("exposed_kong", "5555m", 0)], "HU_KONG_SIMPLE_EXPOSED", 8),
        ("", [meld("added_kong", "5555m", 0)], "HU_KONG_SIMPLE_EXPOSED", 8),
        ("", [meld("concealed_kong", "5555m")], "HU_KONG_SIMPLE_CONCEALED", 16),
        ("", [meld("exposed_kong", "1111s", 0)], "HU_KONG_TERMINAL_EXPOSED", 16),
        ("", [meld("concealed_kong", "4444z")], "HU_KONG_TERMINAL_CONCEALED", 32),
    ],
)
def test_pongs_and_kongs(concealed, melds, code, hu):
    w = winner(1, "123p456p789s" + concealed + "6s", "6s", melds)
    assert codes(settled(w), "HU_")[code] == hu


def test_the_triplet_a_discard_completes_is_exposed():
    w = winner(1, "123p456p789s55m66s", "5m")  # 555m can only be the triplet
    on_discard = codes(settled(w, "discard", **{"from": 0}), "HU_")
    assert on_discard["HU_PONG_SIMPLE_EXPOSED"] == 2
    assert "HU_PONG_SIMPLE_CONCEALED" not in on_discard
    assert codes(settled(w), "HU_")["HU_PONG_SIMPLE_CONCEALED"] == 4


def test_the_winning_tile_completes_the_chow_when_that_scores_more():
    # 3m completes 234m or 333m: on a discard the chow reading keeps 333m concealed
    w = winner(1, "23334m456p789s55z", "3m")
    hus = codes(settled(w, "discard", **{"from": 0}), "HU_")
    assert hus["HU_PONG_SIMPLE_CONCEALED"] == 4
    assert "HU_PONG_SIMPLE_EXPOSED" not in hus


def test_seven_pairs_score_no_set_or_pair_hu():
    w = winner(1, "1133m5577p99s22z6z", "6z", flowers="1f")
    s = settled(w)
    assert result(s)["hand"] == "seven_pairs"
    assert codes(s, "HU_") == {"HU_WIN": 20, "HU_SELF_DRAW": 2, "HU_ONLY_WAIT": 2, "HU_FLOWER": 2}


def fan_items(w, win="self_draw", **extra):
    return result(settled(w, win, **extra))["fan_items"]


def test_menqing_allows_a_concealed_kong_only():
    assert "menqing" in fan_items(PLAIN)
    concealed_kong = winner(1, "123m456m789m5s", "5s", [meld("concealed_kong", "2222p")])
    assert "menqing" in fan_items(concealed_kong)
    chow = winner(1, "123m456m789m5s", "5s", [meld("chow", "234p", 0)])
    assert "menqing" not in fan_items(chow)


def test_colours():
    assert "half_flush" in fan_items(winner(1, "123m456m789m111z5m", "5m"))
    assert "full_flush" in fan_items(winner(1, "123m456m789m111m5m", "5m"))
    honors = fan_items(winner(1, "111z222z333z555z7z", "7z"))
    assert "all_honors" in honors and "half_flush" not in honors and "pong_pong" in honors


def test_pong_pong_dragon_and_seat_wind_pongs_count_each():
    w = winner(1, "555z666z222z111m9s", "9s")  # seat 1 is 南 2z
    items = fan_items(w)
    assert items.count("dragon_pong") == 2
    assert items.count("seat_wind_pong") == 1
    assert "pong_pong" in items


def test_situations():
    assert "last_tile" in fan_items(PLAIN, last_tile=True)
    two_waits = winner(1, "123m456m789m23p55s", "4p")
    assert "rob_kong" in fan_items(two_waits, "rob_kong", **{"from": 0})
    assert "replacement" in fan_items(PLAIN, replacement=True)
    flower = {"replacement": True, "replacement_after": "flower"}
    assert "replacement" in fan_items(PLAIN, **flower)
    off = {"options": {"old_scoring.replacement_after_flower": False}}
    assert "replacement" not in fan_items(PLAIN, **flower, **off)


def test_big_hanging_with_or_without_a_concealed_kong():
    melds = [
        meld("chow", "123m", 0),
        meld("pong", "555p", 2),
        meld("concealed_kong", "7777s"),
        meld("pong", "999m", 3),
    ]
    w = winner(1, "4z", "4z", melds)
    assert "big_hanging" in fan_items(w)
    off = {"options": {"old_scoring.big_hanging_concealed_kong": False}}
    assert "big_hanging" not in fan_items(w, **off)


def test_an_item_set_to_zero_is_not_counted():
    items = fan_items(PLAIN, options={"old_fan.menqing": 0})
    assert "menqing" not in items
