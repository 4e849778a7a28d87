"""The gateway's console RPCs on its web port (:func:`services.gateway.signed_in.operator_actor`):
a gRPC call keeps its certificate's actor; a web call needs a bearer token, and matchmaking's
CheckSession decides — a player's session is PERMISSION_DENIED ``NOT_OPERATOR``, a token it
refuses stays UNAUTHENTICATED, an operator's names its player as the actor."""

from __future__ import annotations

import pytest

from infra.web_calls import WebCallContext
from services.gateway.signed_in import operator_actor
from shared.errors import FailedPrecondition, PermissionDenied, Unauthenticated


class Sessions:
    """matchmaking's CheckSession, as the gateway sees it (a unit test's double)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def player_of(self, token: str) -> str:
        raise AssertionError("not used")

    def operator_of(self, token: str) -> str:
        self.asked.append(token)
        if token == "player-token":
            raise PermissionDenied("a player's", reason="NOT_OPERATOR")
        if token != "operator-token":
            raise Unauthenticated("does not verify", reason="BAD_SIGNATURE")
        return "session:p-op"


def web(headers: dict[str, str]) -> WebCallContext:
    return WebCallContext(headers, "127.0.0.1:1")


def test_a_grpc_call_keeps_its_certificate_and_asks_nothing():
    sessions = Sessions()
    assert operator_actor(sessions, object(), "spiffe://x/operator") == "spiffe://x/operator"
    assert sessions.asked == []


@pytest.mark.parametrize(
    ("headers", "error", "reason"),
    [
        ({}, Unauthenticated, "MISSING_TOKEN"),
        ({"authorization": "Basic b3A6b3A="}, Unauthenticated, "MISSING_TOKEN"),
        ({"authorization": "Bearer "}, Unauthenticated, "MISSING_TOKEN"),
        ({"authorization": "Bearer " + "x" * 5000}, Unauthenticated, "MALFORMED_TOKEN"),
        ({"authorization": "Bearer forged"}, Unauthenticated, "BAD_SIGNATURE"),
        ({"authorization": "Bearer player-token"}, PermissionDenied, "NOT_OPERATOR"),
    ],
)
def test_a_web_call_without_an_operator_session_is_refused(headers, error, reason):
    with pytest.raises(error) as refused:
        operator_actor(Sessions(), web(headers), "unused")
    assert refused.value.reason == reason


def test_an_operator_session_is_the_actor_and_a_lone_gateway_refuses():
    ctx = web({"Authorization": "Bearer operator-token"})
    assert operator_actor(Sessions(), ctx, "unused") == "session:p-op"
    with pytest.raises(FailedPrecondition):
        operator_actor(None, ctx, "unused")
