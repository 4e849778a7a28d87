"""GatewayAllocator (matchmaking's gRPC client of GatewayService.CreateTable) against a scripted
GatewayService on a real loopback port: its mutual-TLS internal port, called with matchmaking's
development certificate, as the real gateway is."""

from __future__ import annotations

import contextlib
import threading

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc

from infra.config import ServiceSpec
from infra.tls import caller_workload
from services.matchmaking.adapters.gateway_client import GatewayAllocator, create_table_request
from services.matchmaking.domain.tables.allocator import SeatRequest, TableRefused, TableRequest
from shared.errors import Unavailable
from tests.support.grpc_server import serving
from tests.support.tls import files_of

REQUEST = TableRequest(
    request_id="tournament-T-r1-t0",
    ruleset="shanghai-classic",
    stake=4,
    seats=(
        SeatRequest("p-1", "Alice"),
        SeatRequest("p-2", "Bob"),
        SeatRequest("bot-1", "Bot 1", bot=True),
        SeatRequest("bot-2", "Bot 2", bot=True),
    ),
    max_hands=2,
    tag="tournament/T/round/1/table/0",
    first_dealer=2,
)


class ScriptedGateway(gateway_pb2_grpc.GatewayServiceServicer):
    """Fails the first ``failures`` calls with ``code``, then creates (idempotently)."""

    def __init__(self, failures=0, code=grpc.StatusCode.UNAVAILABLE, hang=None):
        self.failures, self.code, self.hang = failures, code, hang
        self.requests: list[gateway_pb2.CreateTableRequest] = []
        self.callers: list[str] = []  # the workload each call's certificate named
        self.lock = threading.Lock()

    def CreateTable(self, request, context):
        with self.lock:
            self.requests.append(request)
            self.callers.append(caller_workload(context))
            n = len(self.requests)
        if self.hang is not None:
            self.hang.wait(5)
        if n <= self.failures:
            context.abort(self.code, f"scripted failure {n}")
        return gateway_pb2.CreateTableResponse(
            table_id=f"tbl-{request.request_id}", seat_tokens=["tok0", "tok1"], gateway_address=""
        )


@pytest.fixture
def gateway():
    """Start a scripted GatewayService on a loopback port (the shared test server bootstrap)."""
    with contextlib.ExitStack() as stack:

        def start(servicer: ScriptedGateway) -> str:
            spec = ServiceSpec(
                name="gateway",
                default_port=0,
                default_metrics_port=0,
                add_to_server=lambda server, _cfg: (
                    gateway_pb2_grpc.add_GatewayServiceServicer_to_server(servicer, server)
                ),
                service_names=["mahjong.gateway.v1.GatewayService"],
                default_internal_port=1,  # two ports, as the gateway (the internal one: free)
            )
            server, _channel = stack.enter_context(serving(spec))
            return server.internal_address

        yield start


def allocator(address: str, **kwargs) -> GatewayAllocator:
    """Matchmaking's allocator, presenting its development certificate."""
    return GatewayAllocator(address, tls=files_of("matchmaking"), **kwargs)


def test_request_follows_the_contract():
    msg = create_table_request(REQUEST)
    assert msg.request_id == "tournament-T-r1-t0"
    assert msg.ruleset == common_pb2.RulesetRef(name="shanghai-classic")
    assert msg.stake == 4 and msg.max_hands == 2
    assert msg.tag == "tournament/T/round/1/table/0"
    assert msg.first_dealer == common_pb2.SEAT_2
    assert [(s.player_id, s.display_name, s.bot) for s in msg.seats] == [
        ("p-1", "Alice", False),
        ("p-2", "Bob", False),
        ("bot-1", "Bot 1", True),
        ("bot-2", "Bot 2", True),
    ]
    random_dealer = TableRequest("r", "shanghai-qiaoma", 1, REQUEST.seats)
    assert create_table_request(random_dealer).first_dealer == common_pb2.SEAT_UNSPECIFIED


def test_allocation_with_tokens_padded_for_bot_seats(gateway):
    servicer = ScriptedGateway()
    address = gateway(servicer)
    alloc = allocator(address, timeout=2)
    table = alloc.create_table(REQUEST)
    alloc.close()
    assert servicer.callers == ["matchmaking"]  # the gateway knows the table is matchmaking's
    assert table.table_id == "tbl-tournament-T-r1-t0"
    assert table.seat_tokens == ("tok0", "tok1", "", "")
    assert table.gateway_address == address  # the gateway did not name another


def test_unavailable_is_retried_with_the_same_request_id(gateway):
    servicer = ScriptedGateway(failures=2)
    alloc = allocator(gateway(servicer), timeout=2, attempts=3, backoff=0.01)
    assert alloc.create_table(REQUEST).table_id == "tbl-tournament-T-r1-t0"
    alloc.close()
    assert len(servicer.requests) == 3
    assert {r.request_id for r in servicer.requests} == {"tournament-T-r1-t0"}


@pytest.mark.parametrize(
    "code", [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION]
)
def test_a_refusal_is_not_retried_and_becomes_table_refused(gateway, code):
    """The gateway refused what the request asks: asking again is refused again, so the
    caller fails what wanted the table instead of retrying every tick."""
    servicer = ScriptedGateway(failures=5, code=code)
    alloc = allocator(gateway(servicer), timeout=2, attempts=3, backoff=0.01)
    with pytest.raises(TableRefused) as err:
        alloc.create_table(REQUEST)
    alloc.close()
    assert code.name in err.value.message
    assert err.value.reason == "TABLE_REFUSED"
    assert err.value.details["gateway_code"] == code.name
    assert len(servicer.requests) == 1


def test_a_refusal_of_who_calls_is_retried_later(gateway):
    """PERMISSION_DENIED says nothing of the table (a certificate or token to fix): the
    table stays pending, Unavailable."""
    servicer = ScriptedGateway(failures=5, code=grpc.StatusCode.PERMISSION_DENIED)
    alloc = allocator(gateway(servicer), timeout=2, attempts=3, backoff=0.01)
    with pytest.raises(Unavailable):
        alloc.create_table(REQUEST)
    alloc.close()
    assert len(servicer.requests) == 1


def test_every_call_carries_a_deadline(gateway):
    hang = threading.Event()
    servicer = ScriptedGateway(hang=hang)
    alloc = allocator(gateway(servicer), timeout=0.2, attempts=2, backoff=0.01)
    try:
        with pytest.raises(Unavailable) as err:
            alloc.create_table(REQUEST)
        assert "DEADLINE_EXCEEDED" in err.value.message
    finally:
        hang.set()
        alloc.close()


def test_no_gateway_is_unavailable():
    alloc = allocator("127.0.0.1:1", timeout=0.5, attempts=2, backoff=0.01)
    with pytest.raises(Unavailable):
        alloc.create_table(REQUEST)
    alloc.close()
