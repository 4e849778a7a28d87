"""Win situations (RULES §6, §10): 门清, 开宝, dice 荒番, 大吊车, 天胡/地胡."""

from __future__ import annotations

import pytest

from services.scoring.domain.situations import (
    is_big_hanging,
    is_earthly_win,
    is_heavenly_win,
    is_menqing,
)
from shared import tiles as T
from shared.dice import dice_huangfan_bonus, is_kaibao
from shared.melds import Meld

EXPOSED = [Meld.of("pong", "111s", 1), Meld.of("pong", "333s", 1), Meld.of("chow", "456p", 3)]


def test_menqing_allows_concealed_kongs_only():
    assert is_menqing([])
    assert is_menqing([Meld.of("concealed_kong", "1111m")])
    more = [Meld.of("exposed_kong", "2222m", 1), Meld.of("added_kong", "2222m", 1)]
    for m in [*EXPOSED, *more]:
        assert not is_menqing([m])


@pytest.mark.parametrize(
    ("dice", "kaibao"),
    [
        ((3, 3), True),
        ((1, 4), True),
        ((4, 1), True),
        ((6, 6), True),
        ((2, 5), False),
        ((1, 3), False),
        ((4, 6), False),
        (None, False),
    ],
)
def test_kaibao_is_a_double_or_one_and_four(dice, kaibao):
    assert is_kaibao(dice) is kaibao


@pytest.mark.parametrize(
    ("dice", "bonus"),
    [
        ((1, 1), 2),
        ((4, 4), 2),
        ((1, 5), 1),
        ((6, 4), 1),
        ((2, 2), 1),
        ((3, 3), 1),
        ((5, 5), 1),
        ((6, 6), 1),
        ((2, 5), 0),
        ((3, 6), 0),
    ],
)
def test_dice_huangfan_of_seed_001(dice, bonus):
    assert dice_huangfan_bonus(dice) == bonus


def test_big_hanging_needs_four_laid_down_sets_and_the_single_pair_wait():
    melds = [*EXPOSED, Meld.of("exposed_kong", "7777s", 2)]
    assert is_big_hanging(T.parse("9s"), melds, T.parse("9s")[0], allow_concealed_kong=True)
    assert not is_big_hanging(T.parse("9s"), melds[:3], T.parse("9s")[0], True)


def test_big_hanging_with_a_concealed_kong_is_an_option():
    melds = [*EXPOSED, Meld.of("concealed_kong", "7777s")]
    nine = T.parse("9s")[0]
    assert is_big_hanging([nine], melds, nine, allow_concealed_kong=True)
    assert not is_big_hanging([nine], melds, nine, allow_concealed_kong=False)


def test_heavenly_and_earthly():
    assert is_heavenly_win(0, 0, self_drawn=True, first_go_around=True)
    assert not is_heavenly_win(1, 0, True, True)
    assert not is_heavenly_win(0, 0, True, False)
    assert is_earthly_win(2, 0, True)
    assert not is_earthly_win(0, 0, True)
