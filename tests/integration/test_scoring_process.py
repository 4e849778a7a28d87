"""Scoring as a real process (infra.supervisor.ServiceProcess) on free loopback ports: start-up
to SERVING, a settlement, a rejected request counted by status code in /metrics, and a clean
SIGTERM shutdown."""

from __future__ import annotations

import grpc
import pytest
from mahjong.scoring.v1 import scoring_pb2_grpc

from services.scoring import convert as S
from services.scoring.vector_format import win_input
from tests.conftest import load_vectors
from tests.support.probes import fetch_metrics, health_status, metric_value
from tests.support.stacks import service_process
from tests.support.tls import to_process

pytestmark = pytest.mark.integration
TIMEOUT = 10


def test_settles_counts_rejections_and_stops_cleanly(tmp_path):
    proc = service_process("scoring", tmp_path, metrics=True)
    proc.start().wait_ready(timeout=30)
    try:
        with to_process(proc) as channel:  # mutual TLS, as the gateway
            assert health_status(channel) == "SERVING"
            stub = scoring_pb2_grpc.ScoringServiceStub(channel)
            vector = load_vectors("scoring.jsonl")[0]
            request = S.win_input_to_proto(win_input(vector), vector["ruleset"])
            settlement = stub.SettleWin(request, timeout=TIMEOUT).settlement
            assert list(settlement.payments) == vector["expect"]["payments"]

            request.context.stake = -1
            with pytest.raises(grpc.RpcError) as info:
                stub.SettleWin(request, timeout=TIMEOUT)
            assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT

            metrics = fetch_metrics(proc.ports.metrics)
            for code in ("OK", "INVALID_ARGUMENT"):
                value = metric_value(
                    metrics, "grpc_server_handled_total", grpc_method="SettleWin", grpc_code=code
                )
                assert value == 1, code
    finally:
        assert proc.stop() == 0
