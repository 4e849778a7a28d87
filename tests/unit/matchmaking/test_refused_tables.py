"""Settings a gateway would refuse are refused when a room or tournament is created, and a
table the gateway refuses anyway (its limits changed, a house rule it rejects) is asked for
once: the room, tournament or quick-match ticket fails with the gateway's reason, its players
are free, and no tick asks again (before, CreateTable was retried every tick forever)."""

from __future__ import annotations

import pytest

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.domain.rooms import private as rooms
from services.matchmaking.domain.tables.allocator import TableRefused
from services.matchmaking.domain.tournaments import tournament as tournaments
from services.matchmaking.domain.tournaments.records import running_ids
from shared.errors import InvalidArgument
from shared.table import MAX_HANDS
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import FakeAllocator, give, make_service

ASSETS_AFTER_ENTRY = {"silver": 900, "room_card": 3, "double_card": 0, "match_card": 0}
REASON = "INVALID_ARGUMENT max_hands 10001 out of range 0-10000"


class RefusingAllocator(FakeAllocator):
    """A gateway that refuses every table for what it asks."""

    def create_table(self, request):
        self.calls += 1
        raise TableRefused(f"the gateway refused the table: {REASON}")


@pytest.fixture
def refused():
    mm, _, clock = make_service()
    alloc = RefusingAllocator()
    mm.allocator.inner = alloc  # the recorder in front of it stays
    return mm, alloc, clock


def test_a_room_whose_table_is_refused_finishes_with_the_reason_and_frees_its_player(refused):
    mm, alloc, _ = refused
    _, token = sign_in(mm, "Owner")
    room = mm.open_room(token, "", 8)
    for _ in range(3):
        mm.invite_bot(token, room.code)
    mm.set_room_stake(token, room.code, 1)
    assert mm.account(mm.authenticate(token).player_id).room_cards == 2
    room = mm.press_start(token, room.code)
    assert room.state == rooms.FINISHED and REASON in room.failure
    assert mm.account(mm.authenticate(token).player_id).room_cards == 3  # its 房卡 is back
    for _ in range(20):
        mm.tick()
    assert alloc.calls == 1  # asked once, never again
    _, room = mm.room(token, room.code)
    assert room.state == rooms.FINISHED and REASON in room.failure
    ticket = mm.join_queue(token, "", 0)  # the player is free to play elsewhere
    assert ticket.state == queues.WAITING


def test_a_tournament_whose_table_is_refused_finishes_with_the_reason(refused):
    mm, alloc, _ = refused
    creator, token = sign_in(mm, "Creator")
    give(mm, creator.player_id, ledger.MATCH_CARD, 2)
    t = mm.create_tournament(token, "Cup", "", 1, 2, 4, 3, entry_silver=100, entry_match_cards=2)
    mm.register_tournament(token, t.tournament_id)
    assert mm.account(creator.player_id).assets == {**ASSETS_AFTER_ENTRY}
    t = mm.start_tournament(token, t.tournament_id)
    assert t.state == tournaments.FINISHED and REASON in t.failure
    assert running_ids(mm.tournament_records) == []
    # no prize for a tournament that never played: the whole entry is back
    assert mm.account(creator.player_id).assets == {
        **ASSETS_AFTER_ENTRY,
        "silver": 1000,
        "match_card": 2,
    }
    assert ledger.reconcile(mm.store) == []
    for _ in range(20):
        mm.tick()
    assert alloc.calls == 1
    assert mm.account(creator.player_id).assets["silver"] == 1000  # refunded once


def test_a_quick_match_whose_table_is_refused_cancels_its_tickets_with_the_reason(refused):
    mm, alloc, clock = refused
    _, token = sign_in(mm, "Solo")
    ticket = mm.join_queue(token, "", 0)
    clock.advance(mm.config.bot_fill_seconds)
    for _ in range(20):
        mm.tick()
    assert alloc.calls == 1
    ticket = mm.ticket(token, ticket.ticket_id)
    assert ticket.state == queues.CANCELLED and REASON in ticket.failure
    assert mm.whereabouts(mm.authenticate(token).player_id) == ("", "")
    assert mm.join_queue(token, "", 0).state == queues.WAITING  # may queue again at once


def test_hand_counts_above_the_gateways_cap_are_refused_at_creation():
    mm, alloc, _ = make_service()
    player, token = sign_in(mm, "Owner")
    cards = mm.account(player.player_id).room_cards
    with pytest.raises(InvalidArgument) as err:
        mm.open_room(token, "", MAX_HANDS + 1)
    assert err.value.details == {"field": "max_hands"} and "10000" in err.value.message
    assert mm.account(player.player_id).room_cards == cards  # nothing spent
    assert mm.open_room(token, "", MAX_HANDS).max_hands == MAX_HANDS
    with pytest.raises(InvalidArgument) as err:
        mm.create_tournament(token, "Cup", "", 1, 1, MAX_HANDS + 1, 4)
    assert err.value.details == {"field": "hands_per_round"}
    with pytest.raises(InvalidArgument) as err:
        mm.create_tournament(token, "Cup", "", 10**13, 1, 4, 4)
    assert err.value.details["field"] == "stake"
    assert alloc.calls == 0
