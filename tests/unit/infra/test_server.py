"""infra.server: the bootstrap every service runs on — health, reflection, metrics, error
mapping, configuration, graceful stop — exercised on a real loopback server with a probe
service made of generic (bytes in, bytes out) handlers."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2
from grpc_status import rpc_status

from infra.binding import keepalive_options
from infra.config import Config, ServiceSpec, parse_config
from infra.logs import configure_logging
from infra.ports import AUTO_PORT
from infra.server import start
from infra.settings import setting
from infra.status import ERROR_DOMAIN
from infra.store import Conflict, StoreUnavailable
from shared.errors import FailedPrecondition, InvalidArgument, NotFound
from tests.support.probes import fetch_metrics, health_status, list_services, metric_value

SERVICE = "test.v1.ProbeService"


def _handlers(target: dict):
    def ok(request, context):
        return b"ok:" + request

    def domain(request, context):
        raise InvalidArgument("seat 5 out of range 0-3", field="seat")

    def precondition(request, context):
        raise FailedPrecondition("the wall is exhausted", reason="WALL_EXHAUSTED", remaining=0)

    def crash(request, context):
        raise KeyError("bug")

    def downstream(request, context):
        # Calls this same server's NotFound method, as a service calls another.
        with grpc.insecure_channel(target["address"]) as ch:
            return ch.unary_unary(f"/{SERVICE}/Missing")(b"", timeout=5)

    def missing(request, context):
        raise NotFound("no hand 'x'", hand_id="x")

    def store_down(request, context):
        raise StoreUnavailable("lost the connection to the store postgresql://u:***@db/mj")

    def store_bug(request, context):
        raise Conflict("ns/k is at version 3, not 2")  # a service should have handled it

    def stream(request, context):
        yield b"1"
        yield b"2"
        raise FailedPrecondition("stream over")

    unary = {
        "Ok": ok,
        "Domain": domain,
        "Precondition": precondition,
        "Crash": crash,
        "Downstream": downstream,
        "Missing": missing,
        "StoreDown": store_down,
        "StoreBug": store_bug,
    }
    methods = {n: grpc.unary_unary_rpc_method_handler(f) for n, f in unary.items()}
    methods["Stream"] = grpc.unary_stream_rpc_method_handler(stream)
    return grpc.method_handlers_generic_handler(SERVICE, methods)


def _spec(target: dict) -> ServiceSpec:
    def add(server, config):
        server.add_generic_rpc_handlers((_handlers(target),))

    return ServiceSpec("probe", 0, 0, add, [SERVICE])


@pytest.fixture(scope="module")
def probe():
    target: dict = {}
    running = start(
        _spec(target), Config(port=0, metrics_port=AUTO_PORT, insecure=True, reflection=True)
    )
    target["address"] = running.address
    channel = grpc.insecure_channel(running.address)
    yield running, channel
    channel.close()
    running.stop(grace=0)


def _call(channel, method, payload=b"x"):
    return channel.unary_unary(f"/{SERVICE}/{method}")(payload, timeout=5)


def test_health_serving_for_server_and_service(probe):
    _, channel = probe
    assert health_status(channel) == "SERVING"
    assert health_status(channel, SERVICE) == "SERVING"


def test_reflection_lists_the_services(probe):
    _, channel = probe
    names = list_services(channel)
    assert SERVICE in names
    assert "grpc.health.v1.Health" in names
    assert "grpc.reflection.v1alpha.ServerReflection" in names


def test_ok_call(probe):
    _, channel = probe
    assert _call(channel, "Ok", b"hi") == b"ok:hi"


@pytest.mark.parametrize(
    ("method", "code", "reason", "metadata"),
    [
        ("Domain", grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT", {"field": "seat"}),
        ("Precondition", grpc.StatusCode.FAILED_PRECONDITION, "WALL_EXHAUSTED", {"remaining": "0"}),
        ("Missing", grpc.StatusCode.NOT_FOUND, "NOT_FOUND", {"hand_id": "x"}),
        ("StoreDown", grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", {}),
    ],
)
def test_domain_errors_become_status_codes_with_error_info(probe, method, code, reason, metadata):
    _, channel = probe
    with pytest.raises(grpc.RpcError) as err:
        _call(channel, method)
    assert err.value.code() is code
    status = rpc_status.from_call(err.value)
    assert status is not None and status.message == err.value.details()
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.reason == reason
    assert info.domain == ERROR_DOMAIN
    assert dict(info.metadata) == metadata


@pytest.mark.parametrize("method", ["Crash", "StoreBug"])
def test_unexpected_exception_is_internal_and_the_server_keeps_serving(probe, method):
    _, channel = probe
    with pytest.raises(grpc.RpcError) as err:
        _call(channel, method)
    assert err.value.code() is grpc.StatusCode.INTERNAL
    assert "bug" not in err.value.details() and "version" not in err.value.details()
    assert f"{SERVICE}/{method}" in err.value.details()
    assert _call(channel, "Ok", b"again") == b"ok:again"


def test_a_failed_downstream_call_passes_its_status_on(probe):
    _, channel = probe
    with pytest.raises(grpc.RpcError) as err:
        _call(channel, "Downstream")
    assert err.value.code() is grpc.StatusCode.NOT_FOUND
    assert err.value.details() == "downstream: no hand 'x'"


def test_streams_are_intercepted_too(probe):
    _, channel = probe
    call = channel.unary_stream(f"/{SERVICE}/Stream")(b"", timeout=5)
    got = []
    with pytest.raises(grpc.RpcError) as err:
        for item in call:
            got.append(item)
    assert got == [b"1", b"2"]
    assert err.value.code() is grpc.StatusCode.FAILED_PRECONDITION


def test_metrics_count_calls_by_status_code(probe):
    running, channel = probe
    labels = {"grpc_service": SERVICE}
    before = fetch_metrics(running.metrics_port)
    for _ in range(3):
        _call(channel, "Ok")
    for _ in range(2):
        with pytest.raises(grpc.RpcError):
            _call(channel, "Domain")
    after = fetch_metrics(running.metrics_port)

    def delta(name, **more):
        return metric_value(after, name, **labels, **more) - metric_value(
            before, name, **labels, **more
        )

    assert delta("grpc_server_handled_total", grpc_method="Ok", grpc_code="OK") == 3
    assert (
        delta("grpc_server_handled_total", grpc_method="Domain", grpc_code="INVALID_ARGUMENT") == 2
    )
    assert delta("grpc_server_handling_seconds_count", grpc_method="Ok") == 3


def test_graceful_stop_reports_not_serving_while_draining():
    target: dict = {}
    running = start(_spec(target), Config(port=0, insecure=True))
    target["address"] = running.address
    channel = grpc.insecure_channel(running.address)
    try:
        assert health_status(channel) == "SERVING"
        stopper = threading.Thread(target=running.stop, kwargs={"grace": 0, "drain": 1.0})
        stopper.start()
        deadline = time.monotonic() + 5
        status = "SERVING"
        while status == "SERVING" and time.monotonic() < deadline:
            status = health_status(channel)
        assert status == "NOT_SERVING"
        stopper.join()
        # after stop the health servicer stays NOT_SERVING and the port is closed
        direct = running.health.Check(health_pb2.HealthCheckRequest(service=SERVICE), None)
        assert direct.status == health_pb2.HealthCheckResponse.NOT_SERVING
        with pytest.raises(grpc.RpcError) as err:
            _call(channel, "Ok")
        assert err.value.code() is grpc.StatusCode.UNAVAILABLE
        running.stop()  # a second stop is harmless
    finally:
        channel.close()


# --- configuration ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ProbeSettings:
    fixed: bool = setting(False, "--fixed", "a switch")
    depth: int = setting(3, "--depth", "a number")


def _flagged_spec():
    return ServiceSpec("probe", 50999, 9999, lambda s, c: None, [SERVICE], (ProbeSettings,))


def test_config_defaults(monkeypatch):
    for var in ("MAHJONG_PORT", "MAHJONG_PROBE_PORT", "MAHJONG_PROBE_FIXED", "MAHJONG_STORE_URL"):
        monkeypatch.delenv(var, raising=False)
    cfg = parse_config(_flagged_spec(), [])
    assert (cfg.port, cfg.metrics_port) == (50999, 9999)
    assert cfg.store_url == "sqlite:///.data/probe.db"
    assert cfg.extra == {"fixed": False, "depth": 3}


def test_config_env_then_flags(monkeypatch):
    monkeypatch.setenv("MAHJONG_PORT", "1111")  # generic
    monkeypatch.setenv("MAHJONG_PROBE_PORT", "2222")  # service-specific wins
    monkeypatch.setenv("MAHJONG_STORE_URL", "memory://")
    monkeypatch.setenv("MAHJONG_PROBE_DEPTH", "7")
    monkeypatch.setenv("MAHJONG_PROBE_FIXED", "true")
    cfg = parse_config(_flagged_spec(), [])
    assert cfg.port == 2222 and cfg.store_url == "memory://"
    assert cfg.extra == {"fixed": True, "depth": 7}
    cfg = parse_config(_flagged_spec(), ["--port", "3333", "--depth", "9"])
    assert cfg.port == 3333 and cfg.extra["depth"] == 9


def test_store_pool_size_flag_and_env(monkeypatch):
    monkeypatch.delenv("MAHJONG_STORE_POOL_SIZE", raising=False)
    assert parse_config(_flagged_spec(), []).store_pool_size == 8
    monkeypatch.setenv("MAHJONG_STORE_POOL_SIZE", "4")
    assert parse_config(_flagged_spec(), []).store_pool_size == 4
    assert parse_config(_flagged_spec(), ["--store-pool-size", "20"]).store_pool_size == 20


@pytest.mark.parametrize("value", ["0", "false", "off", "no"])
def test_boolean_flags_from_env_can_be_false(monkeypatch, value):
    monkeypatch.setenv("MAHJONG_PROBE_FIXED", value)
    assert parse_config(_flagged_spec(), []).extra["fixed"] is False


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("MAHJONG_PROBE_PORT", "abc"),
        ("MAHJONG_PROBE_FIXED", "perhaps"),
        ("MAHJONG_PROBE_DEPTH", "x"),
    ],
)
def test_bad_env_values_are_named_errors(monkeypatch, capsys, var, value):
    monkeypatch.setenv(var, value)
    with pytest.raises(SystemExit):
        parse_config(_flagged_spec(), [])
    assert repr(value) in capsys.readouterr().err


def test_structlog_json_lines_carry_the_rpc_context(probe):
    import io
    import json

    _, channel = probe
    buf = io.StringIO()
    configure_logging("info", stream=buf)
    try:
        with pytest.raises(grpc.RpcError):
            _call(channel, "Domain")
    finally:
        configure_logging("info")
    lines = [json.loads(line) for line in buf.getvalue().splitlines()]
    rejected = [line for line in lines if line["event"] == "rpc_rejected"]
    assert rejected and rejected[0]["rpc"] == "Domain"
    assert rejected[0]["code"] == "INVALID_ARGUMENT"
    assert rejected[0]["level"] == "info" and "timestamp" in rejected[0]


@pytest.mark.parametrize(("accepted_ping_ms", "sent_away"), [(500, False), (60_000, True)])
def test_a_client_pinging_as_often_as_the_server_accepts_keeps_its_connection(
    accepted_ping_ms, sent_away
):
    """A client pings every second on a connection that carries no data (an open stream with
    nothing to send): a server accepting a ping every half second keeps the connection; one
    accepting a ping a minute sends it away (GOAWAY "too_many_pings" on the third early ping),
    which ends the stream. (grpc ignores an option it does not know, silently: under a wrong
    name the server would keep its default, five minutes, and send every such client away.)"""
    from concurrent import futures

    from grpc_health.v1 import health, health_pb2_grpc

    server = grpc.server(
        futures.ThreadPoolExecutor(4),
        options=keepalive_options(Config(), accepted_ping_ms=accepted_ping_ms),
    )
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    pinging = [
        ("grpc.keepalive_time_ms", 1_000),
        ("grpc.keepalive_timeout_ms", 1_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
    ]
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=pinging)
    try:
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
        next(watch)  # SERVING; nothing more is sent on the stream
        ended = threading.Event()
        watch.add_callback(ended.set)
        # The 4th ping, about 4 s in, is the third early one.
        assert ended.wait(6.0) == sent_away
        if sent_away:
            assert watch.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        channel.close()
        server.stop(0)
