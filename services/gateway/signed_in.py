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
from infra.operator_calls import web_operator_token
from services.gateway.forwarding import error_of
from shared.errors import FailedPrecondition, PermissionDenied

MAX_SESSION_CHARS = 2048


class SessionCheck(Protocol):
    def player_of(self, session_token: str) -> str:
        """The player id of a live session; Unauthenticated for any other token."""

    def operator_of(self, session_token: str) -> str:
        """Who acts (for an audit log) with a live operator's session; Unauthenticated for a
        token that is not a live session, PermissionDenied for a player's."""


class MatchmakingSessions:
    """:class:`SessionCheck` over matchmaking's internal port."""

    def __init__(self, channel: grpc.Channel, *, timeout: float = 2.0, internal_token: str = ""):
        self.stub = matchmaking_pb2_grpc.MatchmakingServiceStub(channel)
        self.timeout = timeout
        self.metadata = internal_metadata(internal_token)

    def _check(self, session_token: str) -> matchmaking_pb2.CheckSessionResponse:
        request = matchmaking_pb2.CheckSessionRequest(session_token=session_token)
        try:
            return self.stub.CheckSession(request, timeout=self.timeout, metadata=self.metadata)
        except grpc.RpcError as exc:
            raise error_of(exc) from exc

    def player_of(self, session_token: str) -> str:
        return self._check(session_token).player_id

    def operator_of(self, session_token: str) -> str:
        got = self._check(session_token)
        if not got.operator:
            raise PermissionDenied(
                "this session is a player's: the operator's console needs a sign-in with the "
                "operator role from the studio's issuer",
                reason="NOT_OPERATOR",
                field="session_token",
            )
        return f"session:{got.player_id}"


def operator_actor(sessions: SessionCheck | None, context, certificate_actor: str) -> str:
    """Who calls an operator RPC of the gateway: on a web port an operator's session (verified
    with matchmaking's CheckSession), else ``certificate_actor`` (the gRPC port's caller
    policy already admitted only the operator's certificate)."""
    token = web_operator_token(context)
    if token is None:
        return certificate_actor
    if sessions is None:
        raise FailedPrecondition(
            "this gateway reports to no matchmaking: it cannot check an operator's session",
            reason="NO_SESSIONS",
            field="authorization",
        )
    return sessions.operator_of(token)


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
