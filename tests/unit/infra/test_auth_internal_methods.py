"""infra.server: internal methods (ServiceSpec.internal_methods) answer only callers that send
the configured internal token; without a token configured they stay open and the server warns
at start-up (development mode)."""

from __future__ import annotations

import io
import json

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from infra.config import Config, ServiceSpec, parse_config
from infra.interceptor import internal_metadata
from infra.logs import configure_logging
from infra.server import start

SERVICE = "test.v1.InternalProbeService"


def _spec() -> ServiceSpec:
    def add(server, config):
        methods = {
            "Public": grpc.unary_unary_rpc_method_handler(lambda req, ctx: b"public"),
            "Report": grpc.unary_unary_rpc_method_handler(lambda req, ctx: b"reported"),
            "Watch": grpc.unary_stream_rpc_method_handler(lambda req, ctx: iter([b"w"])),
        }
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, methods),))

    return ServiceSpec(
        "probe", 0, 0, add, [SERVICE], internal_methods=frozenset({"Report", "Watch"})
    )


def _running(token: str):
    return start(_spec(), Config(port=0, internal_token=token, insecure=True))


def _call(channel, method: str, metadata=None) -> bytes:
    return channel.unary_unary(f"/{SERVICE}/{method}")(b"", timeout=5, metadata=metadata)


def _reason(err: grpc.RpcError) -> str:
    info = error_details_pb2.ErrorInfo()
    rpc_status.from_call(err).details[0].Unpack(info)
    return info.reason


@pytest.fixture(scope="module")
def secured():
    running = _running("s3cret-token")
    channel = grpc.insecure_channel(running.address)
    yield channel
    channel.close()
    running.stop(grace=0)


def test_public_methods_need_no_token(secured):
    assert _call(secured, "Public") == b"public"


def test_internal_method_with_the_token_is_served(secured):
    assert _call(secured, "Report", internal_metadata("s3cret-token")) == b"reported"


@pytest.mark.parametrize(
    ("metadata", "reason", "words"),
    [
        (None, "INTERNAL_TOKEN_MISSING", "no x-mahjong-internal-token"),
        ((("x-mahjong-internal-token", "wrong"),), "INTERNAL_TOKEN_INVALID", "does not match"),
        ((("x-mahjong-internal-token", ""),), "INTERNAL_TOKEN_MISSING", "internal"),
        ((("x-mahjong-internal-token", "s3cret-token-and-more"),), "INTERNAL_TOKEN_INVALID", ""),
    ],
)
def test_internal_method_refuses_missing_or_wrong_token(secured, metadata, reason, words):
    with pytest.raises(grpc.RpcError) as err:
        _call(secured, "Report", metadata)
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert _reason(err.value) == reason
    assert "Report" in err.value.details() and words in err.value.details()


def test_internal_server_stream_is_guarded_too(secured):
    stream = secured.unary_stream(f"/{SERVICE}/Watch")
    with pytest.raises(grpc.RpcError) as err:
        list(stream(b"", timeout=5))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert list(stream(b"", timeout=5, metadata=internal_metadata("s3cret-token"))) == [b"w"]


def test_non_ascii_token_is_refused_not_crashed(secured):
    bad = (("x-mahjong-internal-token-bin", "ü".encode()),)
    with pytest.raises(grpc.RpcError) as err:
        _call(secured, "Report", bad)
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_plaintext_without_a_token_leaves_internal_methods_open_and_start_up_warns():
    out = io.StringIO()
    configure_logging("info", stream=out)
    try:
        running = _running("")
        try:
            with grpc.insecure_channel(running.address) as channel:
                assert _call(channel, "Report") == b"reported"
        finally:
            running.stop(grace=0)
    finally:
        configure_logging("info")
    lines = [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]
    warnings = [r for r in lines if r["event"] == "plaintext"]
    assert warnings and warnings[0]["level"] == "warning"
    assert "--insecure" in warnings[0]["hint"]


def test_no_warning_when_a_token_is_configured():
    out = io.StringIO()
    configure_logging("info", stream=out)
    try:
        _running("tok").stop(grace=0)
    finally:
        configure_logging("info")
    assert "internal_methods_unauthenticated" not in out.getvalue()


def test_token_is_read_from_flag_then_environment(monkeypatch):
    spec = _spec()
    monkeypatch.delenv("MAHJONG_INTERNAL_TOKEN", raising=False)
    monkeypatch.delenv("MAHJONG_PROBE_INTERNAL_TOKEN", raising=False)
    assert parse_config(spec, []).internal_token == ""
    monkeypatch.setenv("MAHJONG_INTERNAL_TOKEN", "from-env")
    assert parse_config(spec, []).internal_token == "from-env"
    monkeypatch.setenv("MAHJONG_PROBE_INTERNAL_TOKEN", "service-env")
    assert parse_config(spec, []).internal_token == "service-env"
    assert parse_config(spec, ["--internal-token", "flag"]).internal_token == "flag"


def test_internal_metadata_is_empty_without_a_token():
    assert internal_metadata("") == ()
    assert internal_metadata("t") == (("x-mahjong-internal-token", "t"),)
