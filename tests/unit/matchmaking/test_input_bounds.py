"""Inputs a client can make arbitrarily large are refused with a message naming them, before
they are stored."""

from __future__ import annotations

import pytest

from infra.store.memory import MemoryStore
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HandReport
from services.matchmaking.domain.tournaments.records import list_ids
from shared.errors import InvalidArgument
from shared.table import MAX_STAKE
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import make_service

PIDS = ("a", "b", "c", "d")
BIG = 2**63 - 1


@pytest.mark.parametrize(
    ("payments", "house"),
    [((BIG, BIG, -BIG, -BIG), 0), ((BIG, 0, 0, -BIG), 0), ((2**53, -(2**53), 0, 0), 0)],
)
def test_a_hand_amount_past_2_pow_53_is_refused_and_changes_nothing(payments, house):
    # Before: accepted; two such hands took a balance past int64 and GetBalances went INTERNAL.
    store = MemoryStore()
    with pytest.raises(InvalidArgument) as err:
        ledger.record_hand(store, HandReport("h1", "t1", "quick/m", PIDS, payments, house), 1.0)
    assert err.value.details["field"] == "payments"
    assert [ledger.balance(store, p) for p in PIDS] == [0, 0, 0, 0]
    assert not ledger.has_hand(store, "h1") and ledger.reconcile(store) == []


def test_a_house_share_past_2_pow_53_is_refused():
    store = MemoryStore()
    report = HandReport("h1", "t1", "quick/m", PIDS, (0, 0, 0, -(2**60)), 2**60)
    with pytest.raises(InvalidArgument):
        ledger.record_hand(store, report, 1.0)


def test_a_room_stake_scoring_would_refuse_is_refused():
    # Before: 2^63-1 was accepted as 底分; every hand of the room would then fail to settle.
    mm, _, _ = make_service(ready_seconds=15, free_room_cards=2)
    owner = sign_in(mm, "Owner")[1]
    code = mm.open_room(owner, "", 0).code
    with pytest.raises(InvalidArgument) as err:
        mm.set_room_stake(owner, code, MAX_STAKE + 1)
    assert "stake" in err.value.message
    for stake in (MAX_STAKE, 3):  # in range, but no tier of the level table (RULES §11)
        with pytest.raises(InvalidArgument, match="not a tier"):
            mm.set_room_stake(owner, code, stake)
    assert mm.set_room_stake(owner, code, 1).stake == 1


def test_a_tournament_name_is_bounded_like_a_display_name():
    mm, _, _ = make_service()
    tok = sign_in(mm, "C")[1]
    with pytest.raises(InvalidArgument) as err:
        mm.create_tournament(tok, "n" * 1_000_000, "", 1, 1, 1, 0)
    assert err.value.details["field"] == "name"
    with pytest.raises(InvalidArgument):
        mm.create_tournament(tok, "Cup\x00", "", 1, 1, 1, 0)
    assert list_ids(mm.tournament_records) == []
    assert mm.create_tournament(tok, "  Spring Cup  ", "", 1, 1, 1, 0).name == "Spring Cup"


def test_too_many_invited_players_is_named_as_such():
    mm, _, _ = make_service()
    tok = sign_in(mm, "C")[1]
    tid = mm.create_tournament(tok, "Cup", "", 1, 1, 1, 0).tournament_id
    with pytest.raises(InvalidArgument) as err:
        mm.invite_to_tournament(tok, tid, ["p-x"] * 2000)
    assert err.value.details["field"] == "player_ids"
    assert "2000" in err.value.message
