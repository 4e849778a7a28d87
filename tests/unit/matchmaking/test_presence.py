"""The presence record (one per player: the ticket or room that holds it), on both store
backends: claims exclude each other, releases clear only their own claim, a crash's leftover
stops blocking after CLAIM_SECONDS (a live one never does)."""

from __future__ import annotations

import pytest

from infra.store import open_store
from services.matchmaking.domain.players import presence
from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from services.matchmaking.storage import player_records
from shared.errors import FailedPrecondition
from tests.doubles.clock import ManualClock
from tests.support.identity import issuer_config, sign_in
from tests.unit.matchmaking.mm_fakes import FakeAllocator, repositories


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    s = open_store("memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/mm.db")
    yield s
    s.close()


@pytest.fixture
def clock():
    return ManualClock()


def service(store, clock) -> Matchmaking:
    cfg = MatchmakingConfig(
        issuers=(issuer_config(),), token_secret=b"test-secret", free_room_cards=3
    )
    return Matchmaking(store, FakeAllocator(), clock, cfg)


def test_claim_excludes_and_release_clears_only_its_own_claim(store):
    assert presence.current(repositories(store).presence, "p") is None
    assert presence.claim(repositories(store).presence, "p", presence.QUEUE, "tk-1", 0.0) is None
    held = presence.claim(repositories(store).presence, "p", presence.ROOM, "123456", 1.0)
    assert held == presence.Presence("p", presence.QUEUE, "tk-1", 0.0)
    assert not presence.release(
        repositories(store).presence, "p", presence.QUEUE, "tk-2"
    )  # not its claim
    assert not presence.release(repositories(store).presence, "p", presence.ROOM, "tk-1")
    assert presence.current(repositories(store).presence, "p") == held
    assert presence.release(repositories(store).presence, "p", presence.QUEUE, "tk-1")
    assert not presence.release(
        repositories(store).presence, "p", presence.QUEUE, "tk-1"
    )  # twice: no-op
    assert presence.current(repositories(store).presence, "p") is None
    assert presence.claim(repositories(store).presence, "p", presence.ROOM, "123456", 2.0) is None
    assert presence.current(repositories(store).presence, "p").kind == presence.ROOM
    # A release never deletes, so the version only rises (no ABA for a compare).
    assert store.get(player_records.PRESENCE, "p").version == 3


def test_a_stale_claim_is_taken_over_only_after_claim_seconds_and_only_if_not_held(store):
    def dead(_):
        return False

    presence.claim(repositories(store).presence, "p", presence.QUEUE, "tk-ghost", 100.0)
    young = 100.0 + presence.CLAIM_SECONDS - 1
    assert (
        presence.claim(repositories(store).presence, "p", presence.ROOM, "000001", young, dead).ref
        == "tk-ghost"
    )
    old = 100.0 + presence.CLAIM_SECONDS
    assert (
        presence.claim(
            repositories(store).presence, "p", presence.ROOM, "000001", old, lambda h: True
        )
        is not None
    )
    assert (
        presence.claim(repositories(store).presence, "p", presence.ROOM, "000001", old) is not None
    )  # no holds
    assert (
        presence.claim(repositories(store).presence, "p", presence.ROOM, "000001", old, dead)
        is None
    )
    assert presence.current(repositories(store).presence, "p") == presence.Presence(
        "p", presence.ROOM, "000001", old
    )


def test_a_crash_between_claim_and_ticket_locks_the_player_out_only_for_claim_seconds(store, clock):
    mm = service(store, clock)
    owner, token = sign_in(mm, "Owner")[1], sign_in(mm, "P")[1]
    pid = mm.authenticate(token).player_id
    code = mm.open_room(owner, "", 0).code
    # JoinQueue claimed the presence, then the process died before the ticket was written.
    presence.claim(repositories(store).presence, pid, presence.QUEUE, "tk-never-written", clock())
    with pytest.raises(FailedPrecondition) as err:
        mm.join_room(token, code)
    assert err.value.reason == "IN_QUEUE" and "tk-never-written" in err.value.message
    assert mm.whereabouts(pid) == ("", "")  # no ticket holds it
    clock.advance(presence.CLAIM_SECONDS)
    assert len(mm.join_room(token, code).members) == 2
    assert mm.whereabouts(pid) == ("", code)


def test_a_crash_between_claim_and_room_seat_or_after_assignment_frees_the_player(store, clock):
    mm = service(store, clock)
    tokens = [sign_in(mm, f"P{i}")[1] for i in range(4)]
    pids = [mm.authenticate(t).player_id for t in tokens]
    owner = sign_in(mm, "Owner")[1]
    code = mm.open_room(owner, "", 0).code
    # JoinRoom claimed the presence and died before taking the seat.
    presence.claim(repositories(store).presence, pids[0], presence.ROOM, code, clock())
    with pytest.raises(FailedPrecondition) as err:
        mm.join_queue(tokens[0], "", 0)
    assert err.value.reason == "IN_ROOM" and code in err.value.message
    clock.advance(presence.CLAIM_SECONDS)
    first = mm.join_queue(tokens[0], "", 0)
    # The table is formed and the tickets assigned, then a crash before the presence release.
    tickets = [first] + [mm.join_queue(t, "", 0) for t in tokens[1:]]
    mm.tick()
    for p, t in zip(pids, tickets, strict=True):
        assert queues.get_ticket(mm.queue_records, t.ticket_id).state == queues.ASSIGNED
        presence.claim(
            repositories(store).presence,
            p,
            presence.QUEUE,
            t.ticket_id,
            clock() - presence.CLAIM_SECONDS,
        )
    assert len(mm.join_room(tokens[1], code).members) == 2  # assigned: free at once
    assert mm.join_queue(tokens[2], "", 0).state == queues.WAITING


def test_a_live_seat_or_ticket_keeps_its_player_however_long_it_waits(store, clock):
    mm = service(store, clock)
    waiting, seated = sign_in(mm, "Waiting")[1], sign_in(mm, "Seated")[1]
    ticket = mm.join_queue(waiting, "", 0)
    code = mm.open_room(seated, "", 0).code
    clock.advance(10 * presence.CLAIM_SECONDS)
    with pytest.raises(FailedPrecondition) as err:
        mm.open_room(waiting, "", 0)
    assert err.value.reason == "IN_QUEUE" and ticket.ticket_id in err.value.message
    with pytest.raises(FailedPrecondition) as err:
        mm.join_queue(waiting, "", 0)
    assert err.value.reason == "ALREADY_QUEUED" and ticket.queue in err.value.message
    with pytest.raises(FailedPrecondition) as err:
        mm.join_queue(seated, "", 0)
    assert err.value.reason == "IN_ROOM" and code in err.value.message
    with pytest.raises(FailedPrecondition) as err:
        mm.join_room(seated, code)
    assert err.value.reason == "ALREADY_IN_ROOM"
    with pytest.raises(FailedPrecondition) as err:
        mm.open_room(seated, "", 0)
    assert err.value.reason == "IN_ANOTHER_ROOM" and code in err.value.message
    assert mm.account(mm.authenticate(seated).player_id).room_cards == 2  # one room
