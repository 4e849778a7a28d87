"""infra/web.py on a real HTTP port with stand-in servicers (a plain one, as a threaded server
has, and one of coroutines, as grpc.aio's): each call runs the servicer's own method with the
headers as metadata and the serving internal token bound; a domain error, a crash and a full
house of streams answer as the gRPC interceptor would; a client that leaves ends its stream on
the server at once, and no stream is ended for its age; static files never leave their folder;
CORS only for the listed origins."""

from __future__ import annotations

import asyncio
import http.client
import socket
import ssl
import threading
import time
from pathlib import Path

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.rpc import error_details_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from devkit.dev_ca import issue
from infra import web as web_module
from infra.binding import BindError
from infra.interceptor import INTERNAL_TOKEN_HEADER, Serving, from_internal_caller
from infra.tls import TLSFiles
from infra.web import WebServer
from infra.web_calls import ServiceBinding, WebCallContext
from shared.errors import PermissionDenied
from tests.support.web import WebGateway

DESCRIPTOR = pb.DESCRIPTOR.services_by_name["GatewayService"]


class StandIn:
    """Answers GetTableState with what the call saw; Subscribe streams until told to stop;
    JoinSeat refuses; Leave crashes."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, bool]] = []
        self.release = threading.Event()
        self.contexts: list = []

    def GetTableState(self, request, context):
        meta = dict(context.invocation_metadata())
        self.seen.append(
            (
                meta.get("x-test", ""),
                from_internal_caller(context, frozenset({"matchmaking"}), strict=True),
            )
        )
        return pb.GetTableStateResponse(table=pb.TableView(table_id=request.table_id))

    def JoinSeat(self, request, context):
        raise PermissionDenied("seat 2 is not yours", reason="NOT_YOURS", seat=2)

    def Leave(self, request, context):
        raise ZeroDivisionError("a bug")

    def Subscribe(self, request, context):
        self.contexts.append(context)
        n = 0
        while context.is_active() and not self.release.is_set():
            n += 1
            yield pb.SubscribeResponse(event=pb.Event(sequence=n))
            time.sleep(0.05)

    def __getattr__(self, name):  # the other methods: never called here
        return lambda request, context: None


class AsyncStandIn(StandIn):
    """The same answers from coroutines (grpc.aio's kind of servicer), on the server's loop:
    Subscribe writes with ``context.write`` as the gateway's does."""

    async def GetTableState(self, request, context):
        return StandIn.GetTableState(self, request, context)

    async def JoinSeat(self, request, context):
        return StandIn.JoinSeat(self, request, context)

    async def Leave(self, request, context):
        raise ZeroDivisionError("a bug")

    async def Subscribe(self, request, context):
        self.contexts.append(context)
        n = 0
        while not self.release.is_set():
            n += 1
            await context.write(pb.SubscribeResponse(event=pb.Event(sequence=n)))
            await asyncio.sleep(0.05)


class AsyncGeneratorStandIn(AsyncStandIn):
    async def Subscribe(self, request, context):
        self.contexts.append(context)
        n = 0
        while not self.release.is_set():
            n += 1
            yield pb.SubscribeResponse(event=pb.Event(sequence=n))
            await asyncio.sleep(0.05)


KINDS = {"plain": StandIn, "coroutines": AsyncStandIn, "async-generator": AsyncGeneratorStandIn}


@pytest.fixture(params=list(KINDS))
def served(request):
    def start(**binding_args):
        servicer = KINDS[request.param]()
        binding = ServiceBinding(
            servicer, DESCRIPTOR, serving=Serving("secret", insecure=True), **binding_args
        )
        server = WebServer(binding, origins=["http://allowed.test"]).start()
        started.append((server, servicer))
        return server, servicer

    started: list = []
    yield start
    for server, servicer in started:
        servicer.release.set()
        server.close()


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
def test_a_call_runs_the_servicer_with_headers_as_metadata(served, protocol):
    server, servicer = served()
    gw = WebGateway(server.url, protocol)
    r = gw.GetTableState(pb.GetTableStateRequest(table_id="t_1"), {"x-test": "yes"})
    assert r.table.table_id == "t_1"
    gw.GetTableState(pb.GetTableStateRequest(table_id="t_1"), {INTERNAL_TOKEN_HEADER: "secret"})
    gw.GetTableState(pb.GetTableStateRequest(table_id="t_1"), {INTERNAL_TOKEN_HEADER: "wrong"})
    assert servicer.seen == [("yes", False), ("", True), ("", False)]


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
def test_errors_answer_as_over_grpc(served, protocol):
    server, _ = served()
    gw = WebGateway(server.url, protocol)
    with pytest.raises(ConnectError) as refused:
        gw.JoinSeat(pb.JoinSeatRequest(table_id="t_1"))
    assert refused.value.code is Code.PERMISSION_DENIED
    assert refused.value.message == "seat 2 is not yours"
    info = error_details_pb2.ErrorInfo.FromString(refused.value.details[0].message_bytes)
    assert (info.reason, info.domain, dict(info.metadata)) == (
        "NOT_YOURS",
        "mahjong",
        {"seat": "2"},
    )
    with pytest.raises(ConnectError) as crashed:
        gw.Leave(pb.LeaveRequest(table_id="t_1"))
    assert crashed.value.code is Code.INTERNAL
    assert crashed.value.message == "internal error in mahjong.gateway.v1.GatewayService/Leave"
    # the server is still there
    assert gw.GetTableState(pb.GetTableStateRequest(table_id="t_2")).table.table_id == "t_2"


def test_streams_past_the_limit_are_refused(served):
    server, servicer = served(max_streams=1)
    gw = WebGateway(server.url, "connect")
    open_stream = WebGateway(server.url, "grpc-web").Subscribe(pb.SubscribeRequest())
    assert next(open_stream).event.sequence == 1  # holds the only slot
    with pytest.raises(ConnectError) as full:
        next(iter(gw.Subscribe(pb.SubscribeRequest())))
    assert full.value.code is Code.RESOURCE_EXHAUSTED
    servicer.release.set()
    list(open_stream)
    _until(lambda: server.binding.streams == 0)
    assert [r.event.sequence for r in gw.Subscribe(pb.SubscribeRequest())] == []  # slot free


def _until(condition, seconds: float = 5.0) -> float:
    """Wait for ``condition``; how long it took."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < seconds, "timed out"
        time.sleep(0.01)
    return time.monotonic() - start


def _raw_stream(server: WebServer) -> socket.socket:
    """A Connect Subscribe opened on a bare socket (closed as a browser tab is), its first
    message read."""
    body = b"\x00\x00\x00\x00\x00"  # one empty SubscribeRequest, enveloped
    sock = socket.create_connection((server.host, server.port), timeout=5)
    sock.sendall(
        b"POST /mahjong.gateway.v1.GatewayService/Subscribe HTTP/1.1\r\nHost: t\r\n"
        b"Content-Type: application/connect+proto\r\nConnect-Protocol-Version: 1\r\n"
        b"Content-Length: 5\r\n\r\n" + body
    )
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    return sock


def test_a_client_that_leaves_ends_its_stream_on_the_server_at_once(served):
    server, servicer = served()
    socks = [_raw_stream(server) for _ in range(3)]
    _until(lambda: server.binding.streams == 3)
    socks[0].close()
    assert _until(lambda: server.binding.streams == 2) < 1.0
    for s in socks[1:]:
        s.close()
    assert _until(lambda: server.binding.streams == 0) < 1.0
    assert len(servicer.contexts) == 3
    assert not any(context.is_active() for context in servicer.contexts)


def test_no_stream_is_ended_for_its_age(served):
    """The old port ended every stream after --web-stream-seconds (its test: 0.4 s); now a
    call has no clock (a context's ``time_remaining()`` is None) and a stream stays while its
    client reads."""
    server, servicer = served()
    web = WebCallContext({}, "web:test")
    assert web.time_remaining() is None and web.is_active()
    stream = WebGateway(server.url, "connect").Subscribe(pb.SubscribeRequest(), timeout_ms=None)
    start, last = time.monotonic(), 0
    for r in stream:
        last = r.event.sequence
        if time.monotonic() - start > 2.0:
            break
    assert last >= 20 and server.binding.streams == 1
    servicer.release.set()
    stream.close()


def _get(server: WebServer, path: str, headers: dict | None = None, method: str = "GET"):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_static_files_stay_in_their_folder(tmp_path):
    root = tmp_path / "dist"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html><title>table</title>")
    (root / "assets" / "app.js").write_text("console.log(1)")
    (tmp_path / "secret.txt").write_text("not for browsers")
    binding = ServiceBinding(StandIn(), DESCRIPTOR)
    server = WebServer(binding, web_root=root).start()
    try:
        status, headers, body = _get(server, "/")
        assert status == 200 and b"<title>table</title>" in body
        assert headers["content-type"].startswith("text/html")
        status, headers, _ = _get(server, "/assets/app.js")
        assert status == 200 and "javascript" in headers["content-type"]
        assert _get(server, "/watch")[2] == body  # the page's own routes
        for bad in ("/../secret.txt", "/%2e%2e/secret.txt", "/assets/../../secret.txt"):
            status, _, leaked = _get(server, bad)
            assert b"not for browsers" not in leaked and status == 404, bad
    finally:
        server.close()


def test_cors_preflight_only_for_listed_origins(served):
    server, _ = served()
    ask = {"Access-Control-Request-Method": "POST"}
    status, headers, _ = _get(server, "/x", {"Origin": "http://allowed.test", **ask}, "OPTIONS")
    assert status == 204 and headers["access-control-allow-origin"] == "http://allowed.test"
    status, headers, _ = _get(server, "/x", {"Origin": "http://other.test", **ask}, "OPTIONS")
    assert status == 403 and "access-control-allow-origin" not in headers


def _post(server: WebServer, path: str, body: bytes, headers: dict):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    try:
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_malformed_requests_are_refused_as_invalid_and_the_server_stays(served):
    server, servicer = served()
    path = "/mahjong.gateway.v1.GatewayService/GetTableState"
    connect = {"Connect-Protocol-Version": "1"}
    status, body = _post(
        server, path, b"\xff\xff garbage", {"Content-Type": "application/proto", **connect}
    )
    assert status == 400 and b'"invalid_argument"' in body and b"unmarshal" in body
    status, body = _post(
        server, path, b"{not json", {"Content-Type": "application/json", **connect}
    )
    assert status == 400 and b'"invalid_argument"' in body
    web = {"Content-Type": "application/grpc-web+proto"}
    status, body = _post(server, path, b"\x00\x00\x00\x00\x09garbage!!", web)
    assert status == 200 and b"grpc-status: 3" in body  # INVALID_ARGUMENT in the trailer frame
    status, body = _post(server, path, b"\x00\x00\x00\x10\x00", web)  # a frame cut short
    assert b"grpc-status: 3" in body and b"promised" in body
    assert _post(server, path, b"", {"Content-Type": "text/plain"})[0] == 415
    assert _post(server, "/mahjong.gateway.v1.GatewayService/Nope", b"", connect)[0] == 404
    assert servicer.seen == []  # none reached the servicer
    gw = WebGateway(server.url, "connect")
    assert gw.GetTableState(pb.GetTableStateRequest(table_id="t_9")).table.table_id == "t_9"


def test_a_web_port_in_use_is_a_bind_error_naming_the_flag(served):
    server, _ = served()
    with pytest.raises(BindError, match="--web-port"):
        WebServer(ServiceBinding(StandIn(), DESCRIPTOR), port=server.port)


def _served_certificate(server: WebServer, ca: Path) -> bytes:
    context = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection((server.host, server.port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        return tls.getpeercert(binary_form=True)


def test_https_takes_a_rotated_certificate_for_new_connections(tmp_path, monkeypatch):
    monkeypatch.setattr(web_module, "RELOAD_CHECK_SECONDS", 0.0)
    directory = issue(tmp_path / "ca", "gateway", directory=tmp_path / "tls")
    server = WebServer(ServiceBinding(StandIn(), DESCRIPTOR), tls=TLSFiles(directory)).start()
    try:
        assert server.url.startswith("https://")
        first = _served_certificate(server, directory / "ca.crt")
        time.sleep(0.05)  # a new modification time
        issue(tmp_path / "ca", "gateway", directory=directory)
        second = _served_certificate(server, directory / "ca.crt")
        assert second != first
        assert _served_certificate(server, directory / "ca.crt") == second
    finally:
        server.close()
