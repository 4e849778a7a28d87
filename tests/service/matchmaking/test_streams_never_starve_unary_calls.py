"""Matchmaking over a real loopback server: open watch streams can never starve the unary
calls. Each server-streaming call holds a handler thread for its lifetime; before the fix 16
unauthenticated WatchTournament streams (the default thread count) made every other call of the
service hang until its deadline."""

from __future__ import annotations

import time

import grpc
import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc
from prometheus_client import REGISTRY

from infra.config import parse_config
from infra.interceptor import stream_limit
from services.matchmaking.server import SPEC
from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.stacks import matchmaking_spec

WORKERS = 8


@pytest.fixture
def stub():
    with serving(matchmaking_spec(), max_workers=WORKERS) as (_server, channel):
        yield pb_grpc.MatchmakingServiceStub(channel)


def test_watchers_past_the_stream_limit_are_refused_and_unary_calls_still_answer(stub):
    token = sign_in(stub, "C")[1]
    created = stub.CreateTournament(
        pb.CreateTournamentRequest(
            session_token=token, name="T", stake=1, rounds=1, hands_per_round=1
        ),
        timeout=10,
    )
    request = pb.WatchTournamentRequest(
        tournament_id=created.tournament.tournament_id, session_token=token
    )
    streams_before = REGISTRY.get_sample_value("mahjong_server_streams_open")
    open_streams, refused = [], []
    try:
        for _ in range(WORKERS + 4):
            stream = stub.WatchTournament(request, timeout=30)
            try:
                next(stream)
                open_streams.append(stream)
            except grpc.RpcError as exc:
                refused.append(exc)
        assert open_streams and refused
        assert all(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED for e in refused)
        assert "stream" in refused[0].details()
        # The gauges an alert compares (mahjong_server_streams_open / _stream_limit).
        assert REGISTRY.get_sample_value("mahjong_server_stream_limit") == stream_limit(WORKERS)
        assert len(open_streams) == stream_limit(WORKERS)
        assert REGISTRY.get_sample_value("mahjong_server_streams_open") == streams_before + len(
            open_streams
        )
        levels = stub.ListLevels(pb.ListLevelsRequest(), timeout=5).levels
        assert levels
    finally:
        for stream in open_streams:
            stream.cancel()


def _open_within(stub, request, seconds: float):
    """A stream's handler notices a cancel at its next poll: retry until it has."""
    deadline = time.monotonic() + seconds
    while True:
        stream = stub.WatchTournament(request, timeout=30)
        try:
            next(stream)
            return stream
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_a_closed_stream_frees_its_place(stub):
    token = sign_in(stub, "C")[1]
    tid = stub.CreateTournament(
        pb.CreateTournamentRequest(
            session_token=token, name="T", stake=1, rounds=1, hands_per_round=1
        ),
        timeout=10,
    ).tournament.tournament_id
    request = pb.WatchTournamentRequest(tournament_id=tid, session_token=token)
    for _ in range(3 * WORKERS):  # one at a time, each cancelled: its place comes back
        _open_within(stub, request, 10).cancel()
    # a stream that ends with an error frees its place too
    for _ in range(3 * WORKERS):
        with pytest.raises(grpc.RpcError) as err:
            _open_within(
                stub, pb.WatchTournamentRequest(tournament_id="t-no", session_token=token), 10
            )
        assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_matchmaking_runs_enough_threads_for_many_watchers(monkeypatch):
    monkeypatch.delenv("MAHJONG_MAX_WORKERS", raising=False)
    monkeypatch.delenv("MAHJONG_MATCHMAKING_MAX_WORKERS", raising=False)
    assert parse_config(SPEC, []).max_workers >= 256
    monkeypatch.setenv("MAHJONG_MAX_WORKERS", "32")
    assert parse_config(SPEC, []).max_workers == 32
    assert parse_config(SPEC, ["--max-workers", "8"]).max_workers == 8
