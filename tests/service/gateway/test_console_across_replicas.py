"""The operator's console across two gateway replicas on one store (real gRPC servers, wall,
rules and scoring in-process): a table runs on replica A; the operator asks replica B.

* ListTables on B lists A's table with A's word on it (chips included);
* InspectTable and EndTable on B are sent on to A's internal port with the operator's signed
  claim; A answers, and its audit entry names the operator and the gateway (B) it came through;
* the same from B's web port, for an operator's session;
* the cheats: on A's internal port a gateway certificate without a claim, with a forged or
  replayed one, or without the deployment's internal token, is refused; the operator's own
  certificate, matchmaking's and a player (public port) sending a claim are refused too; a web
  call carrying a claim is refused.
"""

from __future__ import annotations

import time

import grpc
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from infra.interceptor import INTERNAL_TOKEN_HEADER
from infra.ports import AUTO_PORT
from services.gateway import delegation
from services.gateway.server import SPEC as GATEWAY
from shared.audit import AUDIT_LOG, AuditEntry
from shared.errors import PermissionDenied
from tests.support import sessions
from tests.support.grpc_server import serving
from tests.support.probes import rpc_error
from tests.support.stacks import InProcessGateway, inprocess_backends
from tests.support.tables import mixed_seats, request_table, wait_prompt
from tests.support.web import WebGateway

T = 10
TOKEN = "console-internal-token"  # the deployment's second factor between services
SLOW = {"discard_ms": 60_000, "claim_ms": 60_000, "seat_secret": "console-replicas"}


class OperatorSessions:
    """matchmaking's CheckSession, for the web port's operator session (one token)."""

    def player_of(self, session_token: str) -> str:
        raise PermissionDenied("not in this test")

    def operator_of(self, session_token: str) -> str:
        if session_token != "op-session":
            raise PermissionDenied("a player's session", reason="NOT_OPERATOR")
        return "session:p_op"


def _replica(stack, db, addrs, **extra):
    server, channel = stack.enter_context(
        serving(GATEWAY, store_url=f"sqlite:///{db}", internal_token=TOKEN,
                extra={**addrs, **sessions.NO_HOLD_SETTINGS, **SLOW, **extra})
    )  # fmt: skip
    from mahjong.gateway.v1 import gateway_pb2_grpc

    return InProcessGateway(server, channel, gateway_pb2_grpc.GatewayServiceStub(channel))


def _refused(call, request, metadata=()):
    code, _, info = rpc_error(lambda: call(request, metadata=metadata, timeout=T))
    return code, info.reason


def test_the_console_works_from_any_replica(tmp_path):
    import contextlib

    with contextlib.ExitStack() as stack:
        addrs = stack.enter_context(inprocess_backends())
        a = _replica(stack, tmp_path / "store.db", addrs)
        b = _replica(stack, tmp_path / "store.db", addrs, web_port=AUTO_PORT)
        b.server.resource.servicer.sessions = OperatorSessions()
        mm = stack.enter_context(a.calling_as("matchmaking"))
        op_b = stack.enter_context(b.calling_as("operator"))
        t = request_table(mm, mixed_seats(1, "p"), tag="room/654321", max_hands=4,
                          first_dealer=common_pb2.SEAT_0)  # fmt: skip
        wait_prompt(a.stub, t)

        (row,) = op_b.ListTables(pb.ListTablesRequest(tag_prefix="room/"), timeout=T).tables
        assert row.table_id == t.table_id and row.phase == "playing" and list(row.chips)
        assert op_b.ListTables(pb.ListTablesRequest(halted_only=True), timeout=T).tables == []

        page = op_b.InspectTable(pb.InspectTableRequest(table_id=t.table_id, limit=3), timeout=T)
        assert page.table.table_id == t.table_id and page.next_after_sequence == 3

        web = WebGateway(
            f"http://127.0.0.1:{b.server.resource.web_port}",
            "connect",
            headers={"authorization": "Bearer op-session"},
        )
        stack.callback(web.close)
        listed = web.ListTables(pb.ListTablesRequest()).tables
        assert [r.table_id for r in listed] == [t.table_id]
        got = web.InspectTable(pb.InspectTableRequest(table_id=t.table_id, limit=1))
        assert got.next_after_sequence == 1

        # the cheats, on A's internal port (where B's forwarded calls arrive)
        secret = SLOW["seat_secret"].encode()
        end = pb.EndTableRequest(table_id=t.table_id, reason="cheat")

        def claim(key=secret, method="EndTable", target=t.table_id, actor="spiffe://x/operator"):
            made = delegation.Claim(actor, "gw-b", method, target, int(time.time() * 1000))
            return ((delegation.CLAIM_HEADER, delegation.sign(key, made)),)

        as_gateway = stack.enter_context(a.calling_as("gateway"))
        token = ((INTERNAL_TOKEN_HEADER, TOKEN),)
        for metadata, reason in (
            (token, "CLAIM_MISSING"),
            ((*token, *claim(key=b"forged")), "CLAIM_INVALID"),
            ((*token, *claim(method="InspectTable")), "CLAIM_INVALID"),  # replayed elsewhere
            ((*token, *claim(target="t_other")), "CLAIM_INVALID"),
            (claim(), "DELEGATION_REFUSED"),  # a gateway certificate without the token
        ):
            assert _refused(as_gateway.EndTable, end, metadata) == (
                grpc.StatusCode.PERMISSION_DENIED,
                reason,
            )
        op_a = stack.enter_context(a.calling_as("operator"))
        mm_a = mm
        assert _refused(op_a.EndTable, end, claim()) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "DELEGATION_REFUSED",
        )
        assert _refused(mm_a.EndTable, end, claim()) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "CALLER_NOT_ALLOWED",
        )
        assert _refused(a.stub.EndTable, end, claim())[0] == grpc.StatusCode.UNAUTHENTICATED
        from connectrpc.errors import ConnectError

        try:
            web.EndTable(end, metadata=dict(claim()))
            raise AssertionError("a web call carrying a claim was served")
        except ConnectError as refused:
            assert "accepted only from another gateway replica" in refused.message
        assert _audit(a) == []  # nothing was done, nothing audited

        # ended from B: A does it and audits the operator and the gateway it came through
        ended = op_b.EndTable(
            pb.EndTableRequest(table_id=t.table_id, reason="ended from b"), timeout=T
        )
        assert ended.voided_hand_id == row.hand_id and ended.seed
        replica_b = b.server.resource.manager.settings.replica_id
        (entry,) = _audit(a)
        assert entry.action == "EndTable" and entry.result == "OK"
        assert entry.actor.endswith(f"via gateway {replica_b}") and "operator" in entry.actor
        assert _refused(op_b.EndTable, end) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "TABLE_FINISHED",
        )


def _audit(gw) -> list[AuditEntry]:
    return [AuditEntry.load(raw) for _, raw in gw.store.read_log(AUDIT_LOG)]
