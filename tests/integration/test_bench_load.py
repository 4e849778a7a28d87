"""The capacity bench's own parts (tests/bench): the transport floor serves what the
human-paced seats expect, so its figures are of acts that were played, not of refusals; the
browser seats (tests/bench/web_seat_load.py) play real tables over Connect on the gateway's web
port (HTTPS, as the bench runs it): their streams carry the events, their Acts are taken, the
page's GetTableState calls answered, nothing refused (a real local stack, LocalStack)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.interceptor import internal_metadata
from tests.bench.bench_gateway_capacity import WEB_PORT_FLAGS, WEB_SEATS, transport_floor
from tests.support.stacks import local_stack
from tests.support.tls import as_player, as_workload

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_the_transport_floor_plays_every_seats_answer():
    r = transport_floor(2, 2.0, "pool+calls")  # a worker's calls to a server beside, then the act
    # 2 tables, a turn each about every second: every act accepted, every stream kept.
    assert r["acts"] >= 2, r
    assert r["refused"] == {} and r["stream_errors"] == 0, r
    # each act reaches the table's four streams as one message of two events
    assert r["messages"] >= 4 * r["acts"] - 8 and r["events"] == 2 * r["messages"], r
    assert r["gateway_ms_per_act"] > 0


def test_the_transport_floor_refuses_an_act_out_of_turn():
    floor = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.transport_floor", "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        served = json.loads(floor.stdout.readline())
        table_id, tokens = served["tables"][0]
        with as_player(served["address"]) as channel:
            stub = gateway_pb2_grpc.GatewayServiceStub(channel)
            act = pb.Action(discard=pb.Discard(tile=5))
            with pytest.raises(grpc.RpcError) as refused:  # seat 2's turn is not first
                stub.Act(pb.ActRequest(table_id=table_id, seat_token=tokens[1], action=act))
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            done = stub.Act(pb.ActRequest(table_id=table_id, seat_token=tokens[0], action=act))
            assert done.sequence == 2
    finally:
        floor.stdin.close()
        floor.wait(timeout=30)


@pytest.fixture(scope="module")
def stack():
    # the bench's timers and web port: nobody times out, the seats' answers move the tables
    timers = ["--discard-ms", "60000", "--claim-ms", "60000", "--between-hands-ms", "1000"]
    with local_stack(extra_args={"gateway": timers + WEB_PORT_FLAGS}) as st:
        yield st


def test_browser_seats_play_tables_over_connect_without_errors(stack, tmp_path):
    channel = as_workload(stack.internal_address("gateway"), "gateway", "matchmaking")
    creator = gateway_pb2_grpc.GatewayServiceStub(channel)
    tables = []
    for _ in range(2):  # as matchmaking makes them: four people, the internal token
        t = creator.CreateTable(
            pb.CreateTableRequest(
                request_id=uuid.uuid4().hex,
                stake=1,
                seats=[pb.SeatAssignment(player_id=f"p{s}") for s in range(4)],
            ),
            metadata=internal_metadata(stack.internal_token),
            timeout=30,
        )
        tables.append([t.table_id, list(t.seat_tokens)])
    channel.close()
    path = tmp_path / "tables.json"
    path.write_text(json.dumps(tables))
    url = f"https://127.0.0.1:{stack.web_ports['gateway']}"
    out = subprocess.run(
        [sys.executable, "-m", WEB_SEATS, url, str(path), "4"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    ready, last = out.stdout.splitlines()
    assert json.loads(ready) == {"ready": True}
    r = json.loads(last)
    # 8 seats, a second's thought per prompt, 4 s counted: the tables moved
    assert r["acts"] >= 4, r
    assert r["messages"] > 0 and r["events"] >= r["messages"], r
    # the page's view comes with each batch (with_view): no GetTableState after its events
    assert r["stream_views"] == r["messages"] and r["views"] == 0, r
    assert (r["refused"], r["view_refused"], r["stream_errors"]) == ({}, {}, 0), r
    assert 0 < r["p50_ms"] <= r["p99_ms"] < 5000, r
