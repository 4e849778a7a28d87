"""Per-player loss cap with proportional scaling and its rounding rule (RULES §9)."""

from __future__ import annotations

from services.scoring.domain.loss_cap import loss_cap_chips, scale_to_limit
from services.scoring.domain.rules import scoring_rules
from shared.ruleset import load_ruleset
from tests.unit.scoring.builders import meld, settle, winner


def test_within_the_limit_nothing_changes():
    assert scale_to_limit(0, [(1, 20), (2, 10)], 50) == ([(1, 20), (2, 10)], 0, None)


def test_scaled_down_proportionally_remainder_to_the_first_winner_after_the_payer():
    assert scale_to_limit(0, [(1, 40), (2, 20)], 50) == ([(1, 34), (2, 16)], 1, 1)
    # payer 2: turn order after it is 3, 0, 1, so seat 0 gets the remainder
    assert scale_to_limit(2, [(1, 40), (0, 20)], 50) == ([(1, 33), (0, 17)], 1, 0)


def test_the_whole_remainder_goes_to_that_one_winner():
    scaled, remainder, to = scale_to_limit(0, [(1, 10), (2, 10), (3, 10)], 20)
    assert (remainder, to) == (2, 1)
    assert scaled == [(1, 8), (2, 6), (3, 6)]


def test_loss_cap_is_lezi_times_points_times_stake():
    assert loss_cap_chips(scoring_rules(load_ruleset("shanghai-qiaoma")), 3) == 150
    assert loss_cap_chips(scoring_rules(load_ruleset("shanghai-classic")), 1) == 500
    no_cap = load_ruleset("shanghai-qiaoma").with_overrides({"payment.loss_cap_lezi": 0})
    assert loss_cap_chips(scoring_rules(no_cap), 1) is None


def test_self_draw_payers_are_each_capped():
    # 风碰 + 开宝: value 50 per share; 承包 liable pays 5 shares = 250 → 50
    w = winner(
        1,
        "2223z",
        "3z",
        [meld("pong", "111z", 2), meld("pong", "555z", 2), meld("pong", "666z", 2)],
    )
    s = settle(winners=[w], win="self_draw", dice=[1, 4])
    assert list(s.payments) == [0, 50, -50, 0]
    cap = next(i for i in s.breakdown if i.code == "LOSS_CAP")
    assert (cap.seat, cap.amount) == (2, 50) and "owes 250" in cap.detail


def test_stake_scales_the_cap():
    w = winner(3, "1222346789999p", "5p")
    s = settle(winners=[w], win="rob_kong", **{"from": 1}, stake=4)
    assert list(s.payments) == [0, -200, 0, 200]
