"""A store written before the ledger checked allocations: its live tables (running tournament,
playing room, assigned quick match with bots) are recorded once at start-up, so their reports
are still accepted and a round in progress does not wait forever."""

from __future__ import annotations

from infra.store.memory import MemoryStore
from services.matchmaking import allocated_tables, table_backfill
from services.matchmaking.clock import ManualClock
from services.matchmaking.ledger import HandReport
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from tests.support.identity import issuer_config, sign_in
from tests.unit.matchmaking.mm_fakes import FakeAllocator


def old_store_with_tables():
    """Tables created through today's code, then their allocation records removed."""
    store, alloc, clock = MemoryStore(), FakeAllocator(), ManualClock()
    mm = Matchmaking(
        store,
        alloc,
        clock,
        MatchmakingConfig(issuers=(issuer_config(),), token_secret=b"s", bot_fill_seconds=5),
    )
    tokens = [sign_in(mm, f"T{i}")[1] for i in range(4)]
    t = mm.create_tournament(tokens[0], "Cup", "", 2, 1, 2, 0)
    for tok in tokens:
        mm.register_tournament(tok, t.tournament_id)
    mm.start_tournament(tokens[0], t.tournament_id)
    quick = [sign_in(mm, f"Q{i}")[1] for i in range(2)]
    for tok in quick:
        mm.join_queue(tok, "", 0)
    clock.advance(10)
    mm.tick()  # two humans, two bots
    for key, _ in list(store.scan(allocated_tables.TABLES)):
        store.delete(allocated_tables.TABLES, key)
    store.delete(table_backfill.META, table_backfill.MARKER)
    return store, alloc, clock


def reports(alloc):
    return [
        HandReport(
            f"h-{a.table_id}", a.table_id, r.tag, tuple(s.player_id for s in r.seats), (0,) * 4
        )
        for r, a in alloc.tables.values()
    ]


def test_an_older_stores_tables_are_recorded_once_and_their_reports_accepted():
    store, alloc, clock = old_store_with_tables()
    assert table_backfill.backfill(store) == 2
    assert table_backfill.backfill(store) == 0  # once
    mm = Matchmaking(
        store, alloc, clock, MatchmakingConfig(issuers=(issuer_config(),), token_secret=b"s")
    )
    assert [mm.record_hand(r) for r in reports(alloc)] == [True, True]
    quick = next(r for r, _ in alloc.tables.values() if r.tag.startswith("quick/"))
    assert sum(s.bot for s in quick.seats) == 2  # bot seats rebuilt with the same ids


def test_start_up_runs_the_backfill():
    store, alloc, clock = old_store_with_tables()
    mm = Matchmaking(
        store, alloc, clock, MatchmakingConfig(issuers=(issuer_config(),), token_secret=b"s")
    )
    assert all(mm.record_hand(r) for r in reports(alloc))


def test_rooms_that_are_playing_are_recorded():
    store, alloc, clock = MemoryStore(), FakeAllocator(), ManualClock()
    mm = Matchmaking(
        store, alloc, clock, MatchmakingConfig(issuers=(issuer_config(),), token_secret=b"s")
    )
    owner = sign_in(mm, "O")[1]
    room = mm.open_room(owner, "", 4)
    for _ in range(3):
        mm.invite_bot(owner, room.code)
    mm.set_room_stake(owner, room.code, 2)
    mm.press_start(owner, room.code)
    ((request, table),) = alloc.tables.values()
    store.delete(allocated_tables.TABLES, table.table_id)
    store.delete(table_backfill.META, table_backfill.MARKER)
    assert table_backfill.backfill(store) == 1
    found = allocated_tables.find(store, table.table_id)
    assert found.tag == request.tag and found.player_ids == tuple(
        s.player_id for s in request.seats
    )
