"""What a player may read over a real loopback server: GetBalances takes a session and at most
100 ids, shows silver only of the caller's own account and levels of other players, and knows
no bot or house account; tournaments are read with a session (their streams are counted per
player)."""

from __future__ import annotations

import grpc
import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.stacks import matchmaking_spec

T = 10


@pytest.fixture
def stub():
    with serving(matchmaking_spec()) as (_server, channel):
        yield pb_grpc.MatchmakingServiceStub(channel)


def code_of(call, request) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        call(request, timeout=T)
    return err.value.code()


def test_silver_is_the_callers_own_and_levels_are_everyones(stub):
    ann, ann_token = sign_in(stub, "Ann")
    bob, _ = sign_in(stub, "Bob")
    got = stub.GetBalances(
        pb.GetBalancesRequest(player_ids=[bob.player_id, ann.player_id], session_token=ann_token),
        timeout=T,
    ).balances
    assert [b.player_id for b in got] == [bob.player_id, ann.player_id]  # request order
    assert (got[0].own, got[0].silver) == (False, 0)  # not Bob's silver
    assert got[0].level.name == bob.level.name  # but his level
    assert (got[1].own, got[1].silver) == (True, ann.silver)
    (mine,) = stub.GetBalances(pb.GetBalancesRequest(session_token=ann_token)).balances
    assert (mine.player_id, mine.own, mine.silver) == (ann.player_id, True, 1000)  # no ids: own


def test_balances_need_a_session_and_at_most_100_ids(stub):
    ann, token = sign_in(stub, "Ann")
    ids = [ann.player_id]
    assert code_of(stub.GetBalances, pb.GetBalancesRequest(player_ids=ids)) == (
        grpc.StatusCode.UNAUTHENTICATED
    )
    forged = pb.GetBalancesRequest(player_ids=ids, session_token=token[:-4] + "AAAA")
    assert code_of(stub.GetBalances, forged) == grpc.StatusCode.UNAUTHENTICATED
    many = pb.GetBalancesRequest(player_ids=ids * 101, session_token=token)
    assert code_of(stub.GetBalances, many) == grpc.StatusCode.INVALID_ARGUMENT
    assert len(stub.GetBalances(pb.GetBalancesRequest(player_ids=ids * 100, session_token=token),
                                timeout=T).balances) == 100  # fmt: skip


def test_the_house_and_bots_are_no_accounts_a_player_sees(stub):
    _, token = sign_in(stub, "Owner")
    room = stub.OpenRoom(pb.OpenRoomRequest(session_token=token), timeout=T).room
    room = stub.InviteBot(pb.InviteBotRequest(session_token=token, code=room.code), timeout=T)
    bot = room.room.members[1].player_id
    for hidden in ("house", bot, "p-nobody"):
        request = pb.GetBalancesRequest(player_ids=[hidden], session_token=token)
        assert code_of(stub.GetBalances, request) == grpc.StatusCode.NOT_FOUND


def test_tournaments_are_read_with_a_session(stub):
    _, token = sign_in(stub, "Creator")
    tid = stub.CreateTournament(
        pb.CreateTournamentRequest(
            session_token=token, name="Cup", stake=1, rounds=1, hands_per_round=1
        ),
        timeout=T,
    ).tournament.tournament_id
    for call, request in (
        (stub.GetTournament, pb.GetTournamentRequest(tournament_id=tid)),
        (stub.GetStandings, pb.GetStandingsRequest(tournament_id=tid)),
    ):
        assert code_of(call, request) == grpc.StatusCode.UNAUTHENTICATED
        request.session_token = token
        assert call(request, timeout=T)
    stream = stub.WatchTournament(pb.WatchTournamentRequest(tournament_id=tid), timeout=T)
    with pytest.raises(grpc.RpcError) as err:
        next(stream)
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
