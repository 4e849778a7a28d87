"""Seats bound to signed-in players: ``JoinSeat`` with a ``session_token``.

Matchmaking reserves a seat for a player id when it creates a table; a player holding that id's
live session (matchmaking's sign-in) may take the seat without its seat token — from a new
device, say. The gateway asks matchmaking whether the session is live now (CheckSession, the
gateway's certificate on matchmaking's internal port), so a signed-out or revoked session is
refused here at once too. The session's player is the only one it joins as: a request naming
another player id is PERMISSION_DENIED.
"""

from __future__ import annotations

from typing import Protocol

import grpc
from mahjong.matchmaking.v1 import matchmaking_pb2, matchmaking_pb2_grpc

from infra.interceptor import internal_metadata
from services.gateway.forwarding import error_of
from shared.errors import FailedPrecondition, PermissionDenied

MAX_SESSION_CHARS = 2048


class SessionCheck(Protocol):
    def player_of(self, session_token: str) -> str:
        """The player id of a live session; Unauthenticated for any other token."""


class MatchmakingSessions:
    """:class:`SessionCheck` over matchmaking's internal port."""

    def __init__(self, channel: grpc.Channel, *, timeout: float = 2.0, internal_token: str = ""):
        self.stub = matchmaking_pb2_grpc.MatchmakingServiceStub(channel)
        self.timeout = timeout
        self.metadata = internal_metadata(internal_token)

    def player_of(self, session_token: str) -> str:
        request = matchmaking_pb2.CheckSessionRequest(session_token=session_token)
        try:
            got = self.stub.CheckSession(request, timeout=self.timeout, metadata=self.metadata)
        except grpc.RpcError as exc:
            raise error_of(exc) from exc
        return got.player_id


def joining_player(sessions: SessionCheck | None, session_token: str, player_id: str) -> str:
    """The player a session-bound JoinSeat joins as (see the module docstring)."""
    if sessions is None:
        raise FailedPrecondition(
            "this gateway reports to no matchmaking: join with a seat token",
            reason="NO_SESSIONS",
            field="session_token",
        )
    if len(session_token) > MAX_SESSION_CHARS:
        raise PermissionDenied("session_token is too long", field="session_token")
    signed_in = sessions.player_of(session_token)
    if player_id and player_id != signed_in:
        raise PermissionDenied(
            f"the session is {signed_in}'s; it joins no seat of {player_id}",
            reason="NOT_YOUR_SEAT",
            field="player_id",
        )
    return signed_in
