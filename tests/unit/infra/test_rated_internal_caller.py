"""infra.interceptor.from_internal_caller: a method open to everyone can still tell a call from a
service of the deployment (it sent the configured internal token) from any other caller; with no
token configured (development mode) every caller counts as internal."""

from __future__ import annotations

import contextlib

import grpc
import pytest

from infra.config import Config, ServiceSpec
from infra.interceptor import from_internal_caller, internal_metadata
from infra.server import start

SERVICE = "test.v1.CallerProbeService"


def _answer(ctx) -> bytes:
    return b"internal" if from_internal_caller(ctx, frozenset({"gateway"})) else b"outside"


def _spec() -> ServiceSpec:
    def add(server, config):
        methods = {
            "Who": grpc.unary_unary_rpc_method_handler(lambda req, ctx: _answer(ctx)),
            "WhoStream": grpc.unary_stream_rpc_method_handler(
                lambda req, ctx: iter([_answer(ctx)])
            ),
        }
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, methods),))

    return ServiceSpec("probe", 0, 0, add, [SERVICE])


@contextlib.contextmanager
def _channel(token: str):
    running = start(_spec(), Config(port=0, internal_token=token, insecure=True))
    channel = grpc.insecure_channel(running.address)
    try:
        yield channel
    finally:
        channel.close()
        running.stop(grace=0)


def _who(channel, metadata=None, method: str = "Who") -> bytes:
    if method == "Who":
        return channel.unary_unary(f"/{SERVICE}/Who")(b"", timeout=5, metadata=metadata)
    (answer,) = channel.unary_stream(f"/{SERVICE}/WhoStream")(b"", timeout=5, metadata=metadata)
    return answer


@pytest.mark.parametrize("method", ["Who", "WhoStream"])
def test_only_the_configured_token_makes_a_caller_internal(method):
    with _channel("s3cret-token") as ch:
        assert _who(ch, internal_metadata("s3cret-token"), method) == b"internal"
        assert _who(ch, None, method) == b"outside"
        assert _who(ch, (("x-mahjong-internal-token", "wrong"),), method) == b"outside"
        assert _who(ch, (("x-mahjong-internal-token", "s3cret-token-more"),), method) == b"outside"


def test_without_a_token_configured_every_caller_is_internal():
    with _channel("") as ch:
        assert _who(ch) == b"internal"
        assert _who(ch, (("x-mahjong-internal-token", "anything"),)) == b"internal"


def test_the_answer_belongs_to_the_server_serving_the_call():
    """Two servers in one process, one with a token and one without: each call is judged by its
    own server's configuration, never by what another call set."""
    with _channel("s3cret-token") as secured, _channel("") as open_:
        for _ in range(3):
            assert _who(open_) == b"internal"
            assert _who(secured) == b"outside"
