"""The value pipeline of RULES §8, step by step, and shanghai-classic's values (seed 001)."""

from __future__ import annotations

import pytest

from tests.unit.scoring.builders import meld, settle, winner

# 碰碰胡 on a discard, exposed (no 门清): 1f3f + concealed East triplet = 3 花, value 5
PONG_PONG = winner(1, "222m444p9s111z", "9s", [meld("pong", "777s", 0)], "13f")
# 清一色, concealed
FULL_FLUSH = winner(1, "1112345678999p", "5p")
# 混一色, concealed, 白 triplet: 2 花
HALF_FLUSH = winner(1, "123456789p5556z", "6z")
# 混碰 exposed
HALF_FLUSH_PONGS = winner(1, "22266699s55z", "9s", [meld("pong", "111z", 3)])
# 清碰 exposed
FULL_FLUSH_PONGS = winner(1, "5557779s", "9s", [meld("pong", "111s", 3), meld("pong", "333s", 2)])
# 乱风向, concealed, no sets
ALL_HONORS = winner(1, "1122334455667z", "7z")
# 风碰 exposed
ALL_HONOR_PONGS = winner(1, "2223777z", "3z", [meld("pong", "111z", 3), meld("pong", "555z", 0)])
# 碰碰胡 大吊车: four exposed pongs, single 9s
BIG_HANGING = winner(
    1,
    "9s",
    "9s",
    [
        meld("pong", "111m", 0),
        meld("pong", "333p", 2),
        meld("pong", "555s", 3),
        meld("pong", "777m", 0),
    ],
)


def value(w, **kw):
    kw.setdefault("win", "discard")
    if kw["win"] in ("discard", "rob_kong"):
        kw.setdefault("from", 2 if w["seat"] != 2 else 3)
    s = settle(winners=[w], **kw)
    return s.winners[0], s


def codes(s):
    return [i.code for i in s.breakdown]


def test_raw_is_base_points_plus_flowers_for_a_flower_scored_hand():
    r, _ = value(PONG_PONG)
    assert (r.hand.label, r.flowers, r.value) == ("pong_pong", 3, 5)


@pytest.mark.parametrize(
    ("w", "hand", "points"),
    [
        (HALF_FLUSH_PONGS, "half_flush_pongs", 10),
        (FULL_FLUSH_PONGS, "full_flush_pongs", 20),
        (ALL_HONOR_PONGS, "all_honor_pongs", 40),
    ],
)
def test_fixed_hands_are_lezi_times_lezi_points(w, hand, points):
    r, _ = value(w)
    assert (r.hand.label, r.value) == (hand, points)


def test_full_flush_is_one_lezi_doubled_by_menqing_to_the_shuang_le_cap():
    r, s = value(FULL_FLUSH)
    assert r.value == 20  # 10 × 2 门清, cap 1 lifted to 2 by 门清
    assert "CONCEALED_HAND" in codes(s)


def test_all_honors_concealed_stays_at_its_two_lezi_cap():
    r, _ = value(ALL_HONORS)
    assert (r.hand.label, r.value) == ("all_honors", 20)


def test_replacement_win_floors_a_small_hand_to_one_lezi():
    w = dict(PONG_PONG, melds=[meld("pong", "777s", 0)])
    r, s = value(w, win="self_draw", replacement=True)
    assert r.value == 10
    assert "FLOOR_TO_LEZI" in codes(s)


def test_big_hanging_floors_a_small_hand_to_one_lezi():
    r, s = value(BIG_HANGING)
    assert (r.hand.label, r.flowers, r.value) == ("pong_pong", 0, 10)
    floor = next(i for i in s.breakdown if i.code == "FLOOR_TO_LEZI")
    assert "大吊车" in floor.detail


def test_floor_leaves_a_hand_already_worth_a_lezi_unchanged():
    w = winner(1, "9s", "9s", [meld("pong", x, 0) for x in ("111s", "333s", "555s", "777s")])
    r, _ = value(w)
    assert (r.hand.label, r.value) == ("full_flush_pongs", 20)


def test_no_floor_when_the_ruleset_has_none():
    r, _ = value(BIG_HANGING, options={"scoring.floor_to_lezi": False})
    assert r.value == 2


def test_kaibao_doubles_and_lifts_the_cap():
    r, s = value(PONG_PONG, dice=[3, 3])
    assert r.value == 10 and "DICE_BONUS" in codes(s)
    r, _ = value(HALF_FLUSH_PONGS, dice=[1, 4])
    assert (r.value, r.cap_lezi) == (20, 2)


def test_kaibao_off_in_the_ruleset():
    r, _ = value(PONG_PONG, dice=[3, 3], options={"scoring.kaibao": False})
    assert r.value == 5


def test_huangfan_doubles_once_whatever_the_counter():
    for counter in (1, 3):
        r, s = value(PONG_PONG, huangfan=counter)
        assert r.value == 10
        assert codes(s).count("DRAWN_HAND_BONUS") == 1


def test_cap_lifts_multiply_kaibao_and_huangfan():
    # 清碰 (cap 2) + 开宝 + 荒番: 20 × 4 = 80, cap 2 × 2 × 2 = 8 勒子, table cap 5 勒子
    r, s = value(FULL_FLUSH_PONGS, dice=[6, 6], huangfan=1)
    assert r.value == 50
    assert "TABLE_CAP" in codes(s)
    # 混碰 (cap 1) + 开宝 + 荒番: 10 × 4 = 40, cap 1 × 2 × 2 = 4 → 40
    r, _ = value(HALF_FLUSH_PONGS, dice=[6, 6], huangfan=1)
    assert (r.value, r.cap_lezi) == (40, 4)


def test_hand_cap_stops_a_value_without_lifts():
    r, s = value(FULL_FLUSH, options={"scoring.menqing_min_cap_lezi": 1})
    assert r.value == 10  # 20 after 门清, capped at 1 勒子
    cap = next(i for i in s.breakdown if i.code == "HAND_CAP")
    assert "20 → 10" in cap.detail


def test_menqing_lifts_only_a_one_lezi_cap():
    r, _ = value(HALF_FLUSH, dice=[3, 3])  # (2+2) × 2 门清 × 2 开宝 = 16, cap 2
    assert (r.flowers, r.value) == (2, 16)


def test_table_cap_five_lezi():
    r, _ = value(ALL_HONOR_PONGS, dice=[1, 4])
    assert r.value == 50


def test_eight_flowers_takes_kaibao_but_not_menqing():
    w = winner(3, "1235m467p3s12z", "8f", [], "1234567f")
    w["concealed"] = "1235m467p3s12z999s"
    r, s = value(w, win="eight_flowers", ready=[])
    assert (r.hand.label, r.flowers, r.value) == ("eight_flowers", 8, 20)
    assert "CONCEALED_HAND" not in codes(s)
    r, _ = value(w, win="eight_flowers", ready=[], dice=[2, 2])
    assert r.value == 40
    # the eighth flower may also be listed among the flowers: still 8, not 9
    r, _ = value(dict(w, flowers="12345678f"), win="eight_flowers", ready=[])
    assert (r.flowers, r.value) == (8, 20)


# --- shanghai-classic (seed 001) ------------------------------------------------------------
def classic(w, **kw):
    kw.setdefault("dice", [2, 5])  # no dice 荒番
    return value(w, ruleset="shanghai-classic", **kw)


def test_classic_one_lezi_is_50_and_full_flush_is_one():
    r, _ = classic(FULL_FLUSH)
    assert r.value == 50


@pytest.mark.parametrize(
    ("w", "lezi"),
    [
        (HALF_FLUSH_PONGS, 1),  # 混碰
        (FULL_FLUSH_PONGS, 2),  # 清碰
        (ALL_HONORS, 2),  # 乱风向
        (ALL_HONOR_PONGS, 4),  # 字一色
        (BIG_HANGING, 1),  # 大吊车
    ],
)
def test_classic_la_values(w, lezi):
    r, _ = classic(w)
    assert r.value == lezi * 50


def test_classic_flower_scored_hand_counts_base_flowers():
    r, _ = classic(PONG_PONG)  # 底注花 3 + 2 flowers + East triplet 1 = 6 花, 底分 0
    assert (r.flowers, r.value) == (6, 6)


def test_classic_replacement_win_doubles_instead_of_flooring():
    w = dict(PONG_PONG)
    r, s = classic(w, win="self_draw", replacement=True)
    assert r.value == 12
    assert "REPLACEMENT_WIN" in codes(s) and "FLOOR_TO_LEZI" not in codes(s)


def test_classic_menqing_doubles():
    r, _ = classic(HALF_FLUSH)  # 3 底注花 + 2 (白 triplet) = 5 花 × 2
    assert r.value == 10


def test_classic_rob_kong_triples_and_the_robbed_player_pays_one_share():
    # 混一色 robbing 5p for the 4-6 run: 底注花 3 + 白 triplet 2 = 5, ×2 门清, ×3 抢杠
    w = winner(1, "12346789p55566z", "5p")
    r, s = classic(w, win="rob_kong", **{"from": 3})
    assert r.value == 30
    assert list(s.payments) == [0, 30, 0, -30]


def test_classic_eight_flowers_is_six_la():
    w = winner(3, "1235m467p3s12z999s", "8f", [], "1234567f")
    r, _ = classic(w, win="eight_flowers", ready=[])
    assert r.value == 300


def test_classic_heavenly_and_earthly_wins():
    dealer_hand = winner(0, "222m444p9s111z777s", "9s")
    r, s = classic(dealer_hand, win="self_draw", first_go_around=True, ready=[])
    assert r.value == 500  # 天胡 10 喇
    assert "HEAVENLY_WIN" in codes(s)
    other = dict(dealer_hand, seat=2)
    r, s = classic(other, win="self_draw", first_go_around=True, ready=[])
    assert r.value == 400  # 地胡 8 喇
    assert "EARTHLY_WIN" in codes(s)


def test_classic_dice_huangfan_doubles_this_hand():
    r, s = classic(PONG_PONG, dice=[1, 1])
    assert r.value == 12
    assert s.huangfan == 2
