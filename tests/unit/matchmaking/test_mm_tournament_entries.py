"""Tournaments by consent with escrowed entries and prizes (RULES-items §3): nobody is entered by
another's act, entries move into escrow and back, the start spends them, prizes are paid once by
final rank, and only the house funds extra prizes. Every movement is checked in the ledger."""

from __future__ import annotations

import random

import pytest

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tournaments import purse as tournament_purse
from services.matchmaking.domain.tournaments import tournament as tournaments
from services.matchmaking.domain.tournaments.consent import prize_split
from services.matchmaking.domain.tournaments.records import list_ids
from shared.errors import AlreadyExists, FailedPrecondition, InvalidArgument, PermissionDenied
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import give, make_service, settle_round

SILVER, CARD = ledger.SILVER, ledger.MATCH_CARD


def give_match_cards(mm, player_id: str, n: int) -> None:
    give(mm, player_id, CARD, n)


def players(mm, n):
    out = []
    for i in range(n):
        player, token = sign_in(mm, f"P{i}")
        out.append((player.player_id, token))
    return out


def held(mm, account):
    return ledger.balances(mm.store, account)


def escrow_of(mm, tid):
    return held(mm, tournament_purse.escrow_account(tid))


def test_a_creator_cannot_enter_anyone_and_an_invite_alone_enters_nobody():
    mm, _, _ = make_service()
    (creator, ctok), (victim, vtok) = players(mm, 2)
    t = mm.create_tournament(ctok, "Cup", "", 2, 1, 1, 0, entry_silver=300)
    t = mm.invite_to_tournament(ctok, t.tournament_id, [victim])
    assert t.entrants == () and t.invited == (victim,)
    assert ledger.balance(mm.store, victim) == 1000  # nothing moved without the player's act
    with pytest.raises(PermissionDenied):  # only the creator invites
        mm.invite_to_tournament(vtok, t.tournament_id, [creator])
    t = mm.accept_invite(vtok, t.tournament_id)
    assert [e.player_id for e in t.entrants] == [victim] and t.invited == ()
    assert ledger.balance(mm.store, victim) == 700
    assert escrow_of(mm, t.tournament_id)[SILVER] == 300


def test_accepting_without_an_invite_or_twice_is_refused_and_moves_nothing():
    mm, _, _ = make_service()
    (_, ctok), (pid, ptok), (qid, qtok) = players(mm, 3)
    tid = mm.create_tournament(ctok, "Cup", "", 2, 1, 1, 0, entry_silver=50).tournament_id
    with pytest.raises(FailedPrecondition) as err:
        mm.accept_invite(ptok, tid)
    assert err.value.reason == "NOT_INVITED"
    mm.invite_to_tournament(ctok, tid, [pid, qid])
    mm.decline_invite(qtok, tid)
    with pytest.raises(FailedPrecondition):
        mm.accept_invite(qtok, tid)  # declined: the invite is gone
    mm.accept_invite(ptok, tid)
    with pytest.raises(FailedPrecondition):
        mm.accept_invite(ptok, tid)  # used up
    with pytest.raises(AlreadyExists):
        mm.register_tournament(ptok, tid)
    assert ledger.balance(mm.store, pid) == 950 and ledger.balance(mm.store, qid) == 1000
    assert escrow_of(mm, tid)[SILVER] == 50


def test_entries_move_into_escrow_and_back_in_full():
    mm, _, _ = make_service()
    (pid, ptok), (_, ctok) = players(mm, 2)
    give_match_cards(mm, pid, 3)
    tid = mm.create_tournament(
        ctok, "Cup", "", 2, 1, 1, 0, entry_silver=120, entry_match_cards=2
    ).tournament_id
    mm.register_tournament(ptok, tid)
    assert (held(mm, pid)[SILVER], held(mm, pid)[CARD]) == (880, 1)
    assert (escrow_of(mm, tid)[SILVER], escrow_of(mm, tid)[CARD]) == (120, 2)
    mm.withdraw_tournament(ptok, tid)
    assert (held(mm, pid)[SILVER], held(mm, pid)[CARD]) == (1000, 3)
    assert (escrow_of(mm, tid)[SILVER], escrow_of(mm, tid)[CARD]) == (0, 0)
    mm.register_tournament(ptok, tid)  # entering again is a new entry, paid again
    assert (held(mm, pid)[SILVER], held(mm, pid)[CARD]) == (880, 1)
    assert ledger.reconcile(mm.store) == []


def test_an_entry_the_player_cannot_cover_enters_nothing():
    mm, _, _ = make_service()
    (pid, ptok), (_, ctok) = players(mm, 2)
    tid = mm.create_tournament(ctok, "Cup", "", 2, 1, 1, 0, entry_match_cards=1).tournament_id
    with pytest.raises(FailedPrecondition) as err:
        mm.register_tournament(ptok, tid)
    assert err.value.reason == "ENTRY_NOT_COVERED" and "match_card" in err.value.message
    assert mm.tournament(tid).entrants == () and held(mm, pid)[CARD] == 0


def test_cancel_before_the_start_refunds_every_entry_and_only_the_creator_may():
    mm, _, _ = make_service()
    people = players(mm, 4)
    ctok = people[0][1]
    tid = mm.create_tournament(ctok, "Cup", "", 2, 1, 1, 0, entry_silver=200).tournament_id
    for _, tok in people:
        mm.register_tournament(tok, tid)
    assert escrow_of(mm, tid)[SILVER] == 800
    with pytest.raises(PermissionDenied):
        mm.cancel_tournament(people[1][1], tid)
    t = mm.cancel_tournament(ctok, tid)
    assert t.state == tournaments.FINISHED and t.cancelled
    assert [ledger.balance(mm.store, p) for p, _ in people] == [1000] * 4
    assert escrow_of(mm, tid)[SILVER] == 0
    with pytest.raises(FailedPrecondition):
        mm.cancel_tournament(ctok, tid)  # once
    with pytest.raises(FailedPrecondition):
        mm.register_tournament(people[1][1], tid)
    assert ledger.reconcile(mm.store) == []


def test_no_cancel_or_refund_after_the_start():
    mm, _, _ = make_service()
    people = players(mm, 4)
    ctok = people[0][1]
    tid = mm.create_tournament(ctok, "Cup", "", 2, 1, 1, 0, entry_silver=10).tournament_id
    for _, tok in people:
        mm.register_tournament(tok, tid)
    mm.start_tournament(ctok, tid)
    with pytest.raises(FailedPrecondition):
        mm.cancel_tournament(ctok, tid)
    with pytest.raises(FailedPrecondition):
        mm.withdraw_tournament(people[1][1], tid)
    assert [ledger.balance(mm.store, p) for p, _ in people] == [990] * 4


def play_out(mm, alloc, tid, seed=5):
    rng = random.Random(seed)
    while mm.tournament(tid).state == tournaments.RUNNING:
        settle_round(mm, alloc, tid, rng)
    return mm.tournament(tid)


def test_the_start_spends_match_cards_and_prizes_are_paid_once_by_rank():
    mm, alloc, clock = make_service()
    people = players(mm, 4)
    ctok = people[0][1]
    for pid, _ in people:
        give_match_cards(mm, pid, 1)
    tid = mm.create_tournament(
        ctok, "Cup", "", 2, 2, 1, 0, entry_silver=100, entry_match_cards=1
    ).tournament_id
    for _, tok in people:
        mm.register_tournament(tok, tid)
    house_cards = ledger.balance(mm.store, ledger.HOUSE, CARD)
    mm.start_tournament(ctok, tid)
    assert ledger.balance(mm.store, ledger.HOUSE, CARD) == house_cards + 4
    assert escrow_of(mm, tid) == {**escrow_of(mm, tid), SILVER: 400, CARD: 0}
    t = play_out(mm, alloc, tid)
    assert t.state == tournaments.FINISHED
    chips = ledger.chips_by_player(mm.store, f"tournament/{tid}")
    by_rank = {s.rank: s.player_id for s in mm.final_ranking(t.tournament_id)}
    # 400 by 50 / 30 / 20: 200, 120, 80; rank 4 nothing
    assert [(p.rank, p.player_id, p.assets) for p in t.prizes] == [
        (1, by_rank[1], ((SILVER, 200),)),
        (2, by_rank[2], ((SILVER, 120),)),
        (3, by_rank[3], ((SILVER, 80),)),
    ]
    expect = {by_rank[1]: 200, by_rank[2]: 120, by_rank[3]: 80, by_rank[4]: 0}
    balances = {p: ledger.balance(mm.store, p) for p, _ in people}
    assert balances == {p: 900 + chips.get(p, 0) + expect[p] for p, _ in people}
    assert escrow_of(mm, tid)[SILVER] == 0
    # a retried finish (another replica's tick, a repeated report) pays nothing again
    clock.advance(60)
    mm.tournament_desk._settle_purse(mm.tournament(tid))
    mm.tick()
    assert {p: ledger.balance(mm.store, p) for p, _ in people} == balances
    assert ledger.reconcile(mm.store) == []


def test_prize_split_rounds_to_rank_one_and_gives_absent_ranks_to_rank_one():
    assert prize_split(400, (50, 30, 20), 4) == [200, 120, 80]
    assert prize_split(7, (50, 30, 20), 3) == [4, 2, 1]  # 3 + 2 + 1, the 1 left to rank 1
    assert prize_split(100, (50, 30, 20), 2) == [70, 30]  # rank 3's share to rank 1
    assert prize_split(100, (100,), 8) == [100]
    assert prize_split(100, (50, 50), 0) == []


@pytest.mark.parametrize("percent", [[50, 30], [101, -1], [0] * 65, [60, 30, 20]])
def test_prize_shares_must_sum_to_100(percent):
    mm, _, _ = make_service()
    ((_, tok),) = players(mm, 1)
    with pytest.raises(InvalidArgument) as err:
        mm.create_tournament(tok, "Cup", "", 2, 1, 1, 0, prize_percent=percent)
    assert err.value.details["field"] == "prize_percent"
    assert list_ids(mm.tournament_records) == []


@pytest.mark.parametrize(("silver", "cards"), [(-1, 0), (0, -1), (10**13, 0), (0, 1001)])
def test_entry_out_of_range_is_refused(silver, cards):
    mm, _, _ = make_service()
    ((_, tok),) = players(mm, 1)
    with pytest.raises(InvalidArgument):
        mm.create_tournament(
            tok, "Cup", "", 2, 1, 1, 0, entry_silver=silver, entry_match_cards=cards
        )


def test_house_prizes_are_funded_by_the_house_and_paid_to_their_rank():
    mm, alloc, _ = make_service()
    people = players(mm, 4)
    ctok = people[0][1]
    tid = mm.create_tournament(ctok, "Cup", "", 2, 1, 1, 0, prize_percent=[100]).tournament_id
    for _, tok in people:
        mm.register_tournament(tok, tid)
    house = held(mm, ledger.HOUSE)
    for _ in range(2):  # a retried request adds nothing twice
        t = mm.add_tournament_prize(tid, 2, [(ledger.DOUBLE_CARD, 3), (SILVER, 50)], "cup", "r1")
    assert len(t.house_prizes) == 2
    assert held(mm, ledger.HOUSE)[ledger.DOUBLE_CARD] == house[ledger.DOUBLE_CARD] - 3
    assert escrow_of(mm, tid)[ledger.DOUBLE_CARD] == 3
    with pytest.raises(InvalidArgument):
        mm.add_tournament_prize(tid, 1, [(SILVER, 5)], "", "r2")  # a reason is required
    with pytest.raises(InvalidArgument):
        mm.add_tournament_prize(tid, 1, [(SILVER, -5)], "x", "r3")
    mm.start_tournament(ctok, tid)
    t = play_out(mm, alloc, tid)
    second = mm.final_ranking(t.tournament_id)[1].player_id
    assert held(mm, second)[ledger.DOUBLE_CARD] == 3
    (p2,) = [p for p in t.prizes if p.rank == 2]
    assert dict(p2.assets) == {ledger.DOUBLE_CARD: 3, SILVER: 50}
    assert escrow_of(mm, tid) == dict.fromkeys(escrow_of(mm, tid), 0)
    assert ledger.reconcile(mm.store) == []


def test_a_cancelled_tournament_returns_house_prizes_to_the_house():
    mm, _, _ = make_service()
    ((_, ctok),) = players(mm, 1)
    tid = mm.create_tournament(ctok, "Cup", "", 2, 1, 1, 0).tournament_id
    before = held(mm, ledger.HOUSE)[SILVER]
    mm.add_tournament_prize(tid, 1, [(SILVER, 500)], "spring", "r1")
    mm.cancel_tournament(ctok, tid)
    assert held(mm, ledger.HOUSE)[SILVER] == before
    assert escrow_of(mm, tid)[SILVER] == 0


def test_bot_ranks_pay_their_share_to_the_house():
    mm, alloc, _ = make_service()
    ((pid, ptok),) = players(mm, 1)
    tid = mm.create_tournament(ptok, "Cup", "", 2, 1, 1, 3, entry_silver=100).tournament_id
    mm.register_tournament(ptok, tid)
    mm.start_tournament(ptok, tid)
    house = held(mm, ledger.HOUSE)[SILVER]
    rng = random.Random(11)
    shares = settle_round(mm, alloc, tid, rng)  # escape shares to the house
    t = mm.tournament(tid)
    assert t.state == tournaments.FINISHED
    chips = ledger.chips_by_player(mm.store, f"tournament/{tid}")
    me = next(s for s in mm.final_ranking(t.tournament_id) if s.player_id == pid)
    mine = {1: 50, 2: 30, 3: 20, 4: 0}[me.rank]  # one paid entry: a pool of 100
    assert ledger.balance(mm.store, pid) == 900 + chips.get(pid, 0) + mine
    bots_net = sum(v for k, v in chips.items() if k != pid)  # the house took the bots' side
    assert held(mm, ledger.HOUSE)[SILVER] == house + bots_net + shares + (100 - mine)
    assert ledger.reconcile(mm.store) == []
