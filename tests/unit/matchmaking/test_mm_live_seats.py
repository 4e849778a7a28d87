"""Spending while seated (RULES-items §4): a seated player's silver must keep covering the most
one hand at their table can cost. BuyItems and a tournament's silver entry fee that would take
it lower are refused (FAILED_PRECONDITION ``SILVER_HELD_BY_SEAT``, naming the table and the
amount that must stay; nothing moves); the live seats are an index beside the allocations,
freed when the table finishes or the player goes bankrupt (a bot takes the seat)."""

from __future__ import annotations

import pytest

from services.matchmaking.domain.economy import hand_cover, ledger
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.domain.tables import live_seats
from shared.errors import FailedPrecondition
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import make_service


def seated():
    """Four players matched at a quick-match table: mm, table id, tag, ids, tokens, cover."""
    mm, alloc, _ = make_service()
    people = [sign_in(mm, n) for n in "ABCD"]
    for _, tok in people:
        mm.join_queue(tok, "", 0)
    mm.tick()
    ((request, table),) = alloc.tables.values()
    ids = [s.player_id for s in request.seats]
    tokens = {p.player_id: tok for p, tok in people}
    found = allocated_tables.find(mm.table_records, table.table_id)
    cover = hand_cover.loss_cap(found.ruleset, dict(found.ruleset_options), found.stake)
    return mm, table.table_id, request.tag, ids, [tokens[i] for i in ids], cover


def refused(fn) -> FailedPrecondition:
    with pytest.raises(FailedPrecondition) as err:
        fn()
    assert err.value.reason == "SILVER_HELD_BY_SEAT"
    return err.value


def test_a_seated_player_buys_only_what_leaves_their_seat_covered():
    mm, tid, tag, ids, tokens, cover = seated()
    assert 0 < cover < 1000 and live_seats.tables_of(mm.table_records, ids[0]) == [tid]
    price = mm.config.item_prices.of(ledger.DOUBLE_CARD)
    spare = 1000 - cover
    most = spare // price
    exc = refused(lambda: mm.buy_items(tokens[0], ledger.DOUBLE_CARD, most + 1, "r1"))
    assert tid in exc.message and f"{cover} silver kept" in exc.message
    assert exc.details["table_id"] == tid and exc.details["must_keep"] == str(cover)
    assert ledger.balance(mm.store, ids[0]) == 1000  # nothing moved
    mm.buy_items(tokens[0], ledger.DOUBLE_CARD, most, "r2")
    assert ledger.balance(mm.store, ids[0]) == 1000 - most * price >= cover
    # the table's end frees the seat: spending is the player's again
    mm.table_finished(tid, tag, 1)
    assert live_seats.tables_of(mm.table_records, ids[0]) == []
    mm.buy_items(tokens[0], ledger.DOUBLE_CARD, 1, "r3")


def test_a_bankrupt_player_left_their_seat_and_bots_are_never_indexed():
    mm, tid, tag, ids, tokens, cover = seated()
    loss = 1000 - cover + 1
    _, seats, bots = mm.hand_answer(ledger.HandReport("h1", tid, tag, ids, (-loss, loss, 0, 0)))
    assert seats == [0]
    assert live_seats.tables_of(mm.table_records, ids[0]) == []  # 破产: a bot sits there now
    assert live_seats.tables_of(mm.table_records, bots[0]) == []
    assert live_seats.tables_of(mm.table_records, ids[1]) == [tid]
    mm.buy_items(tokens[0], ledger.DOUBLE_CARD, 1, "r1")  # not seated: theirs to spend


def test_a_silver_entry_fee_is_refused_while_it_would_uncover_the_seat():
    mm, tid, _, ids, tokens, cover = seated()
    _, host = sign_in(mm, "Host")
    fee = 1000 - cover + 1
    t = mm.create_tournament(host, "Cup", "", 1, 1, 1, 3, entry_silver=fee)
    exc = refused(lambda: mm.register_tournament(tokens[0], t.tournament_id))
    assert tid in exc.message and t.tournament_id in exc.message
    assert ledger.balance(mm.store, ids[0]) == 1000
    cheap = mm.create_tournament(host, "Cheap", "", 1, 1, 1, 3, entry_silver=1000 - cover)
    mm.register_tournament(tokens[0], cheap.tournament_id)
    assert ledger.balance(mm.store, ids[0]) == cover
