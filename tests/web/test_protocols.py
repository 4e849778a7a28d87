"""The gateway over Connect and gRPC-Web answers exactly as over gRPC: the hostile calls of the
gRPC API (forged and foreign tokens, stale and future sequence numbers, garbage tiles, a
spectator acting, …) give the same code, ErrorInfo reason and message on all three transports
and change nothing; a request id is one request whatever transport repeats it; the internal
token travels as an HTTP header with the same effect as gRPC metadata; streams carry the same
events; CORS lets only the configured origins in. With ``--web-tls-dir`` the web port serves
HTTPS that a client trusting the development CA (and only such a client) reaches, with the same
answers as gRPC; off loopback the gateway refuses to serve the web port without it. Real
processes on ports the OS picks (LocalStack)."""

from __future__ import annotations

import http.client
import itertools
import re
import socket
import ssl
import struct
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from pyqwest import SyncClient, SyncHTTPTransport

from infra.interceptor import INTERNAL_TOKEN_HEADER
from infra.ports import AUTO_PORT
from infra.supervisor import DEV_TLS_ROOT, ServiceProcess
from tests.support.stacks import local_stack
from tests.support.tls import CA_FILE, as_workload
from tests.support.web import PROTOCOLS, GrpcGateway, Outcome, WebGateway, outcome

pytestmark = pytest.mark.integration

TRANSPORTS = ("grpc", "connect", "grpc-web")
PASS = pb.Action(**{"pass": pb.Pass()})


@pytest.fixture(scope="module")
def stack():
    # long timers: the person's prompt waits for the test, nothing moves under it; the tables
    # (created from one address without the internal token) never finish: no per-address cap
    args = {
        "gateway": [
            "--discard-ms",
            "600000",
            "--claim-ms",
            "600000",
            "--public-tables-per-address",
            "0",
        ]
    }
    with local_stack(extra_args=args) as st:
        yield st


@pytest.fixture(scope="module")
def gateways(stack):
    gws = {
        "grpc": GrpcGateway(stack.gateway),
        "connect": WebGateway(stack.web, "connect"),
        "grpc-web": WebGateway(stack.web, "grpc-web"),
    }
    yield gws
    for gw in gws.values():
        gw.close()


_ids = itertools.count()


def new_table(gw, metadata=None) -> tuple[str, str]:
    """A table with the person dealing (their own turn first) and three bots: (id, token)."""
    r = gw.CreateTable(
        pb.CreateTableRequest(
            request_id=f"create-{next(_ids)}-{time.monotonic_ns()}",
            stake=1,
            max_hands=1,
            first_dealer=common_pb2.SEAT_0,
            seats=[pb.SeatAssignment(player_id="person", display_name="Person")]
            + [pb.SeatAssignment(bot=True)] * 3,
        ),
        metadata=metadata,
    )
    return r.table_id, r.seat_tokens[0]


def prompted_view(gw, table_id: str, token: str) -> pb.TableView:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        view = gw.GetTableState(pb.GetTableStateRequest(table_id=table_id, seat_token=token)).table
        if view.HasField("prompt"):
            return view
        time.sleep(0.05)
    raise AssertionError("the person's first prompt never came")


@pytest.fixture(scope="module")
def table(gateways):
    gw = gateways["grpc"]
    table_id, token = new_table(gw)
    _, other_token = new_table(gw)
    spectator = gw.JoinSeat(
        pb.JoinSeatRequest(request_id="watch", table_id=table_id, spectator=True)
    ).seat_token
    waiting = gw.CreateTable(  # an open seat: the table waits, nobody has a decision
        pb.CreateTableRequest(
            request_id=f"waiting-{time.monotonic_ns()}",
            stake=1,
            max_hands=1,
            seats=[pb.SeatAssignment(player_id="early")] + [pb.SeatAssignment()] * 3,
        )
    )
    view = prompted_view(gw, table_id, token)
    return {
        "waiting": (waiting.table_id, waiting.seat_tokens[0]),
        "id": table_id,
        "token": token,
        "other_token": other_token,
        "spectator": spectator,
        "view": view,
    }


def hostile_calls(t: dict, transport: str):
    """(name, method, request, expected "CODE" or "CODE/REASON") of refused calls."""
    v: pb.TableView = t["view"]
    prompt_seq = v.last_sequence  # the prompt is the latest event: nothing moves meanwhile
    legal = v.prompt.options.discards[0]
    tid, tok = t["id"], t["token"]
    prefix, table_part, _, mac = tok.split(".")
    forged = ".".join((prefix, table_part, "1", mac))  # seat 1 claimed with seat 0's signature

    def act(action=None, *, token=tok, seq=prompt_seq, table=tid, rid=None, seat=0):
        req = pb.ActRequest(
            table_id=table, seat_token=token, last_sequence=seq, seat=seat,
            request_id=f"hostile-{transport}-{next(_ids)}" if rid is None else rid,
        )  # fmt: skip
        if action is not None:
            req.action.CopyFrom(action)
        return req

    def discard(tile):
        return pb.Action(discard=pb.Discard(tile=tile))

    return [
        ("malformed token", "Act", act(discard(legal), token="x" * 40), "UNAUTHENTICATED"),
        ("forged token", "Act", act(discard(legal), token=forged), "UNAUTHENTICATED"),
        ("another table's token", "Act", act(discard(legal), token=t["other_token"]),
         "PERMISSION_DENIED"),
        ("stale sequence", "Act", act(discard(legal), seq=prompt_seq - 1), "ABORTED/STALE"),
        ("future sequence", "Act", act(discard(legal), seq=prompt_seq + 1000),
         "INVALID_ARGUMENT"),
        ("garbage tile", "Act", act(discard(99)), "INVALID_ARGUMENT"),
        ("a flower played", "Act", act(discard(common_pb2.TILE_1F)), "INVALID_ARGUMENT"),
        ("no action", "Act", act(None), "INVALID_ARGUMENT"),
        ("empty request id", "Act", act(discard(legal), rid=""), "INVALID_ARGUMENT"),
        ("spectator acting", "Act", act(discard(legal), token=t["spectator"]),
         "PERMISSION_DENIED"),
        ("pong on the own turn", "Act", act(pb.Action(pong=pb.Pong())), "FAILED_PRECONDITION"),
        ("another seat claimed", "Act", act(discard(legal), seat=common_pb2.SEAT_2),
         "PERMISSION_DENIED"),
        ("unknown table", "Act", act(discard(legal), table="t_0000000000000000"), "NOT_FOUND"),
        ("view of a seat out of range", "GetTableState",
         pb.GetTableStateRequest(table_id=tid, seat_token=tok, seat=9), "INVALID_ARGUMENT"),
        ("hint with no decision pending", "GetHint",
         pb.GetHintRequest(table_id=t["waiting"][0], seat_token=t["waiting"][1]),
         "FAILED_PRECONDITION/NO_PROMPT"),
        ("hint for a spectator", "GetHint",
         pb.GetHintRequest(table_id=tid, seat_token=t["spectator"]), "PERMISSION_DENIED"),
        ("subscribe with a forged token", "Subscribe",
         pb.SubscribeRequest(table_id=tid, seat_token="x" * 40), "UNAUTHENTICATED"),
        ("subscribe from the future", "Subscribe",
         pb.SubscribeRequest(table_id=tid, seat_token=tok, after_sequence=prompt_seq + 5),
         "INVALID_ARGUMENT"),
        ("join a seat held by its player", "JoinSeat",
         pb.JoinSeatRequest(request_id=f"j-{transport}", table_id=tid, player_id="person"),
         "PERMISSION_DENIED"),
    ]  # fmt: skip


def test_hostile_calls_get_the_same_answer_on_every_transport_and_change_nothing(gateways, table):
    before = table["view"]
    answers: dict[str, list[Outcome]] = {}
    for transport, gw in gateways.items():
        answers[transport] = [
            outcome(lambda g=gw, m=method, r=request: getattr(g, m)(r))
            for _, method, request, _ in hostile_calls(table, transport)
        ]
    cases = hostile_calls(table, "grpc")
    for i, (name, _, _, expected) in enumerate(cases):
        grpc_answer = answers["grpc"][i]
        code, _, reason = expected.partition("/")
        assert grpc_answer.code == code, (name, grpc_answer)
        assert not reason or grpc_answer.reason == reason, (name, grpc_answer)
        assert grpc_answer.reason, f"{name}: no ErrorInfo reason over gRPC"
        for transport in ("connect", "grpc-web"):
            assert answers[transport][i] == grpc_answer, (name, transport)
    after = prompted_view(gateways["grpc"], table["id"], table["token"])
    assert after.last_sequence == before.last_sequence
    assert after.prompt == before.prompt
    assert after.seats == before.seats


def test_a_refusal_repeated_on_another_transport_is_the_first_answer_again(gateways, table):
    v = table["view"]
    stale = pb.ActRequest(
        table_id=table["id"],
        seat_token=table["token"],
        request_id="stale-once",
        last_sequence=v.last_sequence - 1,
        action=pb.Action(discard=pb.Discard(tile=v.prompt.options.discards[0])),
    )
    first = outcome(lambda: gateways["connect"].Act(stale))
    assert first.code == "ABORTED" and first.reason == "STALE"
    fresh = pb.ActRequest()
    fresh.CopyFrom(stale)
    fresh.last_sequence = v.last_sequence  # now decidable, but the id was already answered
    for transport in ("grpc-web", "grpc"):
        assert outcome(lambda t=transport: gateways[t].Act(fresh)) == first, transport


def test_get_hint_answers_alike_and_only_where_hints_are_allowed(stack, gateways, table):
    req = pb.GetHintRequest(table_id=table["id"], seat_token=table["token"])
    hints = {t: gw.GetHint(req) for t, gw in gateways.items()}
    assert hints["grpc"].prompt_sequence == table["view"].last_sequence
    assert hints["grpc"].action.WhichOneof("kind") in ("discard", "declare_ready", "kong", "win")
    assert hints["connect"] == hints["grpc"] == hints["grpc-web"]
    assert table["view"].hints

    # A table matchmaking created (its certificate on the gateway's internal port, with the
    # internal token): rated, and no transport gives hints for it.
    matchmaking = GrpcGateway(
        "", as_workload(stack.internal_address("gateway"), "gateway", "matchmaking")
    )
    try:
        rated = [new_table(matchmaking, {INTERNAL_TOKEN_HEADER: stack.internal_token})]
    finally:
        matchmaking.close()
    for transport, gw in gateways.items():
        rated_id, rated_token = rated[0]
        view = prompted_view(gw, rated_id, rated_token)
        assert not view.hints, transport
        refused = outcome(
            lambda g=gw, i=rated_id, k=rated_token: g.GetHint(
                pb.GetHintRequest(table_id=i, seat_token=k)
            )
        )
        assert (refused.code, refused.reason) == ("FAILED_PRECONDITION", "HINTS_DISABLED")
        # the internal token without matchmaking's certificate (a player's call, a browser's
        # header) makes no rated table, right or wrong: a casual table
        for token in (stack.internal_token, "not-the-token"):
            casual_id, casual_token = new_table(gw, {INTERNAL_TOKEN_HEADER: token})
            assert prompted_view(gw, casual_id, casual_token).hints, transport


def test_one_request_id_is_one_action_whatever_transport_repeats_it(gateways):
    table_id, token = new_table(gateways["grpc"])
    view = prompted_view(gateways["grpc"], table_id, token)
    tile = view.prompt.options.discards[-1]
    req = pb.ActRequest(
        table_id=table_id,
        seat_token=token,
        request_id="discard-once",
        last_sequence=view.last_sequence,
        action=pb.Action(discard=pb.Discard(tile=tile)),
    )
    first = gateways["connect"].Act(req)
    assert not first.replayed
    for transport in ("grpc-web", "grpc", "connect"):
        again = gateways[transport].Act(req)
        assert (again.sequence, again.replayed) == (first.sequence, True), transport
    mine = (
        gateways["grpc-web"]
        .GetTableState(pb.GetTableStateRequest(table_id=table_id, seat_token=token))
        .table.seats[0]
    )
    assert list(mine.discards).count(tile) >= 1
    assert len(mine.discards) == 1 or mine.melds, "the discard was applied more than once"


def test_streams_carry_the_same_events_on_every_transport(stack, gateways, table):
    req = pb.SubscribeRequest(table_id=table["id"], seat_token=table["token"])
    head = table["view"].last_sequence
    seen = {}
    open_before = _web_streams_open(stack)
    for transport, gw in gateways.items():
        events = []
        stream = gw.Subscribe(req, timeout_ms=15_000)
        for r in stream:
            events.append(r.event)
            if r.event.sequence >= head:
                break
        if hasattr(stream, "cancel"):
            stream.cancel()
        else:
            stream.close()
        seen[transport] = events
    # the web port's streams end as their clients close them; waited for, so the next test's
    # count of open streams does not see one of these end after it started counting
    deadline = time.monotonic() + 5
    while _web_streams_open(stack) > open_before:
        assert time.monotonic() < deadline, "the web port's streams did not end"
        time.sleep(0.01)
    assert seen["grpc"][-1].WhichOneof("kind") == "prompt"
    assert any(e.WhichOneof("kind") == "tiles_dealt" for e in seen["grpc"])
    assert seen["connect"] == seen["grpc"] == seen["grpc-web"]


def _web_streams_open(stack) -> float:
    port = stack.procs["gateway"].ports.metrics
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    return float(re.search(r"^mahjong_web_streams_open (\S+)$", text, re.M).group(1))


def _browser_stream(stack, table_id: str, token: str) -> socket.socket:
    """A Connect Subscribe as a browser tab opens it: its own connection, the first event read."""
    message = pb.SubscribeRequest(table_id=table_id, seat_token=token).SerializeToString()
    body = struct.pack(">BI", 0, len(message)) + message
    sock = socket.create_connection(("127.0.0.1", stack.web_ports["gateway"]), timeout=10)
    sock.sendall(
        b"POST /mahjong.gateway.v1.GatewayService/Subscribe HTTP/1.1\r\nHost: t\r\n"
        b"Content-Type: application/connect+proto\r\nConnect-Protocol-Version: 1\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    return sock


def test_a_browser_that_leaves_ends_its_stream_on_the_gateway_at_once(stack, table):
    """A closed tab closes its connection: the gateway ends that stream within a second (its
    count, mahjong_web_streams_open, back down), not after a timer; the others stay open."""
    table_id, token = table["waiting"]
    before = _web_streams_open(stack)
    tabs = [_browser_stream(stack, table_id, token) for _ in range(3)]
    deadline = time.monotonic() + 5
    while _web_streams_open(stack) < before + 3:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    tabs[0].close()
    closed = time.monotonic()
    while _web_streams_open(stack) > before + 2:
        assert time.monotonic() - closed < 1.0, "the gateway did not see the tab close"
        time.sleep(0.01)
    time.sleep(0.3)
    assert _web_streams_open(stack) == before + 2  # the other two go on
    for tab in tabs[1:]:
        tab.close()
    closed = time.monotonic()
    while _web_streams_open(stack) > before:
        assert time.monotonic() - closed < 1.0
        time.sleep(0.01)


def _request(url: str, method: str, headers: dict[str, str], body: bytes = b""):
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        path = "/mahjong.gateway.v1.GatewayService/GetTableState"
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


def test_cors_lets_in_the_configured_origins_only(stack):
    asked = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,connect-protocol-version",
    }
    local = "http://localhost:5173"  # the Vite dev server, which the local stack allows
    status, headers = _request(stack.web, "OPTIONS", {"Origin": local, **asked})
    assert status == 204
    assert headers["access-control-allow-origin"] == local
    assert "connect-protocol-version" in headers["access-control-allow-headers"]
    status, headers = _request(stack.web, "OPTIONS", {"Origin": "https://evil.example", **asked})
    assert status == 403 and "access-control-allow-origin" not in headers
    body = pb.GetTableStateRequest(table_id="t_0000000000000000").SerializeToString()
    kind = {"Content-Type": "application/proto", "Connect-Protocol-Version": "1"}
    status, headers = _request(stack.web, "POST", {"Origin": "https://evil.example", **kind}, body)
    assert status == 404 and "access-control-allow-origin" not in headers  # NOT_FOUND table
    status, headers = _request(stack.web, "POST", {"Origin": local, **kind}, body)
    assert headers["access-control-allow-origin"] == local
    assert "grpc-status-details-bin" in headers["access-control-expose-headers"]


# --- HTTPS on the web port -------------------------------------------------------------------

WEB_TLS = DEV_TLS_ROOT / "gateway"  # the gateway's development certificate: IP SAN 127.0.0.1
SERVICE = "/mahjong.gateway.v1.GatewayService"


class HttpsWebGateway(WebGateway):
    """:class:`WebGateway` over HTTPS, verifying the server against ``ca`` (PEM) alone."""

    def __init__(self, url: str, protocol: str, ca: bytes) -> None:
        self.http = SyncClient(SyncHTTPTransport(tls_ca_cert=ca))
        self.client = ConnectClientSync(
            url,
            codec=google_protobuf_binary_codec(),
            protocol=PROTOCOLS[protocol],
            http_client=self.http,
        )
        self.headers = {}


@pytest.fixture(scope="module")
def https_stack():
    args = {
        "gateway": ["--discard-ms", "600000", "--claim-ms", "600000", "--web-tls-dir", str(WEB_TLS)]
    }
    with local_stack(extra_args=args) as st:
        st.https = f"https://127.0.0.1:{st.web_ports['gateway']}"
        yield st


def _connect_unary(url: str, method: str, request, context: ssl.SSLContext | None):
    """A Connect unary call by hand (urllib): the HTTP status and the raw body."""
    req = urllib.request.Request(
        f"{url}{SERVICE}/{method}",
        data=request.SerializeToString(),
        headers={"Content-Type": "application/proto", "Connect-Protocol-Version": "1"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, context=context, timeout=10) as resp:
            return resp.status, resp.headers.get("Content-Type"), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type"), exc.read()


def test_the_web_port_over_https_answers_as_grpc_to_clients_trusting_the_ca(https_stack):
    url = https_stack.https
    trusting = ssl.create_default_context(cafile=CA_FILE)  # verifies the chain and 127.0.0.1
    create = pb.CreateTableRequest(
        request_id=f"https-{time.monotonic_ns()}",
        stake=1,
        max_hands=1,
        first_dealer=common_pb2.SEAT_0,
        seats=[pb.SeatAssignment(player_id="person", display_name="Person")]
        + [pb.SeatAssignment(bot=True)] * 3,
    )
    status, kind, body = _connect_unary(url, "CreateTable", create, trusting)
    assert (status, kind) == (200, "application/proto"), body
    created = pb.CreateTableResponse.FromString(body)
    table_id, token = created.table_id, created.seat_tokens[0]
    assert table_id.startswith("t_")
    # a refusal over HTTPS is Connect's: the status's HTTP code and a JSON error
    missing = pb.GetTableStateRequest(table_id="t_0000000000000000", seat_token=token)
    status, kind, body = _connect_unary(url, "GetTableState", missing, trusting)
    assert (status, kind) == (404, "application/json") and b"not_found" in body

    ca = Path(CA_FILE).read_bytes()
    gws = {
        "grpc": GrpcGateway(https_stack.gateway),
        "connect": HttpsWebGateway(url, "connect", ca),
        "grpc-web": HttpsWebGateway(url, "grpc-web", ca),
    }
    try:
        view = prompted_view(gws["grpc"], table_id, token)
        state = pb.GetTableStateRequest(table_id=table_id, seat_token=token)
        for transport in ("connect", "grpc-web"):
            seen = gws[transport].GetTableState(state).table
            assert (seen.last_sequence, seen.prompt, seen.seats) == (
                view.last_sequence,
                view.prompt,
                view.seats,
            ), transport
        # streams over HTTPS carry the events gRPC does
        events = {}
        for transport, gw in gws.items():
            stream = gw.Subscribe(pb.SubscribeRequest(table_id=table_id, seat_token=token))
            events[transport] = []
            for r in stream:
                events[transport].append(r.event)
                if r.event.sequence >= view.last_sequence:
                    break
            stream.cancel() if hasattr(stream, "cancel") else stream.close()
        assert events["grpc"][-1].WhichOneof("kind") == "prompt"
        assert events["connect"] == events["grpc"] == events["grpc-web"]
        # a hostile call: the same refusal on every transport
        forged = pb.ActRequest(
            table_id=table_id, seat_token="x" * 40, request_id="https-forged",
            last_sequence=view.last_sequence,
            action=pb.Action(discard=pb.Discard(tile=view.prompt.options.discards[0])),
        )  # fmt: skip
        answers = {t: outcome(lambda g=gw: g.Act(forged)) for t, gw in gws.items()}
        assert answers["grpc"].code == "UNAUTHENTICATED"
        assert answers["connect"] == answers["grpc"] == answers["grpc-web"]
    finally:
        for gw in gws.values():
            gw.close()


def test_the_web_port_over_https_is_refused_by_clients_not_trusting_the_ca(https_stack):
    url = https_stack.https
    ping = pb.GetTableStateRequest(table_id="t_0000000000000000")
    # the system's roots alone: the development CA's certificate does not verify
    with pytest.raises(urllib.error.URLError) as refused:
        _connect_unary(url, "GetTableState", ping, ssl.create_default_context())
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError), refused.value
    # nor through Connect's own client trusting another CA (the certificate's key is not a CA)
    other = (WEB_TLS / "tls.crt").read_bytes()
    gw = HttpsWebGateway(url, "connect", other)
    try:
        answer = outcome(lambda: gw.GetTableState(ping))
        assert answer.code == "UNAVAILABLE" and "certificate" in answer.message, answer
    finally:
        gw.close()
    # plain HTTP to the HTTPS port reaches no method
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request(
            "POST",
            f"{SERVICE}/GetTableState",
            body=ping.SerializeToString(),
            headers={"Content-Type": "application/proto", "Connect-Protocol-Version": "1"},
        )
        resp = conn.getresponse()
        answer = (resp.status, resp.read())
    except (http.client.HTTPException, ConnectionError) as exc:
        answer = (0, repr(exc).encode())
    finally:
        conn.close()
    assert answer[0] in (0, 400) and b"not_found" not in answer[1], answer


@pytest.mark.parametrize("server_model", ["asyncio", "threads"])
def test_a_gateway_off_loopback_refuses_a_plain_http_web_port(tmp_path, server_model):
    """A web port on another address than loopback needs --web-tls-dir: the gateway exits at
    start-up naming the flag, before it listens anywhere (192.0.2.1, a documentation address
    no machine has, would fail to bind: the refusal comes first, before any port is bound).
    With the flag the same gateway gets past that check, to the binds (its gRPC port's, the
    first, fails)."""

    def start(host: str, *flags: str) -> str:
        proc = ServiceProcess(
            "gateway",
            0,
            AUTO_PORT,
            f"sqlite:///{tmp_path / 'gateway.db'}",
            ["--host", host, "--server-model", server_model, "--web-port", "auto", *flags],
            log_path=tmp_path / f"gateway-{host}-{len(flags)}.log",
        ).start()
        assert proc.proc is not None
        try:
            code = proc.proc.wait(60)
        finally:
            proc.stop()
        assert code not in (0, None), "the gateway started"
        return (tmp_path / f"gateway-{host}-{len(flags)}.log").read_text()

    for host in ("0.0.0.0", "192.0.2.1"):
        log = start(host)
        assert f"the web port listens on {host}, not loopback: give --web-tls-dir" in log, log
    log = start("192.0.2.1", "--web-tls-dir", str(WEB_TLS))
    assert "--web-tls-dir" not in log and "cannot listen on 192.0.2.1:0" in log, log


def test_matchmakings_methods_are_not_served_on_the_web_port(stack):
    """SuspendSeat (matchmaking's) answers a workload certificate alone, which a browser has
    not: the web port does not serve it (an unknown path, NOT_FOUND). GetTableState is served,
    and so are the operator's ListTables, InspectTable and EndTable, for an operator's session
    (each UNAUTHENTICATED without a token)."""
    parts = urlsplit(stack.web)
    kind = {"Content-Type": "application/proto", "Connect-Protocol-Version": "1"}
    served = {"GetTableState": True, "ListTables": True, "InspectTable": True}
    served |= {"EndTable": True, "SuspendSeat": False}
    for method, is_served in served.items():
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        try:
            conn.request("POST", f"{SERVICE}/{method}", body=b"", headers=kind)
            resp = conn.getresponse()
            resp.read()
        finally:
            conn.close()
        assert (resp.status != 404) == is_served, (method, resp.status)
