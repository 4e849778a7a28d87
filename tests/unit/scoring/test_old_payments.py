"""Payments of the 户/番 model (RULES-presets §13.A.8-9): self-draw shares, 出冲, 包冲,
discarder-only, 一炮多响, 九张落地包输 and its 三番叫胡 exception, drawn hands and escapes."""

from __future__ import annotations

import pytest

from services.scoring.vector_format import settle_object, settlement_json
from shared.errors import InvalidArgument
from tests.unit.scoring.builders import meld, winner

# seat 1 (南, dealer 0): 123m 456m 789m 23p 55s + 4p, two waits, no flowers: 20 户 on a
# discard, 门清 1 番 → 40 points; self-drawn 22 户 → 44 points
PLAIN = winner(1, "123m456m789m23p55s", "4p")


def settle(winners, win, **extra):
    obj = {"ruleset": "shanghai-old", "stake": 1, "dealer": 0, "winners": winners, "win": win}
    obj.update(extra)
    return settle_object(obj)


def payments(winners, win, **extra):
    return list(settle(winners, win, **extra).payments)


def test_self_draw_every_other_player_pays_two_shares():
    assert payments([PLAIN], "self_draw") == [-88, 264, -88, -88]


def test_self_draw_shares_option():
    got = payments([PLAIN], "self_draw", options={"old_payment.self_draw_shares": 1})
    assert got == [-44, 132, -44, -44]


def test_chuchong_discarder_two_shares_the_others_one():
    assert payments([PLAIN], "discard", **{"from": 3}) == [-40, 160, -40, -80]


def test_baochong_the_discarder_pays_four_shares():
    opts = {"old_payment.discard_payment": "baochong"}
    assert payments([PLAIN], "discard", **{"from": 3}, options=opts) == [0, 160, 0, -160]


def test_discarder_only_pays_one_share():
    opts = {"old_payment.discard_payment": "discarder_only"}
    assert payments([PLAIN], "discard", **{"from": 3}, options=opts) == [0, 40, 0, -40]


def test_rob_kong_the_robbed_player_pays_as_the_discarder():
    s = settle([PLAIN], "rob_kong", **{"from": 2})
    # 20 户, 门清 + 抢杠 = 2 番 → 80
    assert list(s.payments) == [-80, 320, -160, -80]
    assert any(it.code == "PAY_CHUCHONG" and it.seat == 2 for it in s.breakdown)


def test_winners_of_one_discard_never_pay_each_other():
    other = winner(2, "123s456s789s23p55m", "4p")
    got = payments([PLAIN, other], "discard", **{"from": 3})
    assert got[3] < 0 and got[0] < 0 and sum(got) == 0
    # seat 0 pays each winner one share, the discarder two each
    assert got[0] == -(40 + 40) and got[3] == -(80 + 80)


# 清一色 with three exposed melds, won on seat 1's discard: 九张落地
NINE = winner(
    3,
    "3377p",
    "7p",
    [meld("pong", "222p", 0), meld("chow", "456p", 2), meld("pong", "888p", 1)],
    flowers="8f",
)  # 28 户 × 2^4 = 448 (RULES-presets P7)
# seat 1 after the discard: 123m 456p 789s 11z 55z waits on 1z / 5z: 门清 + 箭刻 = 2 番
READY_TWO_FAN = {"concealed": "123m456p789s11z55z", "melds": []}
# seat 1 ready with 清一色 (4 番): 1112345678999s waits on every 条
READY_FLUSH = {"concealed": "1112345678999s", "melds": []}


def test_nine_tiles_down_the_discarder_pays_all():
    got = payments([NINE], "discard", **{"from": 1}, from_hand=READY_TWO_FAN)
    assert got == [0, -1792, 0, 1792]


def test_three_fan_ready_discarder_is_not_liable():
    s = settle([NINE], "discard", **{"from": 1}, from_hand=READY_FLUSH)
    assert list(s.payments) == [-448, -896, -448, 1792]
    ready = next(it for it in s.breakdown if it.code == "BAOSHU_READY")
    assert ready.amount >= 3 and "三番叫胡" in ready.detail


def test_the_exception_threshold_is_an_option():
    opts = {"old_payment.baoshu_exempt_fan": 2}
    got = payments([NINE], "discard", **{"from": 1}, from_hand=READY_TWO_FAN, options=opts)
    assert got == [-448, -896, -448, 1792]


def test_without_the_exception_the_discarders_hand_is_not_needed():
    opts = {"old_payment.baoshu_exempt_fan": 0}
    assert payments([NINE], "discard", **{"from": 1}, options=opts) == [0, -1792, 0, 1792]


def test_baoshu_off_pays_as_chuchong():
    opts = {"old_payment.baoshu": False}
    assert payments([NINE], "discard", **{"from": 1}, options=opts) == [-448, -896, -448, 1792]


def test_a_self_drawn_flush_is_paid_normally():
    s = settle([NINE], "self_draw")
    assert all(p < 0 for seat, p in enumerate(s.payments) if seat != 3)
    assert not any(it.code == "PAY_BAOSHU" for it in s.breakdown)


def test_nine_tiles_down_needs_the_discarders_hand():
    with pytest.raises(InvalidArgument) as e:
        settle([NINE], "discard", **{"from": 1})
    assert e.value.details["field"] == "from_hand"


@pytest.mark.parametrize(
    "hand",
    [
        {"concealed": "123m456m789m11z5z", "melds": []},  # 12 tiles
        {"concealed": "222p333p444p11z5z", "melds": []},  # 2p five times with the winner's
    ],
)
def test_a_bad_discarder_hand_is_refused(hand):
    with pytest.raises(InvalidArgument) as e:
        settle([NINE], "discard", **{"from": 1}, from_hand=hand)
    assert e.value.details["field"].startswith("from_hand")


def test_payments_are_transferred_and_named():
    s = settle([PLAIN], "discard", **{"from": 3})
    got = settlement_json(s)
    paid = [(i["seat"], i["code"]) for i in got["breakdown"] if i["code"].startswith("PAY_")]
    # in turn order after the winner (seat 1)
    assert paid == [(2, "PAY_CHUCHONG_OTHER"), (3, "PAY_CHUCHONG"), (0, "PAY_CHUCHONG_OTHER")]
    assert all(i["label"] and i["label_zh"] for i in got["breakdown"])


def test_draw_and_escape():
    draw = settle_object(
        {"ruleset": "shanghai-old", "kind": "draw", "stake": 3, "dealer": 2, "huangfan": 4}
    )
    assert (list(draw.payments), draw.next_dealer, draw.huangfan, draw.next_huangfan) == (
        [0, 0, 0, 0],
        2,
        0,
        0,
    )
    esc = settle_object({"ruleset": "shanghai-old", "kind": "escape", "stake": 2, "seat": 1})
    # 1 × stake 2 × 底分 20 = 40: 75% = 30 → 10 each, 10 to the house
    assert list(esc.payments) == [10, -40, 10, 10] and esc.house == 10


def test_garden_stacks_limit_what_a_player_pays():
    s = settle(
        [PLAIN], "self_draw", options={"payment.garden": True}, garden_stacks=[50, 0, 1000, 0]
    )
    assert list(s.payments) == [-50, 138, -88, 0]
    assert any(it.code == "GARDEN_LIMIT" for it in s.breakdown)
