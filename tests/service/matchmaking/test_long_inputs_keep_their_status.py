"""Matchmaking over a real loopback server: an error naming a huge input keeps its status code
(the status message travels in trailing metadata, refused by clients past 16 KiB; before the fix
the client saw RESOURCE_EXHAUSTED "received metadata size exceeds hard limit")."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.stacks import matchmaking_spec


@pytest.fixture
def stub():
    with serving(matchmaking_spec()) as (_server, channel):
        yield pb_grpc.MatchmakingServiceStub(channel)


def test_unknown_room_with_a_huge_code_is_not_found(stub):
    token = sign_in(stub, "Ann")[1]
    with pytest.raises(grpc.RpcError) as err:
        stub.GetRoom(pb.GetRoomRequest(session_token=token, code="9" * 100_000), timeout=10)
    assert err.value.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT)
    info = error_details_pb2.ErrorInfo()
    rpc_status.from_call(err.value).details[0].Unpack(info)
    assert info.domain == "mahjong"


def test_unknown_tournament_with_a_huge_id_is_not_found(stub):
    token = sign_in(stub, "Ann")[1]
    with pytest.raises(grpc.RpcError) as err:
        stub.GetStandings(
            pb.GetStandingsRequest(tournament_id="t" * 1_000_000, session_token=token), timeout=10
        )
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
