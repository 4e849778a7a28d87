"""Escape penalty (RULES §9): 一倍底分 × stake, 75% to the other three, 25% and the rounding
remainder to the house."""

from __future__ import annotations

import pytest

from services.scoring.vector_format import settle_object
from shared.errors import InvalidArgument


def escape(**kw):
    obj = {"ruleset": "shanghai-qiaoma", "kind": "escape", "stake": 4, "seat": 2, "dealer": 1}
    obj.update(kw)
    return settle_object(obj)


def test_penalty_shared_three_quarters_and_a_quarter():
    s = escape()
    assert (list(s.payments), s.house) == ([2, 2, -8, 2], 2)


def test_rounding_remainder_goes_to_the_house():
    s = escape(stake=3)  # penalty 6: 75% = 4.5 → 1 chip each, house 3
    assert (list(s.payments), s.house) == ([1, 1, -6, 1], 3)
    assert sum(s.payments) + s.house == 0


def test_classic_base_is_its_base_flowers():
    s = escape(ruleset="shanghai-classic", stake=4)  # 底分 = 3 底注花: 12, 9 to players
    assert (list(s.payments), s.house) == ([3, 3, -12, 3], 3)


def test_escape_resets_huangfan_and_the_dealer_deals_again():
    s = escape(huangfan=3)
    assert (s.next_dealer, s.huangfan, s.next_huangfan) == (1, 3, 0)
    assert [t.payee for t in s.transfers] == [3, 0, 1, None]


def test_escaped_seat_out_of_range():
    with pytest.raises(InvalidArgument, match="escaped seat 4 out of range 0-3"):
        escape(seat=4)
