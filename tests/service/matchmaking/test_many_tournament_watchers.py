"""Matchmaking on the asyncio server model (its default) over a real loopback server with TLS:
300 players watch one tournament at once — more streams than the threaded model could hold with
its default 256 threads, held here by 16 worker threads — every stream gets the tournament, then
each watcher its own seat once the round is seated; meanwhile unary calls answer promptly, the
server's stream gauge counts them, and its stream limit (``--max-streams``) refuses the one past
it."""

from __future__ import annotations

import statistics
import threading
import time

import grpc
import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc
from prometheus_client import REGISTRY

from infra.interceptor import stream_limit
from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.stacks import matchmaking_spec
from tests.unit.matchmaking.mm_fakes import FakeAllocator

SERVER_MODELS = ("asyncio",)  # tests/support/server_models.py: this file is the asyncio model's
WATCHERS = 300
WORKERS = 16
T = 30
# One address opens every stream and makes every call here: no per-address flood control.
OPEN = {"flood_address_rate": 0, "streams_per_address": 0}


def _serving(alloc, **config):
    return serving(
        matchmaking_spec(alloc),
        server_model="asyncio",
        max_workers=WORKERS,
        max_streams=WATCHERS + 1,  # the creator's stream too; the next one is refused
        extra=OPEN,
        **config,
    )


def _next_with(stream, want, seconds: float):
    """The stream's first message for which ``want`` holds, within ``seconds``."""
    deadline = time.monotonic() + seconds
    for message in stream:
        if want(message):
            return message
        assert time.monotonic() < deadline, "no such message in time"
    raise AssertionError("the stream ended first")


def test_300_watchers_get_the_tournament_then_each_their_own_seat():
    assert stream_limit(256) < WATCHERS  # what the threaded model holds with its 256 threads
    alloc = FakeAllocator()
    with _serving(alloc) as (server, channel):
        stub = pb_grpc.MatchmakingServiceStub(channel)
        mm = server.resource.matchmaking
        _, creator = sign_in(stub, "Creator")
        tid = stub.CreateTournament(
            pb.CreateTournamentRequest(
                session_token=creator, name="Big", stake=1, rounds=1, hands_per_round=1
            ),
            timeout=T,
        ).tournament.tournament_id
        players = [sign_in(stub, f"W{i}") for i in range(WATCHERS)]
        for _, token in players:
            stub.JoinTournament(
                pb.JoinTournamentRequest(session_token=token, tournament_id=tid), timeout=T
            )
        before = REGISTRY.get_sample_value("mahjong_server_streams_open") or 0
        streams = [
            stub.WatchTournament(
                pb.WatchTournamentRequest(tournament_id=tid, session_token=token), timeout=120
            )
            for _, token in players
        ]
        try:
            firsts = [next(s) for s in streams]
            assert {f.tournament.entrant_count for f in firsts} == {WATCHERS}
            assert {f.tournament.state for f in firsts} == {pb.TOURNAMENT_STATE_REGISTERING}
            assert not any(f.HasField("assignment") for f in firsts)
            assert REGISTRY.get_sample_value("mahjong_server_streams_open") == before + WATCHERS
            assert len(threading.enumerate()) < WATCHERS  # streams hold no threads

            # The stream limit holds: one more (the creator's) fits, the next is refused.
            extra = stub.WatchTournament(
                pb.WatchTournamentRequest(tournament_id=tid, session_token=creator), timeout=T
            )
            next(extra)
            refused = stub.WatchTournament(
                pb.WatchTournamentRequest(tournament_id=tid, session_token=creator), timeout=T
            )
            with pytest.raises(grpc.RpcError) as err:
                next(refused)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "streams are open on this server" in err.value.details()
            extra.cancel()

            # Unary calls answer promptly while every stream is open, and while the round is
            # seated and all of them wake up.
            latencies: list[float] = []
            stop = threading.Event()

            def caller() -> None:
                request = pb.GetPlayerRequest(session_token=creator)
                while not stop.is_set():
                    t0 = time.perf_counter()
                    stub.GetPlayer(request, timeout=T)
                    latencies.append(time.perf_counter() - t0)
                    time.sleep(0.02)

            calls = threading.Thread(target=caller)
            calls.start()
            try:
                started = stub.StartTournament(
                    pb.StartTournamentRequest(session_token=creator, tournament_id=tid),
                    timeout=T,
                ).tournament
                assert started.current_round == 1
                mm.tick()  # the round's tables (the fake gateway's)
                assert len(alloc.tables) == WATCHERS // 4
                seats = {
                    s.player_id: (a, i)
                    for r, a in alloc.tables.values()
                    for i, s in enumerate(r.seats)
                }
                for (player, _), stream in zip(players, streams, strict=True):
                    got = _next_with(stream, lambda m: m.HasField("assignment"), T)
                    table, seat = seats[player.player_id]
                    a = got.assignment
                    assert (a.table_id, a.seat - 1) == (table.table_id, seat)
                    assert a.seat_token == table.seat_tokens[seat]
                    assert got.tournament.state == pb.TOURNAMENT_STATE_RUNNING
            finally:
                stop.set()
                calls.join()
            assert latencies and max(latencies) < 2.0, sorted(latencies)[-5:]
            assert statistics.median(latencies) < 0.5
        finally:
            for s in streams:
                s.cancel()
