"""花 sources of the winner (RULES §8; seed 001's table for shanghai-classic)."""

from __future__ import annotations

import pytest

from services.scoring.domain.flowers import count_flowers, flower_table
from shared import tiles as T
from shared.melds import Meld
from shared.ruleset import load_ruleset

QIAOMA = load_ruleset("shanghai-qiaoma")
CLASSIC = load_ruleset("shanghai-classic")


def hua(concealed: str, melds=(), flowers: str = "", ruleset=QIAOMA):
    counts = T.parse_counts(concealed)
    total, items = count_flowers(
        counts, [Meld.of(*m) for m in melds], T.parse(flowers), flower_table(ruleset)
    )
    return total, [i.code for i in items]


def test_each_flower_tile_is_one():
    assert hua("", flowers="1358f") == (4, ["FLOWER_TILE"] * 4)


def test_suited_pong_and_chow_give_nothing():
    assert hua("", [("pong", "555m", 1), ("chow", "123p", 3)]) == (0, [])


def test_suited_kongs_exposed_one_concealed_two():
    assert hua("", [("exposed_kong", "5555m", 1)]) == (1, ["SUITED_EXPOSED_KONG"])
    assert hua("", [("concealed_kong", "5555m")]) == (2, ["SUITED_CONCEALED_KONG"])


def test_an_added_kong_is_an_exposed_kong():
    assert hua("", [("added_kong", "5555m", 1)]) == (1, ["SUITED_EXPOSED_KONG"])
    assert hua("", [("added_kong", "2222z", 1)]) == (2, ["WIND_EXPOSED_KONG"])


@pytest.mark.parametrize(
    ("meld", "points", "code"),
    [
        (("pong", "111z", 1), 1, "WIND_PONG"),
        (("exposed_kong", "1111z", 1), 2, "WIND_EXPOSED_KONG"),
        (("concealed_kong", "4444z"), 3, "WIND_CONCEALED_KONG"),
        (("pong", "555z", 1), 2, "DRAGON_PONG"),
        (("exposed_kong", "6666z", 1), 3, "DRAGON_EXPOSED_KONG"),
        (("concealed_kong", "7777z"), 4, "DRAGON_CONCEALED_KONG"),
    ],
)
def test_honor_pongs_and_kongs(meld, points, code):
    assert hua("", [meld]) == (points, [code])


def test_three_identical_honors_held_count_as_a_pong_winning_tile_included():
    # concealed 111z (wind) and 77z + the winning 7z (dragon): 1 + 2
    assert hua("111z777z") == (3, ["WIND_PONG", "DRAGON_PONG"])


def test_four_honors_held_without_a_kong_count_as_one_pong():
    assert hua("1111z") == (1, ["WIND_PONG"])


def test_two_honors_held_give_nothing():
    assert hua("11z55z") == (0, [])


def test_classic_table_with_base_flowers():
    # 底注花 3 always; wind pong 1, dragon pong 2, suited exposed kong 1, suited concealed
    # kong 2, wind exposed kong 2, wind concealed kong 3, dragon exposed kong 3, dragon
    # concealed kong 4 (seed 001)
    assert hua("", ruleset=CLASSIC) == (3, ["BASE_FLOWERS"])
    cases = [
        (("pong", "222z", 1), 1),
        (("pong", "666z", 1), 2),
        (("exposed_kong", "9999s", 1), 1),
        (("concealed_kong", "9999s"), 2),
        (("exposed_kong", "3333z", 1), 2),
        (("concealed_kong", "3333z"), 3),
        (("exposed_kong", "5555z", 1), 3),
        (("concealed_kong", "5555z"), 4),
    ]
    for m, points in cases:
        assert hua("", [m], ruleset=CLASSIC)[0] == 3 + points, m


def test_flower_points_follow_the_ruleset_data():
    doubled = QIAOMA.with_overrides({"flowers.flower_tile": 2, "flowers.wind_pong": 5})
    assert hua("111z", flowers="1f", ruleset=doubled)[0] == 7
