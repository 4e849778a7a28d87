"""ListLiveSeats over a real matchmaking server: a signed-in player reads the tables where they
sit now (to go back to them from anywhere), their own only; another player's session, a forged
one and one signed out read nothing of theirs. (The seat's token then comes from the
gateway's JoinSeat with the same session: tests/integration/test_matchmaking_stack.py.)"""

from __future__ import annotations

import grpc
from mahjong.common.v1 import common_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from services.matchmaking.domain.tables import live_seats
from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.probes import rpc_error
from tests.support.stacks import matchmaking_spec
from tests.unit.matchmaking.mm_fakes import FakeAllocator

T = 10


def test_each_player_lists_their_own_live_seats_and_nobody_elses():
    alloc = FakeAllocator()
    with serving(matchmaking_spec(alloc)) as (server, channel):
        stub = pb_grpc.MatchmakingServiceStub(channel)
        mm = server.resource.matchmaking
        signed = [sign_in(stub, n) for n in ("A", "B", "C", "D", "Outsider")]
        for _, token in signed[:4]:
            stub.JoinQueue(pb.JoinQueueRequest(session_token=token), timeout=T)
        mm.tick()
        ((request, table),) = alloc.tables.values()
        seat_of = {s.player_id: i for i, s in enumerate(request.seats)}

        def listed(token: str) -> list[pb.LiveSeat]:
            req = pb.ListLiveSeatsRequest(session_token=token)
            return list(stub.ListLiveSeats(req, timeout=T).seats)

        for player, token in signed[:4]:
            (seat,) = listed(token)
            assert seat.table_id == table.table_id and seat.tag == request.tag
            assert seat.seat == common_pb2.Seat.values()[seat_of[player.player_id] + 1]
            assert seat.stake == request.stake > 0
        _, outsider = signed[4]
        assert listed(outsider) == []  # seated nowhere: nobody else's seats

        forged = signed[0][1][:-4] + "AAAA"
        code, _, _ = rpc_error(lambda: listed(forged))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        code, _, _ = rpc_error(lambda: listed(""))
        assert code == grpc.StatusCode.UNAUTHENTICATED

        a_token = signed[0][1]
        stub.SignOut(pb.SignOutRequest(session_token=a_token), timeout=T)
        code, _, _ = rpc_error(lambda: listed(a_token))
        assert code == grpc.StatusCode.UNAUTHENTICATED  # a signed-out session reads nothing

        # the table ends: B sits there no more
        live_seats.unseat(mm.table_records, table.table_id, [signed[1][0].player_id])
        assert listed(signed[1][1]) == []
        assert [s.table_id for s in listed(signed[2][1])] == [table.table_id]
