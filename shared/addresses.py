"""Default loopback ports of every service (gRPC, Prometheus metrics), in start order.

``make run`` starts them all on these ports; each can be moved with ``--port`` /
``MAHJONG_<SERVICE>_PORT``, and callers find each other with ``--<service>-addr`` /
``MAHJONG_<SERVICE>_ADDR``.
"""

from __future__ import annotations

import os

DEFAULT_PORTS: dict[str, tuple[int, int]] = {
    "wall": (50051, 9151),
    "rules": (50052, 9152),
    "scoring": (50053, 9153),
    "matchmaking": (50055, 9155),
    "gateway": (50054, 9154),
}

# The mutual-TLS port of services that players call too (their --port serves players with server
# TLS; the deployment's services call them here).
INTERNAL_PORTS: dict[str, int] = {"gateway": 50056, "matchmaking": 50057}

# The HTTP port of services that browsers call (Connect and gRPC-Web, and the web table).
WEB_PORTS: dict[str, int] = {"gateway": 8054}

SERVICE_ORDER = list(DEFAULT_PORTS)


def default_address(service: str) -> str:
    """Where a caller finds ``service``: ``MAHJONG_<SERVICE>_ADDR`` or its loopback default."""
    env = os.environ.get(f"MAHJONG_{service.upper()}_ADDR")
    return env or f"127.0.0.1:{DEFAULT_PORTS[service][0]}"


def default_internal_address(service: str) -> str:
    """Where another service of the deployment calls ``service``: ``MAHJONG_<SERVICE>_ADDR``, or
    its mutual-TLS port on loopback (its main port when it has no other)."""
    env = os.environ.get(f"MAHJONG_{service.upper()}_ADDR")
    port = INTERNAL_PORTS.get(service, DEFAULT_PORTS[service][0])
    return env or f"127.0.0.1:{port}"


# What a client of the deployment's servers sets on its channels: a ping every 30 s (no more
# often than the servers accept) that must be answered within 10 s, so a stream on a dead
# connection ends and the client reconnects instead of waiting forever.
CLIENT_KEEPALIVE_OPTIONS = (
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.ping_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
)
