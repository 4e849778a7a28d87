"""The capacity bench's own parts (tests/bench): the transport floor serves what the
human-paced seats expect, so its figures are of acts that were played, not of refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from tests.bench.bench_gateway_capacity import transport_floor
from tests.support.tls import as_player

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
