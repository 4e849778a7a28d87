"""The itemized breakdown explains every chip: named in English and Chinese, and adding up."""

from __future__ import annotations

import pytest

from services.scoring.domain import CATALOG, render_table
from services.scoring.vector_format import settle_object
from tests.conftest import load_vectors

SCORING = load_vectors("scoring.jsonl")


def test_every_code_has_an_english_and_a_chinese_name():
    for code, (label, zh) in CATALOG.items():
        assert code.isupper() and label and zh
        assert any("\u4e00" <= ch <= "\u9fff" for ch in zh), code


@pytest.mark.parametrize("vector", SCORING, ids=[v["name"] for v in SCORING])
def test_transfers_in_the_breakdown_add_up_to_the_payments(vector):
    s = settle_object(vector)
    net = [0, 0, 0, 0]
    house = 0
    for it in s.breakdown:
        if it.code in ("TRANSFER", "ESCAPE_SHARE"):
            net[it.seat] -= it.amount
            net[it.other_seat] += it.amount
        elif it.code == "HOUSE_SHARE":
            net[it.seat] -= it.amount
            house += it.amount
    assert (net, house) == (list(s.payments), s.house)


def test_a_win_explains_flowers_hand_value_and_each_payment():
    s = settle_object(SCORING[1])  # half flush, 门清 and 开宝, self-drawn
    codes = [i.code for i in s.breakdown]
    for code in (
        "FLOWER_TILE",
        "DRAGON_PONG",
        "HAND",
        "CONCEALED_HAND",
        "DICE_BONUS",
        "HAND_CAP",
        "VALUE",
        "PAY_SELF_DRAW",
        "TRANSFER",
        "NEXT_DEALER",
        "NEXT_HUANGFAN",
    ):
        assert code in codes
    assert codes.index("HAND") < codes.index("CONCEALED_HAND") < codes.index("HAND_CAP")
    pays = [i for i in s.breakdown if i.code == "PAY_SELF_DRAW"]
    assert [(i.seat, i.other_seat, i.amount) for i in pays] == [(3, 2, 20), (0, 2, 20), (1, 2, 20)]
    assert "1 份 × 20 pts × stake 1" in pays[0].detail


def test_why_did_i_pay_fifty():
    s = settle_object(SCORING[7])  # 抢杠: 60 owed, capped at 50
    table = render_table(s.breakdown)
    assert "抢杠" in table and "单局封顶" in table and "owes 60, pays 50" in table
