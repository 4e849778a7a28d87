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

# The HTTP port of services that browsers call (Connect and gRPC-Web, and the web table).
WEB_PORTS: dict[str, int] = {"gateway": 8054}

SERVICE_ORDER = list(DEFAULT_PORTS)


def default_address(service: str) -> str:
    """Where a caller finds ``service``: ``MAHJONG_<SERVICE>_ADDR`` or its loopback default."""
    env = os.environ.get(f"MAHJONG_{service.upper()}_ADDR")
    return env or f"127.0.0.1:{DEFAULT_PORTS[service][0]}"
