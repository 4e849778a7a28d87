"""Signing players in, for tests of every part: one test issuer per process, served over HTTP.

``sign_in(target, name)`` signs ``name`` in (the subject is the name unless ``subject`` says
otherwise) and returns ``(player, session_token)``; ``target`` is a
:class:`~services.matchmaking.service.Matchmaking` facade or a ``MatchmakingServiceStub``.
Services built by :func:`tests.unit.matchmaking.mm_fakes.make_service` and
:func:`tests.support.stacks.matchmaking_spec` / :func:`identity_extra` trust this issuer;
child-process servers get :func:`issuer_flags`.
"""

from __future__ import annotations

import itertools
import threading
import uuid

from devkit.dev_issuer import DevIssuer, DevIssuerServer
from services.matchmaking.domain.players.issuers import Issuer, format_issuer

TEST_ISSUER = "https://issuer.test"
TEST_AUDIENCE = "mahjong-test"
TIMEOUT = 10.0

_lock = threading.Lock()
_server: DevIssuerServer | None = None
_subjects = itertools.count(1)


def test_issuer() -> DevIssuerServer:
    """The process's test issuer (ES256, started on first use, on a free loopback port)."""
    global _server
    with _lock:
        if _server is None:
            issuer = DevIssuer.ephemeral(
                "ES256", "test-k1", issuer=TEST_ISSUER, audience=TEST_AUDIENCE
            )
            _server = DevIssuerServer(issuer).start()
        return _server


def issuer_config() -> Issuer:
    return test_issuer().config()


def issuer_flags() -> list[str]:
    """Flags making a matchmaking process trust the test issuer."""
    return ["--issuers", format_issuer(issuer_config())]


def identity_extra() -> dict:
    """The ``Config.extra`` entries of an in-process server trusting the test issuer."""
    return {"issuers": format_issuer(issuer_config())}


def id_token(name: str, subject: str | None = None, **claims) -> str:
    """A genuine ID token of the test issuer (claims overridable)."""
    return test_issuer().issuer.id_token(subject or name, name, **claims)


def unique_subject(name: str) -> str:
    return f"{name}#{next(_subjects)}"


def sign_in(target, name: str, subject: str | None = None):
    """Sign a new identity (``subject``, default a fresh one per call) in as ``name``:
    ``(player, session_token)`` — a domain Player for a facade, a pb.Player for a stub."""
    token = id_token(name, subject or unique_subject(name))
    if hasattr(target, "SignIn"):
        from mahjong.matchmaking.v1 import matchmaking_pb2 as pb

        request = pb.SignInRequest(id_token=token, display_name=name, request_id=uuid.uuid4().hex)
        resp = target.SignIn(request, timeout=TIMEOUT)
        return resp.player, resp.session.session_token
    got = target.sign_in(token, name)
    return got.player, got.session.session_token


def sign_in_token(target, name: str, subject: str | None = None) -> str:
    """Just the session token of :func:`sign_in`."""
    return sign_in(target, name, subject)[1]
