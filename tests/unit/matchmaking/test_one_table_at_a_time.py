"""A player waits for one table at a time: a waiting quick-match ticket and a seat in a private
room exclude each other (both were allowed, so a player could be seated at a
bot-filled quick-match table and at the room's table at once)."""

from __future__ import annotations

import pytest

from services.matchmaking.domain.rooms import private as rooms
from shared.errors import FailedPrecondition
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import make_service


def test_a_queued_player_cannot_open_or_join_a_room_and_nothing_changes():
    mm, _, _ = make_service(free_room_cards=2)
    queued = sign_in(mm, "Queued")[1]
    owner = sign_in(mm, "Owner")[1]
    ticket = mm.join_queue(queued, "", 0)
    with pytest.raises(FailedPrecondition) as err:
        mm.open_room(queued, "", 0)
    assert err.value.reason == "IN_QUEUE" and ticket.ticket_id in err.value.message
    pid = mm.authenticate(queued).player_id
    assert mm.account(pid).room_cards == 2  # no room card spent
    code = mm.open_room(owner, "", 0).code
    with pytest.raises(FailedPrecondition) as err:
        mm.join_room(queued, code)
    assert err.value.reason == "IN_QUEUE"
    assert len(rooms.get_room(mm.room_records, code).members) == 1
    assert rooms.room_of_player(mm.room_records, pid) is None
    mm.leave_queue(queued, ticket.ticket_id)
    assert len(mm.join_room(queued, code).members) == 2


def test_a_player_in_a_room_cannot_join_a_queue():
    mm, _, _ = make_service(free_room_cards=2)
    owner = sign_in(mm, "Owner")[1]
    code = mm.open_room(owner, "", 0).code
    with pytest.raises(FailedPrecondition) as err:
        mm.join_queue(owner, "", 0)
    assert err.value.reason == "IN_ROOM" and code in err.value.message
    assert mm.whereabouts(mm.authenticate(owner).player_id) == ("", code)
