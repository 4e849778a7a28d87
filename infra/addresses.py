"""Default loopback ports of every service (gRPC, Prometheus metrics), in start order.

``make run`` starts them all on these ports; each can be moved with ``--port`` /
``MAHJONG_<SERVICE>_PORT``, and callers find each other with ``--<service>-addr`` /
``MAHJONG_<SERVICE>_ADDR``: an address, or an address file (``@PATH``, below) that says where the
service is now.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from infra.ports import write_atomically

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
WEB_PORTS: dict[str, int] = {"gateway": 8054, "matchmaking": 8055}

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


# --- address files ----------------------------------------------------------------------------
# An address given as ``@PATH`` (``--wall-addr @/run/mahjong/wall.addr``) is an address file: the
# address — any gRPC target, such as ``ipv4:127.0.0.1:5001,127.0.0.1:5002`` — is the file's
# content, looked up on every call and read again whenever the file changes (a new channel is
# made; :class:`infra.tls.ReloadingChannel`). So a caller can be started before the services it
# calls are, and follows them when they move: a supervisor that starts replicas on ports the OS
# picks (infra.ports) writes each service's file once its replicas are up, and again when one
# stops or comes back elsewhere (tests/support/cluster.py), as DNS would in a deployment.
ADDRESS_FILE_PREFIX = "@"


def is_address_file(address: str) -> bool:
    """Whether ``address`` names an address file (``@PATH``) rather than being an address."""
    return address.startswith(ADDRESS_FILE_PREFIX)


def address_file_flag(path: str | os.PathLike[str]) -> str:
    """The address-flag value that names the address file at ``path``."""
    return f"{ADDRESS_FILE_PREFIX}{os.fspath(path)}"


def write_address_file(path: str | os.PathLike[str], addresses: list[str]) -> str:
    """Write the target naming ``addresses`` (``ipv4:A,B`` for host:port pairs, one address as
    it is, none: an empty file, calls fail UNAVAILABLE) to the address file ``path``, whole (a
    temporary file renamed over it); returns it."""
    target = "ipv4:" + ",".join(addresses) if len(addresses) > 1 else "".join(addresses)
    write_atomically(Path(path), target + "\n")
    return target


class AddressFile:
    """The address in the file ``path`` (an address flag's ``@PATH``): "" until the file is
    first written, and while it is empty (no server up now). Each :meth:`refresh` looks at the
    file (a ``stat``, no read unless it changed), so a call made after the file was replaced
    goes to the new address. A file that is removed leaves the last address known."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.address = ""
        self._stamp: tuple[int, int, int] | None = None
        self._lock = threading.Lock()
        self.refresh()

    @classmethod
    def of(cls, address: str) -> AddressFile | None:
        """The address file an address flag names, None for a plain address."""
        return cls(address[len(ADDRESS_FILE_PREFIX) :]) if is_address_file(address) else None

    def refresh(self) -> bool:
        """Read the file again if it changed; whether the address did."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return False
        with self._lock:
            if stamp == self._stamp:
                return False
            try:
                text = self.path.read_text(encoding="utf-8").strip()
            except OSError:
                return False
            self._stamp = stamp
            if text == self.address:
                return False
            self.address = text
            return True
