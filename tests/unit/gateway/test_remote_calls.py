"""The gateway's outgoing calls (services.gateway.adapters.remote.call) against a real gRPC
server whose answers are scripted: what is retried, and what reaches the engine as transient."""

from __future__ import annotations

from concurrent import futures

import grpc
import pytest

from services.gateway.adapters.remote import call
from services.gateway.domain.ports import is_transient
from shared.errors import Unavailable

METHOD = "/test.Scripted/Call"


@pytest.fixture
def scripted():
    """A server answering METHOD with the next code of ``codes`` (OK once they run out)."""
    codes: list[grpc.StatusCode] = []
    calls: list[bytes] = []

    def handle(request: bytes, context) -> bytes:
        calls.append(request)
        if codes:
            context.abort(codes.pop(0), "scripted")
        return b"ok:" + request

    handler = grpc.method_handlers_generic_handler(
        "test.Scripted", {"Call": grpc.unary_unary_rpc_method_handler(handle)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield channel.unary_unary(METHOD), codes, calls
    finally:
        channel.close()
        server.stop(0)


@pytest.mark.parametrize(
    "code",
    [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED],
)
def test_a_call_cut_short_is_made_again(scripted, code):
    """CANCELLED too: a wall or rules server stopping (SIGTERM) cancels the calls it still runs.
    Before, that halted the table whose draw was in flight."""
    fn, codes, calls = scripted
    codes.extend([code, code])
    assert call(fn, b"draw-7", timeout=5) == b"ok:draw-7"
    assert calls == [b"draw-7"] * 3  # the same request each time


def test_a_call_cut_short_every_time_reaches_the_engine_as_transient(scripted):
    fn, codes, _ = scripted
    codes.extend([grpc.StatusCode.CANCELLED] * 3)
    with pytest.raises(Unavailable) as err:
        call(fn, b"draw-7", timeout=5)
    assert is_transient(err.value)  # the engine retries the step later; the table plays on
    assert err.value.details["grpc_code"] == "CANCELLED"


def test_a_refusal_is_not_retried(scripted):
    fn, codes, calls = scripted
    codes.append(grpc.StatusCode.INVALID_ARGUMENT)
    with pytest.raises(grpc.RpcError) as err:
        call(fn, b"bad", timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert calls == [b"bad"]
