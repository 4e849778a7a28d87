"""One act, one trace, across every process it touches: a player acts through the gateway
replica that does not run its table, and a real OTLP/gRPC receiver started here gets one trace
holding the player's call, the forward to the owner, the rules call, the wall draw and the
store writes, and the owner's log line of that act names the trace."""

from __future__ import annotations

import json
import uuid

import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra import tracing, tracing_grpc
from infra.supervisor import stop_all
from tests.e2e.players import legal_answer
from tests.e2e.test_failover import gateway
from tests.support.otlp import Receiver
from tests.support.stacks import service_process
from tests.support.tables import request_table
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

GATEWAY = "mahjong.gateway.v1.GatewayService"
ACTS = 12  # acts to try for one whose answer closes a claim window (the next seat draws)


@pytest.fixture(scope="module")
def traced_stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("traces")
    receiver = Receiver()
    flags = ["--otlp-endpoint", receiver.endpoint, "--trace-sample-ratio", "1"]
    procs: dict = {}
    try:
        for name in ("wall", "rules", "scoring"):
            procs[name] = service_process(name, tmp, extra=flags).start()
        for p in procs.values():
            p.wait_ready()
        stack = {"procs": procs, "tmp": tmp}
        db = tmp / "gateways.db"
        a = gateway(stack, db, "trace-a", *flags, "--log-level", "debug")
        b = gateway(stack, db, "trace-b", *flags)
        yield receiver, a, b
        for p in (a, b):
            p.stop()
    finally:
        stop_all(list(procs.values()))
        receiver.stop()


def _complete(receiver: Receiver, trace_id: str) -> dict[str, list]:
    """What a trace holds, by part: an empty part means it has not arrived (yet)."""
    spans = receiver.trace(trace_id)
    act = f"{GATEWAY}/Act"
    return {
        "player": [s for s in spans if s.service == "player" and s.name == act],
        "received by b": [s for s in spans if s.service == "gateway" and s.name == act],
        "rules": [s for s in spans if s.service == "rules"],
        "wall draw": [s for s in spans if s.service == "wall" and s.name.endswith("/Draw")],
        "store writes": [
            s
            for s in spans
            if s.name.startswith("store.")
            and s.attributes.get("db.operation") in ("append", "append_many", "put", "update")
        ],
    }


def test_an_act_forwarded_between_replicas_is_one_trace(traced_stack):
    receiver, a, b = traced_stack
    assert tracing_grpc.configure("player", receiver.endpoint, 1.0)
    try:
        with as_player(a.address) as on_a, as_player(b.address) as on_b:
            stub_a = gateway_pb2_grpc.GatewayServiceStub(on_a)
            stub_b = gateway_pb2_grpc.GatewayServiceStub(on_b)
            seats = [pb.SeatAssignment(player_id="traced"), *[pb.SeatAssignment(bot=True)] * 3]
            t = request_table(stub_a, seats, max_hands=1)  # replica A runs it
            acts = _play(stub_b, t.table_id, t.seat_tokens[0])
    finally:
        tracing_grpc.shutdown()  # the player's spans exported

    def drawn(r: Receiver):
        for trace_id in acts:
            parts = _complete(r, trace_id)
            if all(parts.values()):
                return trace_id, parts
        return None

    found = receiver.wait_for(drawn)
    assert found, {t: {k: len(v) for k, v in _complete(receiver, t).items()} for t in acts}
    trace_id, parts = found
    (player,) = parts["player"]
    servers = {s.span_id: s for s in parts["received by b"] if s.kind == 2}  # SERVER
    clients = [s for s in parts["received by b"] if s.kind == 3]  # CLIENT: the forward
    first = next(s for s in servers.values() if s.parent_id == player.span_id)
    forward = next(s for s in clients if s.parent_id == first.span_id)
    owner = next(s for s in servers.values() if s.parent_id == forward.span_id)
    assert first.attributes["mahjong.table_id"] == owner.attributes["mahjong.table_id"]
    assert owner.attributes["mahjong.hand_id"] and owner.attributes["mahjong.seat"] == 0
    assert owner.attributes["mahjong.request_id"]
    assert any(s.attributes.get("mahjong.store.outcome") == "ok" for s in parts["store writes"])
    # the owner's log line of that act names its trace
    lines = [json.loads(x) for x in a.log_path.read_text().splitlines() if trace_id in x]
    assert any(x.get("method") == "Act" and x.get("trace_id") == trace_id for x in lines), lines


def _play(stub, table_id: str, token: str) -> list[str]:
    """Answer the seat's prompts through ``stub`` (the replica that does not run the table),
    each act under a span of its own; the trace ids of the acts."""
    traces: list[str] = []
    stream = stub.Subscribe(pb.SubscribeRequest(table_id=table_id, seat_token=token), timeout=60)
    try:
        for r in stream:
            e = r.event
            if e.WhichOneof("kind") == "table_finished" or len(traces) >= ACTS:
                break
            if e.WhichOneof("kind") != "prompt":
                continue
            with tracing._tracer.start_as_current_span("act") as span:
                stub.Act(
                    pb.ActRequest(
                        table_id=table_id,
                        seat_token=token,
                        request_id=uuid.uuid4().hex,
                        last_sequence=e.sequence,
                        action=legal_answer(e.prompt),
                    ),
                    timeout=10,
                )
            traces.append(format(span.get_span_context().trace_id, "032x"))
    finally:
        stream.cancel()
    return traces
