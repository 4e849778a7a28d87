"""加倍卡 holds in matchmaking (RULES-items §2): HoldDoubleCard moves one card into a hold for
(table, hand, player) once, after checking the silver covers twice the most a hand costs; the
hand's RecordHand consumes it in the hand's own transaction; ReleaseDoubleCard and TableFinished
return what a hand that never started held. Every refusal moves nothing."""

from __future__ import annotations

import pytest

from services.matchmaking.domain.economy import double_cards, ledger
from services.matchmaking.domain.economy.ledger import HandReport
from shared.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import give, make_service, seated_quick_table

CARD = ledger.DOUBLE_CARD


def setup(cards=2):
    mm, alloc, _ = make_service()
    tid, tag, ids, stake = seated_quick_table(mm, alloc)
    for pid in ids:
        if cards:
            give(mm, pid, CARD, cards)
    return mm, tid, tag, ids, stake


def cards(mm, pid):
    return ledger.balance(mm.store, pid, CARD)


def test_a_hold_is_made_once_and_the_hand_consumes_it():
    mm, tid, tag, ids, stake = setup()
    assert mm.hold_double_card(tid, tag, ids[0], 1, stake) == 1
    assert mm.hold_double_card(tid, tag, ids[0], 1, stake) == 1  # a retry holds nothing more
    house = ledger.balance(mm.store, ledger.HOUSE, CARD)
    report = HandReport("h1", tid, tag, ids, (-20, 20, 0, 0), hand_number=1, doubled_seats=(0,))
    assert mm.record_hand(report) is True
    assert mm.record_hand(report) is False  # a repeat consumes nothing again
    assert cards(mm, ids[0]) == 1
    assert ledger.balance(mm.store, double_cards.hold_account(tid, 1, ids[0]), CARD) == 0
    assert ledger.balance(mm.store, ledger.HOUSE, CARD) == house + 1
    assert mm.release_double_card(tid, ids[0], 1) is False  # consumed: nothing to return
    assert ledger.reconcile(mm.store) == []


def test_a_hand_reported_doubled_without_a_hold_is_refused_whole():
    mm, tid, tag, ids, _ = setup()
    report = HandReport("h1", tid, tag, ids, (-20, 20, 0, 0), hand_number=1, doubled_seats=(1,))
    with pytest.raises(FailedPrecondition) as err:
        mm.record_hand(report)
    assert err.value.reason == "INSUFFICIENT_FUNDS"
    assert not ledger.has_hand(mm.store, "h1") and ledger.balance(mm.store, ids[0]) == 1000


def test_release_and_table_finished_return_holds_of_hands_never_started():
    mm, tid, tag, ids, stake = setup()
    mm.hold_double_card(tid, tag, ids[0], 1, stake)
    mm.hold_double_card(tid, tag, ids[1], 1, stake)
    assert cards(mm, ids[0]) == 1
    assert mm.release_double_card(tid, ids[0], 1) is True
    assert mm.release_double_card(tid, ids[0], 1) is False
    assert cards(mm, ids[0]) == 2
    with pytest.raises(FailedPrecondition) as err:  # returned: not held again for that hand
        mm.hold_double_card(tid, tag, ids[0], 1, stake)
    assert err.value.reason == "DOUBLE_CARD_SPENT"
    mm.table_finished(tid, tag, 0)
    assert [cards(mm, p) for p in ids] == [2, 2, 2, 2]
    assert ledger.reconcile(mm.store) == []


def test_refusals_move_nothing():
    mm, tid, tag, ids, stake = setup(cards=0)
    with pytest.raises(FailedPrecondition) as err:
        mm.hold_double_card(tid, tag, ids[0], 1, stake)
    assert err.value.reason == "DOUBLE_CARD_NONE_LEFT"
    with pytest.raises(FailedPrecondition) as err:
        mm.hold_double_card(tid, "tournament/t-1/round/1/table/0", ids[0], 1, stake)
    assert err.value.reason == "DOUBLE_CARD_NOT_ALLOWED"
    stranger = sign_in(mm, "Z")[0].player_id
    with pytest.raises(PermissionDenied):
        mm.hold_double_card(tid, tag, stranger, 1, stake)
    with pytest.raises(NotFound):  # a table matchmaking never allocated
        mm.hold_double_card("t-forged", tag, ids[0], 1, stake)
    with pytest.raises(InvalidArgument):
        mm.hold_double_card(tid, tag, ids[0], 0, stake)
    assert [cards(mm, p) for p in ids] == [0, 0, 0, 0]


def test_silver_must_cover_twice_the_most_a_hand_costs():
    mm, tid, tag, ids, _ = setup()
    need = double_cards.cover_needed(10)  # 2 × 5 勒子 × 10 points × stake 10 = 1,000
    assert need == 1000
    assert mm.hold_double_card(tid, tag, ids[0], 1, 10) == 1  # 1,000 silver: just covers
    with pytest.raises(FailedPrecondition) as err:
        mm.hold_double_card(tid, tag, ids[1], 1, 11)
    assert err.value.reason == "DOUBLE_CARD_SILVER" and "needs 1100" in err.value.message
    assert cards(mm, ids[1]) == 2
