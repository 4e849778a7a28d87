"""The room service fee (房间服务费 / 台费, RULES.md §9a) over the real stack: every service a
real process (the stack of tests/integration/test_matchmaking_stack.py), a person playing with
a RemotePlayer against the gateway's bots.

* Quick match at the person's level (1,000 silver: 副主管, stake 8): each hand's result, as the
  person's stream shows it, carries the fee at the person's seat (8, the level's default) and
  none at the bots'; matchmaking books it as a room_fee entry apart from the hand's payment,
  the house gains it, and the day's reconciliation holds (payments + fees + house = 0).
* A private room opened with a fee of 10: the same, and a negative fee is INVALID_ARGUMENT with
  nothing spent.
"""

from __future__ import annotations

import time

import grpc
import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb

from infra.store import open_store
from mahjong_client import RemotePlayer
from services.matchmaking.domain.economy import ledger, reconciliation
from tests.integration.test_matchmaking_stack import (
    STARTING_SILVER,
    TIMEOUT,
    Stack,
    register,
    stub_for,
    wait_for,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    s = Stack(tmp_path_factory.mktemp("room-fee-stack"))
    try:
        yield s.start()
    finally:
        s.stop()


def books(stack: Stack) -> reconciliation.Reconciliation:
    store = open_store(f"sqlite:///{stack.tmp / 'matchmaking.db'}")
    try:
        return reconciliation.report_for(store, "", time.time(), 10**12)
    finally:
        store.close()


def house_fees(stack: Stack, tag: str) -> list[int]:
    """The house's room_fee entries of a table's hands, read from matchmaking's SQLite file."""
    store = open_store(f"sqlite:///{stack.tmp / 'matchmaking.db'}")
    try:
        return [
            e.amount
            for e in ledger.entries(store, ledger.HOUSE)
            if e.tag == tag and e.kind == ledger.ROOM_FEE
        ]
    finally:
        store.close()


def play(assignment, max_hands: int | None = None) -> RemotePlayer:
    """Play the seat (``max_hands`` of it, then leave the table), as a person would."""
    a = assignment
    player = RemotePlayer(a.gateway_address, a.table_id, a.seat_token, seat=a.seat - 1)
    try:
        player.run(max_hands=max_hands)
        if max_hands is not None:
            player.leave()
    finally:
        player.close()
    return player


def fee_entries(stub, token: str, tag_prefix: str):
    def found():
        got = stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(session_token=token))
        hand = [e for e in got.entries if e.tag.startswith(tag_prefix)]
        fees = [e for e in hand if e.kind == pb.LEDGER_ENTRY_KIND_ROOM_FEE]
        return (got, hand, fees) if fees else None

    return found


def test_a_quick_match_hand_books_the_level_fee_for_the_person_and_none_for_bots(stack):
    channel, stub = stub_for(stack)
    levels = stub.ListLevels(pb.ListLevelsRequest(), timeout=TIMEOUT).levels
    assert {lv.base_chips: lv.fee_per_hand for lv in levels}[8] == 8
    house_before = stack.house_silver()
    _, token = register(stub, "Payer")
    ticket = stub.JoinQueue(pb.JoinQueueRequest(session_token=token), timeout=TIMEOUT).ticket
    assert ticket.stake == 8
    watch = pb.WatchAssignmentsRequest(session_token=token, ticket_id=ticket.ticket_id)
    last = list(stub.WatchAssignments(watch, timeout=30))[-1].ticket
    assert last.state == pb.TICKET_STATE_ASSIGNED
    player = play(last.assignment, max_hands=1)
    seat = last.assignment.seat - 1
    result = player.log.hand_results[0]
    assert list(result.fees) == [8 if s == seat else 0 for s in range(4)]
    assert sum(result.payments) + result.house == 0  # the fee is apart from payments

    got, hand, fees = wait_for(fee_entries(stub, token, "quick/"), 60, "the fee entry", stack)
    tag = hand[0].tag
    first = [e for e in hand if e.ref == fees[-1].ref]  # entries come newest first
    assert sorted((e.kind, e.amount) for e in first) == sorted(
        [(pb.LEDGER_ENTRY_KIND_HAND, result.payments[seat]), (pb.LEDGER_ENTRY_KIND_ROOM_FEE, -8)]
    )
    # leaving in the next hand (if it was dealt) still pays that hand's fee: one fee a hand
    hands = {e.ref for e in hand if "/escape/" not in e.ref}
    assert [e.amount for e in fees] == [-8] * len(hands)
    assert got.balance == STARTING_SILVER + sum(e.amount for e in hand)
    # the house took exactly those fees; the books hold, to the chip
    assert house_fees(stack, tag) == [8] * len(hands)
    assert stack.house_silver() != house_before
    day = books(stack)
    assert day.discrepancies == ()
    assert day.room_fees >= 8
    assert day.hand_payments - day.room_fees + day.house_take == 0
    channel.close()


def test_a_room_opened_with_a_fee_charges_it_and_a_negative_fee_is_refused(stack):
    channel, stub = stub_for(stack)
    _, owner = register(stub, "Club host")
    with pytest.raises(grpc.RpcError) as err:
        stub.OpenRoom(pb.OpenRoomRequest(session_token=owner, fee_per_hand=-5), timeout=TIMEOUT)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "fee_per_hand" in err.value.details()
    me = stub.GetPlayer(pb.GetPlayerRequest(session_token=owner), timeout=TIMEOUT).player
    assert me.room_cards == 3  # nothing spent

    opened = stub.OpenRoom(
        pb.OpenRoomRequest(session_token=owner, max_hands=1, fee_per_hand=10), timeout=TIMEOUT
    ).room
    assert opened.fee_per_hand == 10
    code = opened.code
    for _ in range(3):
        stub.InviteBot(pb.InviteBotRequest(session_token=owner, code=code), timeout=TIMEOUT)
    stub.SetRoomStake(pb.SetRoomStakeRequest(session_token=owner, code=code, stake=2))
    room = stub.PressStart(pb.PressStartRequest(session_token=owner, code=code)).room

    def playing():
        got = stub.GetRoom(pb.GetRoomRequest(session_token=owner, code=code), timeout=TIMEOUT)
        return got.room if got.room.state == pb.ROOM_STATE_PLAYING else None

    if room.state != pb.ROOM_STATE_PLAYING:
        room = wait_for(playing, 30, "the room's table", stack)
    seat = room.assignment.seat - 1
    remote = play(room.assignment)
    (result,) = remote.log.hand_results
    assert list(result.fees) == [10 if s == seat else 0 for s in range(4)]
    got, hand, fees = wait_for(fee_entries(stub, owner, f"room/{code}"), 60, "the fee", stack)
    assert [e.amount for e in fees] == [-10]
    (payment,) = [e for e in hand if e.kind == pb.LEDGER_ENTRY_KIND_HAND]
    assert got.balance == STARTING_SILVER + payment.amount - 10
    assert house_fees(stack, f"room/{code}") == [10]
    assert books(stack).discrepancies == ()
    channel.close()
