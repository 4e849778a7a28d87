"""破产 in matchmaking (RULES-items §4): a hand after which a player's silver no longer covers
the most one hand can cost at the table's stake answers their seat and the bot taking it; the
allocation's seating changes with the answer, so the next hands' reports name the bot (charged
to the house: bots have no wallets), a repeated report of that hand still names the player and
gets the same answer, and one naming the player again later is refused. The books stay whole."""

from __future__ import annotations

import pytest

from infra.store.memory import MemoryStore
from services.matchmaking.domain.economy import hand_cover, ledger, reconciliation
from services.matchmaking.domain.economy.desk import replacement_bot_id
from services.matchmaking.domain.economy.ledger import HandReport
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.storage.table_records import TableRecords
from shared.errors import FailedPrecondition
from tests.unit.matchmaking.mm_fakes import make_service, seated_quick_table


def setup():
    mm, alloc, _ = make_service()
    tid, tag, ids, _ = seated_quick_table(mm, alloc)
    table = allocated_tables.find(mm.table_records, tid)
    assert table is not None
    cover = hand_cover.loss_cap(table.ruleset, dict(table.ruleset_options), table.stake)
    assert cover is not None and 0 < cover < 1000
    return mm, tid, tag, list(ids), cover


def test_a_player_below_the_cover_is_answered_bankrupt_and_the_bot_is_seated_for_later_hands():
    mm, tid, tag, ids, cover = setup()
    loss = 1000 - cover + 1  # A keeps cover - 1: one short of the next hand
    new, seats, bots = mm.hand_answer(HandReport("h1", tid, tag, ids, (-loss, loss, 0, 0)))
    bot = replacement_bot_id(tid, 0)
    assert (new, seats, bots) == (True, [0], [bot])
    assert ledger.balance(mm.store, ids[0]) == cover - 1

    # a repeat of the same hand (its answer lost) still names A: the same answer, no change
    assert mm.hand_answer(HandReport("h1", tid, tag, ids, (-loss, loss, 0, 0))) == (
        False,
        [0],
        [bot],
    )
    table = allocated_tables.find(mm.table_records, tid)
    assert table is not None and table.player_ids == (bot, *ids[1:])
    assert table.seating_of("h1") == tuple(ids) and table.seating_of("h2") == table.player_ids

    # the next hand names the bot: its loss is the house's, A is not touched
    later = [bot, *ids[1:]]
    assert mm.hand_answer(HandReport("h2", tid, tag, later, (-30, 10, 10, 10))) == (True, [], [])
    assert ledger.balance(mm.store, ids[0]) == cover - 1
    assert ledger.balance(mm.store, bot) == 0  # no wallet
    # a later report naming A again is refused: nothing recorded
    with pytest.raises(FailedPrecondition, match="seats"):
        mm.hand_answer(HandReport("h3", tid, tag, ids, (-1, 1, 0, 0)))
    assert ledger.reconcile(mm.store) == []
    books = reconciliation.report_for(mm.store, "", mm.clock(), 10**9)
    assert books.discrepancies == ()
    # the bot's seat is the house's: what it lost in h2 is what B, C and D won from bots
    assert {p.player_id: p.silver for p in books.players} == {ids[1]: 10, ids[2]: 10, ids[3]: 10}


def test_replace_seat_is_idempotent_and_needs_an_allocated_table():
    mm, tid, _, ids, _ = setup()
    first = allocated_tables.replace_seat(mm.table_records, tid, 2, "bot-x-s2", "h4")
    again = allocated_tables.replace_seat(mm.table_records, tid, 2, "bot-x-s2", "h4")
    assert first == again and first.bankrupt == ((2, ids[2], "h4"),)
    with pytest.raises(Exception, match="not allocated"):
        allocated_tables.replace_seat(TableRecords(MemoryStore()), "t_none", 0, "bot-y", "h1")


def test_a_player_who_still_covers_the_next_hand_stays():
    mm, tid, tag, ids, cover = setup()
    loss = 1000 - cover  # exactly the cover left
    assert mm.hand_answer(HandReport("h1", tid, tag, ids, (-loss, loss, 0, 0))) == (True, [], [])
    assert allocated_tables.find(mm.table_records, tid).player_ids == tuple(ids)
