"""Rules as a real process (infra.supervisor.ServiceProcess) on free loopback ports: start-up
to SERVING, the rule vectors over the wire, a rejected hand counted by status code in /metrics,
and a clean SIGTERM shutdown."""

from __future__ import annotations

import grpc
import pytest
from mahjong.rules.v1 import rules_pb2, rules_pb2_grpc

from services.rules import convert as R
from services.rules.server import SERVICE_NAME
from shared import tiles as T
from shared.melds import Meld
from tests.conftest import load_vectors
from tests.support.probes import fetch_metrics, health_status, metric_value
from tests.support.stacks import service_process
from tests.support.tls import to_process

pytestmark = pytest.mark.integration
TIMEOUT = 10


def test_judges_vectors_counts_rejections_and_stops_cleanly(tmp_path):
    proc = service_process("rules", tmp_path, metrics=True)
    proc.start().wait_ready(timeout=30)
    try:
        with to_process(proc) as channel:  # mutual TLS, as the gateway
            assert health_status(channel, SERVICE_NAME) == "SERVING"
            stub = rules_pb2_grpc.RulesServiceStub(channel)
            waits_calls = 0
            for v in load_vectors("rules.jsonl"):
                melds = [Meld.from_json(m) for m in v["melds"]]
                hand = R.hand_to_proto(T.parse_counts(v["concealed"]), melds)
                if "waits" in v["expect"]:
                    waits_calls += 1
                    got = stub.GetWaits(rules_pb2.GetWaitsRequest(hand=hand), timeout=TIMEOUT)
                    assert T.format_tiles(k - 1 for k in got.waits) == v["expect"]["waits"]
                else:
                    got = stub.EvaluateHand(
                        rules_pb2.EvaluateHandRequest(hand=hand), timeout=TIMEOUT
                    )
                    assert got.winning == (v["expect"]["hand"] is not None)

            bad = R.hand_to_proto(T.parse_counts("11111m23456789p"))
            with pytest.raises(grpc.RpcError) as info:
                stub.GetWaits(rules_pb2.GetWaitsRequest(hand=bad), timeout=TIMEOUT)
            assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT

            metrics = fetch_metrics(proc.ports.metrics)
            ok = metric_value(
                metrics, "grpc_server_handled_total", grpc_method="GetWaits", grpc_code="OK"
            )
            rejected = metric_value(
                metrics,
                "grpc_server_handled_total",
                grpc_method="GetWaits",
                grpc_code="INVALID_ARGUMENT",
            )
            assert (ok, rejected) == (waits_calls, 1)
    finally:
        assert proc.stop() == 0
