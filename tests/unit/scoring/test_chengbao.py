"""承包 in every case RULES §9 lists, 反承包, and the classic preset's shares (seed 001).

Seat 1 wins with three pongs claimed from seat 2 (a relation); the hand is worth 3 points
(qiaoma: 2 底分 + South triplet 1 花) or 4 (classic: 3 底注花 + 1)."""

from __future__ import annotations

from tests.unit.scoring.builders import meld, pong_pong_3_claims, settle, winner

W, F = 1, 2
HAND = pong_pong_3_claims(W, F)


def pay(**kw):
    return list(settle(winners=kw.pop("winners", [HAND]), **kw).payments)


def test_liable_player_discards_pays_two_shares():
    assert pay(win="discard", **{"from": F}) == [0, 6, -6, 0]


def test_unready_outsider_discards_pays_two_shares_liable_nothing():
    assert pay(win="discard", **{"from": 0}, ready=[1]) == [-6, 6, 0, 0]


def test_ready_outsider_and_liable_player_each_pay_one_share():
    assert pay(win="discard", **{"from": 0}, ready=[0, 1]) == [-3, 6, -3, 0]


def test_self_draw_liable_pays_five_shares_the_others_nothing():
    assert pay(win="self_draw") == [0, 15, -15, 0]


def test_rob_kong_with_chengbao_robbed_and_liable_each_pay_three_shares():
    # 清一色 with a chow, robbing 5s; claimed 3 times from seat 0 (上家): 1 勒子 = 10
    w = winner(
        1,
        "4688s",
        "5s",
        [meld("pong", "111s", 0), meld("pong", "999s", 0), meld("chow", "234s", 0)],
    )
    assert pay(winners=[w], win="rob_kong", **{"from": 2}) == [-30, 60, -30, 0]
    # the liable player robbed: three shares once, not twice
    assert pay(winners=[w], win="rob_kong", **{"from": 0}) == [-30, 30, 0, 0]


def test_no_relation_below_the_threshold():
    w = winner(1, "9s222z555m", "9s", [meld("pong", "111s", F), meld("pong", "333p", F)])
    assert pay(winners=[w], win="discard", **{"from": F}) == [0, 3, -3, 0]


def test_relation_in_the_other_direction_counts_too():
    w = winner(1, "222m444p9s111z", "9s", [meld("pong", "777s", 0)])  # 3 points
    claims = [[F, W]] * 3 + [[W, 0]]
    assert pay(winners=[w], win="discard", **{"from": F}, claims=claims) == [0, 6, -6, 0]


def test_two_relations_each_apply():
    claims = [[W, F]] * 3 + [[3, W]] * 3  # seat 1 claimed 3× from 2; seat 3 claimed 3× from 1
    assert pay(win="self_draw", claims=claims) == [0, 30, -15, -15]
    # an unrelated unready discarder pays its 2 shares once, not once per relation
    assert pay(win="discard", **{"from": 0}, ready=[1], claims=claims) == [-6, 6, 0, 0]
    # a ready one pays 1 share and each liable player 1
    assert pay(win="discard", **{"from": 0}, ready=[0, 1], claims=claims) == [-3, 9, -3, -3]


def test_one_discard_feeding_both_sides_of_a_relation():
    other = winner(F, "222m444p9s111z", "9s", [meld("pong", "777s", 3)])  # 3 points
    both = [HAND, other]
    assert pay(winners=both, win="discard", **{"from": 0}, ready=[1, 2]) == [-12, 6, 6, 0]
    assert pay(winners=both, win="discard", **{"from": 0}, ready=[0, 1, 2]) == [-6, 3, 3, 0]


def test_chengbao_excludes_declared_feeder():
    claims = [[W, F, True], [W, F, True], [W, F, False]]
    on = {"payment.chengbao_excludes_declared_feeder": True}
    assert pay(win="discard", **{"from": F}, claims=claims, options=on) == [0, 3, -3, 0]
    assert pay(win="discard", **{"from": F}, claims=claims) == [0, 6, -6, 0]


def test_relation_items_name_the_claims():
    s = settle(winners=[HAND], win="self_draw")
    rel = next(i for i in s.breakdown if i.code == "CHENGBAO_RELATION")
    assert (rel.seat, rel.other_seat, rel.amount, rel.label_zh) == (W, F, 3, "承包")
    liable = next(i for i in s.breakdown if i.code == "PAY_CHENGBAO")
    assert (liable.seat, liable.other_seat, liable.amount) == (F, W, 15)
    assert "5 份" in liable.detail


# --- shanghai-classic: 承包 and 反承包 ---------------------------------------------------------
def classic(**kw):
    return pay(ruleset="shanghai-classic", **kw)


def test_classic_chengbao_liable_pays_one_extra_share_on_a_discard():
    assert classic(win="discard", **{"from": F}) == [0, 8, -8, 0]
    assert classic(win="discard", **{"from": 0}, ready=[1]) == [-4, 8, -4, 0]


def test_classic_chengbao_self_draw_liable_pays_three_shares_for_all():
    assert classic(win="self_draw") == [0, 12, -12, 0]


def test_classic_fan_chengbao_claimer_pays_extra_when_the_liable_player_wins():
    liable_wins = winner(F, "222m444p9s111z", "9s", [meld("pong", "777s", 3)])  # 3 + 1 = 4
    claims = [[W, F]] * 3 + [[F, 3]]
    # self-draw: the claimer pays 2 shares, the others 1 each
    assert classic(winners=[liable_wins], win="self_draw", claims=claims) == [-4, -8, 16, -4]
    # discard by the claimer: 1 share + 1 extra
    assert classic(winners=[liable_wins], win="discard", **{"from": W}, claims=claims) == [
        0,
        -8,
        8,
        0,
    ]
    # discard by an outsider: the outsider 1 share and the claimer 1 extra
    assert classic(winners=[liable_wins], win="discard", **{"from": 0}, claims=claims) == [
        -4,
        -4,
        8,
        0,
    ]


def test_chengbao_option_off_pays_as_without_a_relation():
    off = {"payment.chengbao": False}
    assert pay(win="self_draw", options=off) == [-3, 9, -3, -3]
    assert pay(win="discard", **{"from": 0}, ready=[1], options=off) == [-3, 3, 0, 0]
    s = settle(winners=[HAND], win="self_draw", options=off)
    assert not any(it.code == "CHENGBAO_RELATION" for it in s.breakdown)
