"""A watch stream's session, on both server models (tests/support/server_models.py): signing
out ends the player's open WatchTournament ``UNAUTHENTICATED`` (the threaded model checks the
session at every wake-up, the asyncio one looks the open streams' sessions up every few seconds,
shortened here); the other watchers of the tournament go on. And its WatchAssignments (both
models look the session up again at every wake-up)."""

from __future__ import annotations

import grpc
import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from services.matchmaking.adapters import aio_servicer
from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.stacks import matchmaking_spec

T = 30


def test_a_watcher_signed_out_is_ended_unauthenticated(monkeypatch):
    monkeypatch.setattr(aio_servicer, "SESSION_CHECK_S", 0.2)
    with serving(matchmaking_spec()) as (_server, channel):
        stub = pb_grpc.MatchmakingServiceStub(channel)
        _, token = sign_in(stub, "Leaving")
        _, other = sign_in(stub, "Staying")
        tid = stub.CreateTournament(
            pb.CreateTournamentRequest(
                session_token=token, name="T", stake=1, rounds=1, hands_per_round=1
            ),
            timeout=T,
        ).tournament.tournament_id
        leaving, staying = (
            stub.WatchTournament(
                pb.WatchTournamentRequest(tournament_id=tid, session_token=tok), timeout=T
            )
            for tok in (token, other)
        )
        next(leaving), next(staying)
        stub.SignOut(pb.SignOutRequest(session_token=token), timeout=T)
        with pytest.raises(grpc.RpcError) as err:
            next(leaving)
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # the other watcher of the tournament goes on: it sees the next change
        stub.JoinTournament(
            pb.JoinTournamentRequest(session_token=other, tournament_id=tid), timeout=T
        )
        assert next(staying).tournament.entrant_count == 1
        staying.cancel()


def test_a_ticket_watcher_signed_out_is_ended_unauthenticated():
    with serving(matchmaking_spec()) as (_server, channel):
        stub = pb_grpc.MatchmakingServiceStub(channel)
        _, token = sign_in(stub, "Queued")
        ticket = stub.JoinQueue(pb.JoinQueueRequest(session_token=token), timeout=T).ticket
        watch = stub.WatchAssignments(
            pb.WatchAssignmentsRequest(session_token=token, ticket_id=ticket.ticket_id), timeout=T
        )
        assert next(watch).ticket.state == pb.TICKET_STATE_WAITING
        stub.SignOut(pb.SignOutRequest(session_token=token), timeout=T)
        with pytest.raises(grpc.RpcError) as err:
            next(watch)
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
