"""The real stack for end-to-end tests: wall, rules, scoring and gateway as processes on free
loopback ports (shared.supervisor.ServiceProcess)."""

from __future__ import annotations

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2_grpc
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc

from shared.supervisor import ServiceProcess, free_port


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stack")
    procs: dict[str, ServiceProcess] = {}
    try:
        for name in ("wall", "rules", "scoring", "matchmaking"):
            procs[name] = ServiceProcess(
                name, free_port(), 0, "memory://", log_path=tmp / f"{name}.log"
            ).start()
        for p in procs.values():
            p.wait_ready()
        gw_store = f"sqlite:///{tmp / 'gateway.db'}"
        extra = [
            "--wall-addr",
            procs["wall"].address,
            "--rules-addr",
            procs["rules"].address,
            "--scoring-addr",
            procs["scoring"].address,
            "--discard-ms",
            "30",
            "--claim-ms",
            "30",
            "--auto-play-delay-ms",
            "0",
            "--seat-secret",
            "e2e-secret",
            "--max-workers",
            "128",  # each Subscribe stream holds a server thread
            "--matchmaking-addr",
            procs["matchmaking"].address,
        ]
        gw = ServiceProcess(
            "gateway", free_port(), 0, gw_store, extra, log_path=tmp / "gateway.log"
        ).start()
        procs["gateway"] = gw
        gw.wait_ready()
        channel = grpc.insecure_channel(gw.address)
        slow = ServiceProcess(
            "gateway",
            free_port(),
            0,
            f"sqlite:///{tmp / 'gateway-slow.db'}",
            [
                *extra[:6],
                "--seat-secret",
                "e2e-secret",
                "--bot-delay-ms",
                "0",
                "--discard-ms",
                "600000",
                "--claim-ms",
                "600000",
            ],
            log_path=tmp / "gateway-slow.log",
        ).start()
        procs["gateway-slow"] = slow
        slow.wait_ready()
        slow_channel = grpc.insecure_channel(slow.address)
        mm_channel = grpc.insecure_channel(procs["matchmaking"].address)
        yield {
            "mm": matchmaking_pb2_grpc.MatchmakingServiceStub(mm_channel),
            "slow_stub": gateway_pb2_grpc.GatewayServiceStub(slow_channel),
            "slow_db": tmp / "gateway-slow.db",
            "procs": procs,
            "stub": gateway_pb2_grpc.GatewayServiceStub(channel),
            "db": tmp / "gateway.db",
            "tmp": tmp,
        }
        channel.close()
        slow_channel.close()
        mm_channel.close()
    finally:
        for p in reversed(list(procs.values())):
            p.stop()
