"""The real stack for end-to-end tests: wall, rules, scoring, matchmaking and gateway as
processes on loopback ports the OS picks (tests.support.stacks), and a second gateway with slow
timers on the same backends. The services call each other's mutual-TLS ports (matchmaking the
gateway's through its address file, tests/support/address_book.py, as it starts first); the
tests call the public ones as players (server TLS)."""

from __future__ import annotations

import pytest
from mahjong.gateway.v1 import gateway_pb2_grpc
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc

from infra.request_ids import with_request_ids
from infra.supervisor import ServiceProcess, stop_all
from tests.support.address_book import AddressBook
from tests.support.stacks import backend_flags, service_process, start_services
from tests.support.tls import as_player


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stack")
    procs: dict[str, ServiceProcess] = {}
    book = AddressBook(tmp / "addresses")
    try:
        start_services(procs, tmp, ("wall", "rules", "scoring"))
        procs["matchmaking"] = service_process(
            "matchmaking", tmp, extra=["--gateway-addr", book.service_target("gateway")]
        ).start()
        for p in procs.values():
            p.wait_ready()
        gw_store = f"sqlite:///{tmp / 'gateway.db'}"
        extra = [
            *backend_flags(procs),
            "--discard-ms",
            "30",
            "--claim-ms",
            "30",
            "--auto-play-delay-ms",
            "0",
            "--seat-secret",
            "e2e-secret",
            "--matchmaking-addr",
            procs["matchmaking"].internal_address,  # mutual TLS, the gateway's certificate
        ]
        gw = service_process("gateway", tmp, store_url=gw_store, extra=extra).start()
        procs["gateway"] = gw
        book.list("gateway", gw.wait_ready())
        channel = as_player(gw.address)
        slow = service_process(
            "gateway",
            tmp,
            store_url=f"sqlite:///{tmp / 'gateway-slow.db'}",
            extra=[
                *backend_flags(procs),
                "--seat-secret",
                "e2e-secret",
                "--bot-delay-ms",
                "0",
                "--discard-ms",
                "600000",
                "--claim-ms",
                "600000",
                # the fuzzed client calls at machine speed on purpose: no flood control here
                # (tests/service/gateway/test_hostile_clients.py tests it)
                "--seat-calls-per-second",
                "0",
            ],
            log_name="gateway-slow",
        ).start()
        procs["gateway-slow"] = slow
        slow.wait_ready()
        slow_channel = as_player(slow.address)
        mm_channel = as_player(procs["matchmaking"].address)
        yield {
            "mm": matchmaking_pb2_grpc.MatchmakingServiceStub(with_request_ids(mm_channel)),
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
        stop_all(reversed(list(procs.values())))
