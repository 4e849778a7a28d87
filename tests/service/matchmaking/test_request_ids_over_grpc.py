"""Request ids over a real loopback server: a mutating call retried with its request id has one
effect — one ticket, one room (one 房卡 spent), one tournament, one purchase — and its retry
gets the first answer, on another replica of the same store too; the same id for another
request, or no id, is refused and applies nothing."""

from __future__ import annotations

import uuid

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from services.matchmaking.domain.tournaments.records import list_ids
from services.matchmaking.storage import queue_records
from tests.support.grpc_server import raw_channel_to, serving
from tests.support.identity import sign_in
from tests.support.stacks import matchmaking_spec

T = 10


@pytest.fixture
def env():
    with serving(matchmaking_spec()) as (server, channel):
        yield pb_grpc.MatchmakingServiceStub(channel), server.resource.matchmaking, server


def rid() -> str:
    return uuid.uuid4().hex


def reason(err: grpc.RpcError) -> str:
    info = error_details_pb2.ErrorInfo()
    rpc_status.from_call(err).details[0].Unpack(info)
    return info.reason


def refused(call, request) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call(request, timeout=T)
    return err.value


def test_a_retried_join_queue_makes_one_ticket(env):
    stub, mm, _ = env
    _, token = sign_in(stub, "Ann")
    join = pb.JoinQueueRequest(session_token=token, request_id=rid())
    first = stub.JoinQueue(join, timeout=T)
    for _ in range(3):  # the answer was lost: the client sends the same request again
        assert stub.JoinQueue(join, timeout=T) == first
    assert [k for k, _ in mm.store.scan(queue_records.TICKETS)] == [first.ticket.ticket_id]
    # a new request id is a new action: refused (already queued), nothing added
    again = refused(stub.JoinQueue, pb.JoinQueueRequest(session_token=token, request_id=rid()))
    assert reason(again) == "ALREADY_QUEUED"


def test_a_retried_open_room_spends_one_room_card(env):
    stub, _, _ = env
    _, token = sign_in(stub, "Owner")
    cards = stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T).player.room_cards
    request = pb.OpenRoomRequest(session_token=token, max_hands=8, request_id=rid())
    first = stub.OpenRoom(request, timeout=T)
    assert stub.OpenRoom(request, timeout=T) == first
    me = stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T).player
    assert me.room_cards == cards - 1 == first.room_cards_left
    assert me.room_code == first.room.code


def test_a_retried_create_tournament_makes_one_tournament(env):
    stub, mm, _ = env
    _, token = sign_in(stub, "Creator")
    request = pb.CreateTournamentRequest(
        session_token=token, name="Cup", stake=1, rounds=1, hands_per_round=2, request_id=rid()
    )
    first = stub.CreateTournament(request, timeout=T)
    assert stub.CreateTournament(request, timeout=T) == first
    assert list_ids(mm.tournament_records) == [first.tournament.tournament_id]


def test_a_retried_purchase_pays_once(env):
    stub, _, _ = env
    _, token = sign_in(stub, "Buyer")
    before = stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T).player
    buy = pb.BuyItemsRequest(
        session_token=token, asset=pb.ASSET_DOUBLE_CARD, count=2, request_id=rid()
    )
    first = stub.BuyItems(buy, timeout=T)
    assert stub.BuyItems(buy, timeout=T) == first
    after = stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T).player
    assert first.silver_paid > 0
    assert after.silver == before.silver - first.silver_paid
    assert after.double_cards == before.double_cards + 2


def test_the_same_id_for_another_request_is_refused_and_applies_nothing(env):
    stub, _, _ = env
    _, token = sign_in(stub, "Ann")
    key = rid()
    room = stub.OpenRoom(pb.OpenRoomRequest(session_token=token, request_id=key), timeout=T)
    other = pb.OpenRoomRequest(session_token=token, max_hands=4, request_id=key)
    err = refused(stub.OpenRoom, other)
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason(err) == "REQUEST_ID_REUSED"
    me = stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T).player
    assert me.room_cards == room.room_cards_left  # no second card spent
    # the id is the caller's own: another player may use the same one
    _, bob = sign_in(stub, "Bob")
    joined = stub.JoinRoom(
        pb.JoinRoomRequest(session_token=bob, code=room.room.code, request_id=key), timeout=T
    )
    assert len(joined.room.members) == 2


def test_a_refusal_is_answered_again_for_its_id(env):
    stub, _, _ = env
    _, token = sign_in(stub, "Ann")
    join = pb.JoinRoomRequest(session_token=token, code="123456", request_id=rid())
    first = refused(stub.JoinRoom, join)
    again = refused(stub.JoinRoom, join)
    assert first.code() == again.code() == grpc.StatusCode.NOT_FOUND
    assert first.details() == again.details()


def test_a_mutating_call_without_a_request_id_is_refused(env):
    stub, mm, server = env
    _, token = sign_in(stub, "Ann")
    channel = raw_channel_to(server, "matchmaking", "")  # sends requests as they are
    try:
        raw = pb_grpc.MatchmakingServiceStub(channel)
        err = refused(raw.JoinQueue, pb.JoinQueueRequest(session_token=token))
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert reason(err) == "REQUEST_ID_MISSING"
        assert list(mm.store.scan(queue_records.TICKETS)) == []
        err = refused(raw.JoinQueue, pb.JoinQueueRequest(session_token=token, request_id="x" * 129))
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        # a call without a session is refused for that first, and keeps nothing
        err = refused(raw.JoinQueue, pb.JoinQueueRequest(request_id=rid()))
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED
        # reads need none
        assert raw.ListLevels(pb.ListLevelsRequest(), timeout=T).levels
    finally:
        channel.close()


def test_a_retry_on_another_replica_gets_the_first_answer(tmp_path):
    url = f"sqlite:///{tmp_path}/mm.db"
    with (
        serving(matchmaking_spec(), store_url=url) as (_a, to_a),
        serving(matchmaking_spec(), store_url=url) as (_b, to_b),
    ):
        a, b = pb_grpc.MatchmakingServiceStub(to_a), pb_grpc.MatchmakingServiceStub(to_b)
        _, token = sign_in(a, "Ann")
        join = pb.JoinQueueRequest(session_token=token, request_id=rid())
        first = a.JoinQueue(join, timeout=T)
        assert b.JoinQueue(join, timeout=T) == first  # the first replica's answer, kept
