"""A gateway that refuses CreateTable with INVALID_ARGUMENT (a real gRPC server, reached
through matchmaking's real GatewayAllocator) is asked once per table: the room finishes with
the gateway's reason shown to its players, the tournament too, and no tick asks again — before,
CreateTable was retried every tick forever. A gateway that is away is still retried."""

from __future__ import annotations

import contextlib
import threading
from concurrent import futures

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2_grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from services.matchmaking.adapters.gateway_client import GatewayAllocator
from services.matchmaking.server import make_spec
from tests.doubles.clock import ManualClock
from tests.support.grpc_server import serving
from tests.support.identity import identity_extra, sign_in

T = 10
REFUSAL = "max_hands 20000 out of range 0-10000"


class RefusingGateway(gateway_pb2_grpc.GatewayServiceServicer):
    """CreateTable answers ``code`` (counted): what a gateway says of settings it refuses."""

    def __init__(self, code: grpc.StatusCode) -> None:
        self.code = code
        self.calls = 0
        self.lock = threading.Lock()

    def CreateTable(self, request, context):
        with self.lock:
            self.calls += 1
        context.abort(self.code, REFUSAL)


@contextlib.contextmanager
def stack(code: grpc.StatusCode):
    """Matchmaking whose gateway answers every CreateTable ``code``: (stub, facade, gateway)."""
    gateway = RefusingGateway(code)
    server = grpc.server(futures.ThreadPoolExecutor(4))
    gateway_pb2_grpc.add_GatewayServiceServicer_to_server(gateway, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    spec = make_spec(
        allocator_factory=lambda _cfg: GatewayAllocator(
            f"127.0.0.1:{port}", timeout=2, backoff=0.01, tls=None
        ),
        clock=ManualClock(),
        ticking=False,
    )
    try:
        with serving(spec, extra=identity_extra()) as (mm_server, channel):
            yield pb_grpc.MatchmakingServiceStub(channel), mm_server.resource.matchmaking, gateway
    finally:
        server.stop(0)


def started_room(stub):
    _, token = sign_in(stub, "Owner")
    code = stub.OpenRoom(pb.OpenRoomRequest(session_token=token), timeout=T).room.code
    for _ in range(3):
        stub.InviteBot(pb.InviteBotRequest(session_token=token, code=code), timeout=T)
    stub.SetRoomStake(pb.SetRoomStakeRequest(session_token=token, code=code, stake=1), timeout=T)
    room = stub.PressStart(pb.PressStartRequest(session_token=token, code=code), timeout=T).room
    return token, room


@pytest.mark.parametrize("code", [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAVAILABLE])
def test_a_refused_room_finishes_with_the_reason_and_is_never_asked_again(code):
    with stack(code) as (stub, mm, gateway):
        token, room = started_room(stub)
        for _ in range(10):
            mm.tick()
        get = pb.GetRoomRequest(session_token=token, code=room.code)
        room = stub.GetRoom(get, timeout=T).room
        me = stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T).player
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        assert gateway.calls == 1  # one call, not GatewayAllocator's 3 tries, not every tick
        assert room.state == pb.ROOM_STATE_FINISHED and REFUSAL in room.failure
        assert me.room_code == ""  # free to play elsewhere
    else:  # a gateway away is no verdict on the room: tried again on every tick
        assert gateway.calls == 3 * 11
        assert room.state == pb.ROOM_STATE_STARTING and room.failure == ""


def test_a_refused_tournament_finishes_with_the_reason():
    with stack(grpc.StatusCode.INVALID_ARGUMENT) as (stub, mm, gateway):
        _, token = sign_in(stub, "Creator")
        request = pb.CreateTournamentRequest(
            session_token=token, name="Cup", stake=1, rounds=1, hands_per_round=2, bots=4
        )
        tid = stub.CreateTournament(request, timeout=T).tournament.tournament_id
        start = pb.StartTournamentRequest(session_token=token, tournament_id=tid)
        t = stub.StartTournament(start, timeout=T).tournament
        for _ in range(10):
            mm.tick()
        assert gateway.calls == 1
    assert t.state == pb.TOURNAMENT_STATE_FINISHED and REFUSAL in t.failure
