"""逛花园 (RULES §9): a player at 0 pays nothing more and pays at most what it has left."""

from __future__ import annotations

import pytest

from shared.errors import InvalidArgument
from tests.unit.scoring.builders import meld, settle, winner

PONG_PONG = winner(1, "222m444p9s111z", "9s", [meld("pong", "777s", 0)], "13f")  # value 5
GARDEN = {"payment.garden": True}


def test_a_player_at_zero_pays_nothing_and_the_others_pay_in_full():
    s = settle(winners=[PONG_PONG], win="self_draw", options=GARDEN, garden_stacks=[0, 10, 3, 50])
    assert list(s.payments) == [0, 8, -3, -5]
    assert s.garden_stacks_after == (0, 18, 0, 45)
    limits = [(i.seat, i.amount) for i in s.breakdown if i.code == "GARDEN_LIMIT"]
    assert limits == [(0, 0), (2, 3)]


def test_a_player_at_zero_can_still_win():
    s = settle(
        winners=[PONG_PONG],
        win="discard",
        **{"from": 3},
        options=GARDEN,
        garden_stacks=[10, 0, 10, 10],
    )
    assert list(s.payments) == [0, 5, 0, -5]
    assert s.garden_stacks_after == (10, 5, 10, 5)


def test_escape_pays_at_most_the_stack():
    from services.scoring.vector_format import settle_object

    s = settle_object(
        {
            "ruleset": "shanghai-qiaoma",
            "kind": "escape",
            "stake": 4,
            "seat": 2,
            "options": GARDEN,
            "garden_stacks": [5, 5, 4, 5],
        }
    )
    assert (list(s.payments), s.house) == ([1, 1, -4, 1], 1)


def test_stacks_required_with_garden_and_refused_without():
    with pytest.raises(InvalidArgument, match="garden stacks of all 4 seats are required"):
        settle(winners=[PONG_PONG], win="self_draw", options=GARDEN)
    with pytest.raises(InvalidArgument, match="does not play 逛花园"):
        settle(winners=[PONG_PONG], win="self_draw", garden_stacks=[1, 1, 1, 1])
    with pytest.raises(InvalidArgument, match="garden stack of seat 2 is -1"):
        settle(winners=[PONG_PONG], win="self_draw", options=GARDEN, garden_stacks=[1, 1, -1, 1])
