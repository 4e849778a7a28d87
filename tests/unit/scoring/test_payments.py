"""Payments of RULES §9 without 承包: self-draw, discard, 抢杠, 一炮多响."""

from __future__ import annotations

from tests.unit.scoring.builders import meld, settle, winner

PONG_PONG = winner(1, "222m444p9s111z", "9s", [meld("pong", "777s", 0)], "13f")  # value 5


def test_self_draw_each_other_player_pays_one_share():
    s = settle(winners=[PONG_PONG], win="self_draw", stake=3)
    assert list(s.payments) == [-15, 45, -15, -15]


def test_replacement_and_eight_flower_wins_are_paid_as_self_draws():
    s = settle(winners=[PONG_PONG], win="self_draw", replacement=True)
    assert list(s.payments) == [-10, 30, -10, -10]
    eight = winner(3, "1235m467p3s12z999s", "8f", [], "1234567f")
    s = settle(winners=[eight], win="eight_flowers", ready=[])
    assert list(s.payments) == [-20, -20, -20, 60]


def test_discard_win_only_the_discarder_pays():
    s = settle(winners=[PONG_PONG], win="discard", **{"from": 2}, stake=2)
    assert list(s.payments) == [0, 10, -10, 0]


def test_rob_kong_the_robbed_player_pays_three_shares():
    # 混一色 robbing 5p: (2 底分 + 白 triplet 2) × 2 门清 = 8
    w = winner(1, "12346789p55566z", "5p")
    s = settle(winners=[w], win="rob_kong", **{"from": 3})
    assert s.winners[0].value == 8
    assert list(s.payments) == [0, 24, 0, -24]


def test_multiple_winners_on_one_discard_are_each_paid_by_their_own_value():
    a = winner(1, "222m444p9s111z", "9s", [meld("pong", "777s", 0)])  # 2 + 1 = 3
    b = winner(2, "555m666p9s555z", "9s", [meld("pong", "888s", 3)])  # 2 + 2 = 4
    s = settle(winners=[a, b], win="discard", **{"from": 3})
    assert [r.value for r in s.winners] == [3, 4]
    assert list(s.payments) == [0, 3, 4, -7]
    codes = [(i.code, i.seat, i.other_seat, i.amount) for i in s.breakdown if i.code == "TRANSFER"]
    assert codes == [("TRANSFER", 3, 1, 3), ("TRANSFER", 3, 2, 4)]
