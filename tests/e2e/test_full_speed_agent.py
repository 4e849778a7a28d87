"""An agent that answers every prompt at once is never refused for flood control (issue 30,
item 3): a protos-only client (tests/e2e/full_speed.py) plays one seat against three server bots
that think for 0 ms, with the gateway's default budget (20 calls a second, bursts of 40) — on
one gateway (memory store), and on two gateways on PostgreSQL with every call of the agent sent
to the replica that does NOT run its table (forwarded, its stream relayed).

``FULL_SPEED_HANDS`` hands per case here (the full 200 of the issue: ``python -m tests.bench
full_speed_agent``)."""

from __future__ import annotations

import os

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.supervisor import stop_all
from tests.e2e.full_speed import one_bot_table, play_at_full_speed
from tests.service.gateway.test_flood_answers import BURST, Seat0, _code
from tests.support.stacks import backend_flags, service_process, start_services
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

# 12 hands, some 260 answers: the code before the exemptions was refused after 60 (one gateway)
# and 140 (through the other replica)
HANDS = int(os.environ.get("FULL_SPEED_HANDS", "12"))


@pytest.fixture(scope="module")
def backends(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("full-speed")
    procs: dict = {}
    try:
        start_services(procs, tmp, ("wall", "rules", "scoring"))
        for p in procs.values():
            p.wait_ready()
        yield tmp, procs
    finally:
        stop_all(reversed(list(procs.values())))


def gateway_flags(procs, name: str) -> list[str]:
    return [
        *backend_flags(procs),
        "--seat-secret",
        "full-speed",
        "--replica-id",
        name,
        "--bot-delay-ms",
        "0",
        "--discard-ms",
        "600000",
        "--claim-ms",
        "600000",
        # the default flood control: 20 calls a second, bursts of 40
    ]


def _assert_played(run, hands: int) -> None:
    assert run.finished, run
    assert run.hands == hands, run
    assert run.answers > 10 * hands, run  # it did answer at full speed
    assert not run.refusals, run  # no RESOURCE_EXHAUSTED, and nothing else refused either
    rate = run.answers / run.seconds
    print(f"{hands} hands, {run.answers} answers in {run.seconds:.1f} s ({rate:.0f}/s)")


def test_an_agent_at_full_speed_on_one_gateway_is_never_refused(backends):
    tmp, procs = backends
    gw = service_process(
        "gateway", tmp, extra=gateway_flags(procs, "solo"), log_name="gateway-solo"
    ).start()
    try:
        gw.wait_ready()
        channel = as_player(gw.address)
        stub = gateway_pb2_grpc.GatewayServiceStub(channel)
        t = one_bot_table(stub, HANDS)
        run = play_at_full_speed(stub, t.table_id, t.seat_tokens[0])
        channel.close()
    finally:
        gw.stop()
    _assert_played(run, HANDS)
    assert run.answers / run.seconds > 20  # faster than the budget: the exemption was needed


def test_an_agent_at_full_speed_through_the_other_replica_is_never_refused(backends, postgres_url):
    tmp, procs = backends
    a = service_process(
        "gateway", tmp, store_url=postgres_url, extra=gateway_flags(procs, "pg-a"), log_name="pg-a"
    ).start()
    b = service_process(
        "gateway", tmp, store_url=postgres_url, extra=gateway_flags(procs, "pg-b"), log_name="pg-b"
    ).start()
    try:
        a.wait_ready()
        b.wait_ready()
        channels = [as_player(a.address), as_player(b.address)]
        on_a, on_b = (gateway_pb2_grpc.GatewayServiceStub(c) for c in channels)
        t = one_bot_table(on_a, HANDS)  # replica A runs it
        run = play_at_full_speed(on_b, t.table_id, t.seat_tokens[0])  # B forwards every call
        for c in channels:
            c.close()
    finally:
        stop_all([b, a])
    _assert_played(run, HANDS)


@pytest.mark.parametrize("model", ["asyncio", "threads"])
def test_a_cheat_through_the_other_replica_is_refused_by_the_owner(backends, postgres_url, model):
    """B does not run the table and holds no prompt: past B's budget an Act or GetTableState
    goes on to A, whose flood control counts it (refused once A's budget is spent too) unless
    it answers the open prompt."""
    tmp, procs = backends
    tight = ["--seat-calls-per-second", "0.2", "--seat-call-burst", str(BURST)]
    tight += ["--server-model", model]
    a, b = (
        service_process(
            "gateway",
            tmp,
            store_url=postgres_url,
            extra=[*gateway_flags(procs, name), *tight],
            log_name=f"tight-{name}",
        ).start()
        for name in ("a", "b")
    )
    try:
        a.wait_ready()
        b.wait_ready()
        channels = [as_player(a.address), as_player(b.address)]
        on_a, on_b = (gateway_pb2_grpc.GatewayServiceStub(c) for c in channels)
        t = one_bot_table(on_a, 1)  # replica A runs it
        me = Seat0(on_b, t)  # every call of seat 0 goes to B
        p1 = me.next_prompt(pb.PROMPT_KIND_OWN_TURN)
        # B's budget, then A's (B sends GetTableState on to A once its own is spent)
        assert me.spend_budget() >= BURST
        ex = grpc.StatusCode.RESOURCE_EXHAUSTED
        hint = pb.GetHintRequest(table_id=t.table_id, seat_token=me.token)
        assert _code(on_b.GetHint, hint) == ex  # never the server's asking: refused at B
        assert _code(on_b.Act, me.act(p1, last_sequence=p1.sequence - 1)) == ex  # stale
        assert _code(on_b.Act, me.act(p1, seat=common_pb2.SEAT_2)) == ex  # another seat
        honest = me.act(p1)
        assert _code(on_b.Act, honest) == grpc.StatusCode.OK  # forwarded, free at A
        assert _code(on_b.Act, honest) == ex  # a replay of an answered prompt: counted
        for c in channels:
            c.close()
    finally:
        stop_all([b, a])
