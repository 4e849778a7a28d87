"""Flood control and watch-stream counts over a real loopback server (its default 256 handler
threads, 248 of them for streams). The issue's attack — 248 anonymous WatchTournament streams,
which held every stream thread of a replica and locked out every WatchAssignments — is refused
(a watch needs a session); a player holds at most 8 streams and an address 32, so neither a
player with many streams nor an address with many players locks anyone else out; a player
flooding calls is refused RESOURCE_EXHAUSTED with RetryInfo while its neighbour is served."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.interceptor import stream_limit
from infra.request_ids import with_request_ids
from infra.supervisor import DEV_TLS_ROOT
from infra.tls import client_channel
from services.matchmaking.server import DEFAULT_MAX_WORKERS
from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.stacks import matchmaking_spec

T = 10


def details(err: grpc.RpcError) -> tuple[str, int]:
    """(ErrorInfo reason, RetryInfo delay in ms) of a refusal."""
    status = rpc_status.from_call(err)
    info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
    status.details[0].Unpack(info)
    delay = -1
    if len(status.details) > 1:
        status.details[1].Unpack(retry)
        delay = retry.retry_delay.seconds * 1000 + retry.retry_delay.nanos // 1_000_000
    return info.reason, delay


@pytest.fixture
def served():
    """Matchmaking on localhost (IPv4 and IPv6 loopback: two client addresses) with its
    default handler threads, and a player stub from each address."""
    with serving(matchmaking_spec(), host="localhost", max_workers=DEFAULT_MAX_WORKERS) as (
        server,
        _channel,
    ):
        port = server.port
        ca = str(DEV_TLS_ROOT / "ca.crt")
        v4 = with_request_ids(client_channel(f"127.0.0.1:{port}", ca_file=ca))
        v6 = with_request_ids(client_channel(f"[::1]:{port}", ca_file=ca))
        try:
            yield server, pb_grpc.MatchmakingServiceStub(v4), pb_grpc.MatchmakingServiceStub(v6)
        finally:
            v4.close()
            v6.close()


def watch_ticket(stub, token):
    """A WatchAssignments stream of a new ticket of the player, and its first message."""
    ticket = stub.JoinQueue(pb.JoinQueueRequest(session_token=token), timeout=T).ticket
    stream = stub.WatchAssignments(
        pb.WatchAssignmentsRequest(session_token=token, ticket_id=ticket.ticket_id), timeout=30
    )
    return stream, next(stream)


def tournament_of(stub, token) -> str:
    request = pb.CreateTournamentRequest(
        session_token=token, name="Cup", stake=1, rounds=1, hands_per_round=1
    )
    return stub.CreateTournament(request, timeout=T).tournament.tournament_id


def test_248_anonymous_tournament_watchers_lock_nobody_out(served, mm_server_model):
    server, v4, _ = served
    assert stream_limit(server.config.max_workers) == 248
    _, creator = sign_in(v4, "Creator")
    tid = tournament_of(v4, creator)
    attack = [
        v4.WatchTournament(pb.WatchTournamentRequest(tournament_id=tid), timeout=30)
        for _ in range(248)
    ]  # all started at once
    codes = set()
    for stream in attack:
        with pytest.raises(grpc.RpcError) as err:
            next(stream)
        codes.add(err.value.code())
    if mm_server_model == "asyncio":
        # A stream holds its place under --max-streams from its first byte until the handler
        # refuses it, so 248 at once against a limit of 248 may see the limit first; what
        # matters is below: none got in, and nobody is locked out once they are gone.
        assert codes <= {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert grpc.StatusCode.UNAUTHENTICATED in codes
    else:
        assert codes == {grpc.StatusCode.UNAUTHENTICATED}
    _, player = sign_in(v4, "Player")
    stream, first = watch_ticket(v4, player)  # the quick-match watcher gets in
    assert first.ticket.state == pb.TICKET_STATE_WAITING
    stream.cancel()


def test_a_player_holds_at_most_8_streams_and_an_address_32(served):
    _, v4, v6 = served
    _, creator = sign_in(v4, "Creator")
    tid = tournament_of(v4, creator)
    held, refusals = [], []

    def open_watch(stub, token):
        stream = stub.WatchTournament(
            pb.WatchTournamentRequest(tournament_id=tid, session_token=token), timeout=30
        )
        try:
            next(stream)
            held.append(stream)
            return True
        except grpc.RpcError as exc:
            refusals.append(exc)
            return False

    try:
        greedy = sign_in(v4, "Greedy")[1]
        assert [open_watch(v4, greedy) for _ in range(9)] == [True] * 8 + [False]
        assert refusals[-1].code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert details(refusals[-1]) == ("TOO_MANY_STREAMS", 1000)
        # the greedy player's ninth is refused; a neighbour at its address still gets in
        neighbour = sign_in(v4, "Neighbour")[1]
        assert open_watch(v4, neighbour)
        # many players of one address: 32 streams of that address, then refused ...
        for i in range(3):
            token = sign_in(v4, f"Farm{i}")[1]
            for _ in range(8):
                open_watch(v4, token)
        assert len(held) == 32
        assert details(refusals[-1])[0] == "TOO_MANY_STREAMS"
        # ... and a player of another address is not locked out by them
        _, elsewhere = sign_in(v6, "Elsewhere")
        stream, first = watch_ticket(v6, elsewhere)
        held.append(stream)
        assert first.ticket.state == pb.TICKET_STATE_WAITING
    finally:
        for stream in held:
            stream.cancel()


def test_a_flooding_player_is_refused_and_its_neighbour_is_served():
    extra = {"flood_player_rate": 5, "flood_player_burst": 10, "flood_address_rate": 1000}
    with serving(matchmaking_spec(), extra=extra) as (_server, channel):
        stub = pb_grpc.MatchmakingServiceStub(channel)
        _, flooder = sign_in(stub, "Flooder")
        _, neighbour = sign_in(stub, "Neighbour")
        request = pb.GetPlayerRequest(session_token=flooder)
        answered, refused = 0, []
        for _ in range(50):
            try:
                stub.GetPlayer(request, timeout=T)
                answered += 1
            except grpc.RpcError as exc:
                refused.append(exc)
        assert 10 <= answered < 20  # its burst, and what 5 a second refill meanwhile
        assert {e.code() for e in refused} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        reason, delay = details(refused[-1])
        assert reason == "RATE_LIMITED" and 0 < delay <= 200
        me = stub.GetPlayer(pb.GetPlayerRequest(session_token=neighbour), timeout=T).player
        assert me.display_name == "Neighbour"


def test_an_address_flooding_without_a_session_is_refused():
    extra = {"flood_address_rate": 10, "flood_address_burst": 20}
    with serving(matchmaking_spec(), extra=extra) as (_server, channel):
        stub = pb_grpc.MatchmakingServiceStub(channel)
        refused = []
        for _ in range(60):  # forged tokens count against their address, as no session
            try:
                stub.GetPlayer(pb.GetPlayerRequest(session_token="forged"), timeout=T)
            except grpc.RpcError as exc:
                refused.append(exc)
        flooded = [e for e in refused if e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED]
        assert len(flooded) >= 30
        assert "127.0.0.1" in flooded[-1].details()
        assert {e.code() for e in refused} == {
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            grpc.StatusCode.UNAUTHENTICATED,
        }
