"""Gateway stacks for tests: the gateway with the services it calls (wall, rules, scoring),
either served in-process on loopback ports (servicer tests) or as real processes
(``shared.supervisor.ServiceProcess``, integration and end-to-end tests)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
from mahjong.gateway.v1 import gateway_pb2_grpc

from services.gateway.server import SPEC as GATEWAY
from services.rules.server import SPEC as RULES
from services.scoring.server import SPEC as SCORING
from services.wall.server import SPEC as WALL
from shared.server import RunningServer
from tests.support.grpc_server import serving

BACKENDS = ("wall", "rules", "scoring")  # the services the gateway calls


@dataclass
class InProcessGateway:
    """A gateway served in-process, with its server (for its TableManager) and a stub."""

    server: RunningServer
    channel: grpc.Channel
    stub: gateway_pb2_grpc.GatewayServiceStub

    @property
    def store(self):
        """The gateway's store (its tables' event logs, the outbox of reports)."""
        return self.server.resource.manager.store


@contextlib.contextmanager
def inprocess_gateway(internal_token: str = "", **gateway_extra) -> Iterator[InProcessGateway]:
    """Wall, rules and scoring served in-process on loopback ports, then a gateway calling them
    with the service flags ``gateway_extra`` (``seat_secret=…``, ``discard_ms=…``); every
    server stops when the block ends."""
    with contextlib.ExitStack() as stack:
        addrs = {}
        for name, spec in (("wall", WALL), ("rules", RULES), ("scoring", SCORING)):
            server, _ = stack.enter_context(serving(spec))
            addrs[f"{name}_addr"] = server.address
        server, channel = stack.enter_context(
            serving(GATEWAY, internal_token=internal_token, extra={**addrs, **gateway_extra})
        )
        yield InProcessGateway(server, channel, gateway_pb2_grpc.GatewayServiceStub(channel))
