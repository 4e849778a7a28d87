"""Matchmaking's web port (Connect, as browsers call it) on both server models
(tests/support/server_models.py): the same watch streams and unary calls as over gRPC, behind the
same guard. On the asyncio model the port runs on the server's event loop and an open
WatchTournament holds no thread; on the threaded model each waits in a thread of the port's."""

from __future__ import annotations

import threading

import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc
from prometheus_client import REGISTRY

from infra.ports import AUTO_PORT
from infra.web_calls import method_infos
from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.probes import wait_for
from tests.support.stacks import matchmaking_spec

METHODS = method_infos(pb.DESCRIPTOR.services_by_name["MatchmakingService"])
T = 10
WATCHERS = 24  # three players' 8 streams each (the guard's limit per player)


def _web_streams_open() -> float:
    return REGISTRY.get_sample_value("mahjong_web_streams_open") or 0


def _web_stream_threads() -> int:
    return sum(t.name.startswith("web-stream") for t in threading.enumerate())


@pytest.fixture
def served(mm_server_model):
    with serving(matchmaking_spec(), extra={"web_port": AUTO_PORT}) as (server, channel):
        web = ConnectClientSync(
            f"http://127.0.0.1:{server.resource.web_port}", codec=google_protobuf_binary_codec()
        )
        try:
            yield mm_server_model, pb_grpc.MatchmakingServiceStub(channel), web
        finally:
            web.close()


def test_watch_streams_and_calls_on_the_web_port(served):
    model, stub, web = served
    tokens = [sign_in(stub, f"Web{i}")[1] for i in range(4)]
    tid = stub.CreateTournament(
        pb.CreateTournamentRequest(
            session_token=tokens[0], name="Web", stake=1, rounds=1, hands_per_round=1
        ),
        timeout=T,
    ).tournament.tournament_id
    threads_before = _web_stream_threads()
    open_before = _web_streams_open()
    streams = [
        web.execute_server_stream(
            request=pb.WatchTournamentRequest(tournament_id=tid, session_token=tok),
            method=METHODS["WatchTournament"],
            timeout_ms=30_000,
        )
        for tok in tokens[:3]
        for _ in range(WATCHERS // 3)
    ]
    firsts = [next(s) for s in streams]
    assert {f.tournament.tournament_id for f in firsts} == {tid}
    assert _web_streams_open() == open_before + WATCHERS
    if model == "asyncio":
        assert _web_stream_threads() == threads_before  # no thread per stream
    else:
        assert _web_stream_threads() >= threads_before + WATCHERS
    # The guard of the gRPC port: a ninth stream of one player is refused.
    ninth = web.execute_server_stream(
        request=pb.WatchTournamentRequest(tournament_id=tid, session_token=tokens[0]),
        method=METHODS["WatchTournament"],
        timeout_ms=T * 1000,
    )
    with pytest.raises(ConnectError) as err:
        next(ninth)
    assert err.value.code.name == "RESOURCE_EXHAUSTED" and "8 open watch streams" in str(
        err.value.message
    )
    # A change (a join over the web port) reaches every stream.
    web.execute_unary(
        request=pb.JoinTournamentRequest(
            session_token=tokens[3], tournament_id=tid, request_id="web-join-1"
        ),
        method=METHODS["JoinTournament"],
    )
    assert {next(s).tournament.entrant_count for s in streams} == {1}
    got = web.execute_unary(
        request=pb.GetTournamentRequest(tournament_id=tid, session_token=tokens[3]),
        method=METHODS["GetTournament"],
    )
    assert got.tournament.entrant_count == 1
    for s in streams:
        s.close()
    wait_for(lambda: _web_streams_open() == open_before, 10, "the streams' close")
