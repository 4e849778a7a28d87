"""加倍卡 (RULES-items §2) in scoring: the doubling of the payment arrays, the loss cap after it,
its breakdown lines, and the checks of ``doubled_seats``. The hands are worked by hand in the
comments; tests/vectors/double-card-scoring.jsonl holds more."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mahjong.common.v1 import common_pb2

from services.scoring import convert
from services.scoring.domain.collect import collect
from services.scoring.domain.double_card import double_debts, factor, payer_cap
from services.scoring.domain.model import HandContext
from shared.errors import InvalidArgument
from shared.ruleset import load_ruleset
from tests.conftest import load_vectors
from tests.unit.scoring.builders import settle

QIAOMA = load_ruleset("shanghai-qiaoma")


def test_factor_is_two_per_doubled_end_of_the_payment():
    assert factor(0, 1, set()) == 1
    assert factor(0, 1, {0}) == 2  # the payer doubled
    assert factor(0, 1, {1}) == 2  # the payee doubled
    assert factor(0, 1, {0, 1}) == 4
    assert factor(0, 1, {2, 3}) == 1  # doubling elsewhere changes nothing here


def test_double_debts_doubles_only_payments_touching_a_doubled_seat():
    # seat 2 won a self-draw of 20 per payer; seat 0 doubled
    debts = {0: [(2, 20)], 1: [(2, 20)], 3: [(2, 20)]}
    out, items = double_debts(debts, {0})
    assert out == {0: [(2, 40)], 1: [(2, 20)], 3: [(2, 20)]}
    assert [(i.code, i.seat, i.other_seat, i.amount) for i in items] == [("DOUBLE_CARD", 0, 2, 40)]
    assert items[0].label == "Double card ×2" and items[0].label_zh == "加倍卡 ×2"
    assert "20 → 40" in items[0].detail


def test_two_doubled_seats_give_x4_and_two_lines():
    out, items = double_debts({3: [(1, 5)]}, {1, 3})
    assert out == {3: [(1, 20)]}
    assert [i.amount for i in items] == [10, 20]  # the payer's card, then the payee's
    assert ["seat 3 played" in items[0].detail, "seat 1 played" in items[1].detail] == [True] * 2


def test_no_doubled_seat_leaves_debts_alone_and_adds_no_line():
    debts = {0: [(1, 40), (2, 20)]}
    assert double_debts(debts, frozenset()) == ({0: [(1, 40), (2, 20)]}, [])


def test_payer_cap_doubles_only_for_a_payer_who_doubled():
    assert payer_cap(50, 0, {0}) == 100
    assert payer_cap(50, 1, {0}) == 50
    assert payer_cap(None, 0, {0}) is None  # a preset without a loss cap stays without


def test_collect_caps_after_doubling_per_payer():
    # 一炮多响 from seat 0: seat 1 is owed 40, seat 2 is owed 20; cap 50; seat 2 doubled.
    # owed 40 + 2 × 20 = 80 > 50: 40 × 50 // 80 = 25, 40 × 50 // 80 = 25 → exactly 50.
    ctx = HandContext(QIAOMA, 1, 0, doubled_seats=frozenset({2}))
    _, payments, items = collect({0: [(1, 40), (2, 20)]}, ctx, 50)
    assert payments == [-50, 25, 25, 0]
    cap = next(i for i in items if i.code == "LOSS_CAP")
    assert (cap.seat, cap.amount) == (0, 50) and "owes 80" in cap.detail


def test_a_doubled_payers_cap_is_doubled_and_said_so():
    ctx = HandContext(QIAOMA, 1, 0, doubled_seats=frozenset({0}))
    _, payments, items = collect({0: [(1, 60)]}, ctx, 50, lambda: "at most 50")
    # owes 120, its own cap 100
    assert payments == [-100, 100, 0, 0]
    cap = next(i for i in items if i.code == "LOSS_CAP")
    assert cap.amount == 100 and "×2 for the payer's 加倍卡" in cap.detail


def test_garden_stack_still_limits_a_doubled_payment():
    garden = QIAOMA.with_overrides({"payment.garden": True})
    ctx = HandContext(garden, 1, 0, garden_stacks=(30, 100, 100, 100), doubled_seats=frozenset({1}))
    _, payments, items = collect({0: [(1, 20)]}, ctx, 50)
    # 20 doubled to 40, but seat 0 holds only 30 chips
    assert payments == [-30, 30, 0, 0]
    assert [i.code for i in items] == ["DOUBLE_CARD", "GARDEN_LIMIT"]


def test_a_settled_hand_shows_the_breakdown_line():
    # the pong-pong discard win of scoring.jsonl: seat 1 wins 5 from seat 3; seat 1 doubled
    base = load_vectors("scoring.jsonl")[0]
    s = settle(**{**base, "doubled_seats": [1]})
    assert list(s.payments) == [0, 10, 0, -10]
    lines = [i for i in s.breakdown if i.code == "DOUBLE_CARD"]
    assert [(i.seat, i.other_seat, i.amount) for i in lines] == [(3, 1, 10)]
    # the doubling comes after the payment line and before the transfer
    codes = [i.code for i in s.breakdown]
    assert codes.index("PAY_DISCARD") < codes.index("DOUBLE_CARD") < codes.index("TRANSFER")


def test_old_and_baida_models_double_too():
    old = load_vectors("presets-scoring.jsonl")[0]  # 出冲: discarder 2 shares, the others 1
    plain = settle(**old)
    doubled = settle(**{**old, "doubled_seats": [old["winners"][0]["seat"]]})
    assert list(doubled.payments) == [2 * p for p in plain.payments]


@pytest.mark.parametrize("seats", [[4], [-1], ["1"]])
def test_a_doubled_seat_out_of_range_is_invalid(seats):
    base = load_vectors("scoring.jsonl")[0]
    with pytest.raises(InvalidArgument):
        settle(**{**base, "doubled_seats": seats})


def test_proto_doubled_seats_are_checked_and_round_trip():
    base = convert.context_to_proto(HandContext(QIAOMA, 1, 0, doubled_seats=frozenset({0, 2})))
    assert list(base.doubled_seats) == [common_pb2.SEAT_0, common_pb2.SEAT_2]
    assert convert.context_from_proto(base).doubled_seats == frozenset({0, 2})
    base.doubled_seats.append(common_pb2.SEAT_0)
    with pytest.raises(InvalidArgument, match="twice") as err:
        convert.context_from_proto(base)
    assert err.value.details["field"] == "context.doubled_seats"
    del base.doubled_seats[:]
    base.doubled_seats.append(common_pb2.SEAT_UNSPECIFIED)
    with pytest.raises(InvalidArgument, match="not set"):
        convert.context_from_proto(base)


# what each payer owes each other seat: one debt per (payer, payee), as the models book them
debts_st = st.dictionaries(
    st.integers(0, 3), st.dictionaries(st.integers(0, 3), st.integers(0, 10_000), max_size=3)
).map(lambda d: {p: [(q, c) for q, c in rows.items() if q != p] for p, rows in d.items()})


@given(debts_st, st.frozensets(st.integers(0, 3)), st.sampled_from([None, 50, 500]))
def test_properties_of_doubled_payments(debts, doubled, cap):
    transfers, payments, _ = collect(debts, HandContext(QIAOMA, 1, 0, doubled_seats=doubled), cap)
    _, plain, _ = collect(debts, HandContext(QIAOMA, 1, 0), cap)
    assert sum(payments) == 0
    for payer in range(4):
        paid = sum(t.chips for t in transfers if t.payer == payer)
        owed = sum(c * factor(payer, q, doubled) for q, c in debts.get(payer, []))
        if cap is None:
            assert paid == owed  # without a cap each payment is its factor × the plain one
        else:
            # the usual cap, or twice it for a payer who doubled; never more than owed
            assert paid == min(owed, cap * 2 if payer in doubled else cap)
    if not doubled:
        assert payments == plain
