"""Next dealer (RULES §2) and the 荒番 counter (§10, seed 001's dice 荒番)."""

from __future__ import annotations

from services.scoring.vector_format import settle_object
from tests.unit.scoring.builders import meld, settle, winner

A = winner(1, "222m444p9s111z", "9s", [meld("pong", "777s", 0)])
B = winner(2, "555m666p9s555z", "9s", [meld("pong", "888s", 3)])


def draw(**kw):
    obj = {"ruleset": "shanghai-qiaoma", "kind": "draw", "stake": 1, "dealer": 2, "dice": [2, 5]}
    obj.update(kw)
    return settle_object(obj)


def test_the_winner_deals_next():
    assert settle(winners=[A], win="self_draw", dealer=3).next_dealer == 1


def test_multi_win_the_winner_nearest_to_the_discarder_deals():
    assert settle(winners=[A, B], win="discard", **{"from": 0}).next_dealer == 1
    a3 = dict(A, seat=3)
    # discarder 2: turn order 3, 0, 1 → seat 3 before seat 1... seat 3 wins with A's tiles
    b1 = dict(B, seat=1, melds=[meld("pong", "888s", 3)])
    assert settle(winners=[b1, a3], win="discard", **{"from": 2}).next_dealer == 3


def test_multi_win_dealer_option_seat_after_nearest_winner():
    opt = {"table.multi_win_dealer": "seat_after_nearest_winner"}
    s = settle(winners=[A, B], win="discard", **{"from": 0}, options=opt)
    assert s.next_dealer == 2


def test_after_a_drawn_hand_the_dealer_deals_again_and_nobody_pays():
    s = draw()
    assert (s.next_dealer, list(s.payments), s.house) == (2, [0, 0, 0, 0], 0)


def test_huangfan_counter_rises_on_draws_and_falls_on_a_win():
    counter = 0
    for _ in range(3):
        counter = draw(huangfan=counter).next_huangfan
    assert counter == 3  # the 4th hand is 荒番(3)
    s = settle(winners=[A], win="self_draw", huangfan=counter)
    assert (s.huangfan, s.next_huangfan) == (3, 2)
    assert settle(winners=[A], win="self_draw", huangfan=0).next_huangfan == 0
    # several winners still count as one win
    assert settle(winners=[A, B], win="discard", **{"from": 0}, huangfan=2).next_huangfan == 1


def test_dice_huangfan_adds_to_the_counter_for_this_hand():
    s = draw(ruleset="shanghai-classic", dice=[1, 1], huangfan=1)
    assert (s.huangfan, s.next_huangfan) == (3, 4)
    s = settle(winners=[A], win="self_draw", ruleset="shanghai-classic", dice=[4, 6])
    assert (s.huangfan, s.next_huangfan) == (1, 0)
    assert any(i.code == "HUANGFAN_DICE" for i in s.breakdown)
    # qiaoma has no dice 荒番
    assert draw(dice=[1, 1]).huangfan == 0
