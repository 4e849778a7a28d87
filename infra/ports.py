"""The ports a service process asks for and the ones it got.

A port flag takes a number or ``auto``: a port the OS picks when the server binds it. On the
main ports (``--port``, ``--internal-port``) 0 means the same; on the optional ones
(``--metrics-port``, ``--health-port``, the gateway's ``--web-port``) 0 means off, so ``auto`` is
how to ask for one.

``mahjong serve NAME --port-file PATH`` writes :class:`ServedPorts` to ``PATH`` once every port
of the process is bound (and it answers health SERVING): a small JSON document, written to a
temporary file and renamed, so a reader sees all of it or nothing. That is how a supervisor
(:class:`infra.supervisor.ServiceProcess`) learns where a child it started on ``auto`` ports
listens, without picking a port up front that something else could take before the child binds
it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

AUTO = "auto"
# A port flag's ``auto``, as the int it is parsed to (never a port number).
AUTO_PORT = -1
PORT_FILE_TYPE = "mahjong.served-ports"
PORT_FILE_VERSION = 1


def port_value(text: str) -> int:
    """A port flag's value (argparse ``type``): 0-65535, or ``auto`` (:data:`AUTO_PORT`)."""
    if text.strip().lower() == AUTO:
        return AUTO_PORT
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number or {AUTO}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535) or {AUTO}")
    return port


def port_flag(port: int) -> str:
    """A port as a flag's value (:data:`AUTO_PORT` as ``auto``)."""
    return AUTO if port == AUTO_PORT else str(port)


def listen_port(port: int) -> int:
    """The port to bind for a flag's value: :data:`AUTO_PORT` is 0 (the OS picks)."""
    return 0 if port == AUTO_PORT else port


class PortFileError(ValueError):
    """A port file that is not a whole :class:`ServedPorts` document."""


@dataclass(frozen=True)
class ServedPorts:
    """Where a service process listens, as its port file says: its main gRPC port, and (0 when
    not open) the mutual-TLS internal port of a service players call too, the plaintext health
    port, the /metrics port and the gateway's web port. ``services`` are the full names it
    answers health for (``mahjong.wall.v1.WallService``); ``pid`` is the process's."""

    service: str
    pid: int
    host: str
    grpc: int
    internal: int = 0
    health: int = 0
    metrics: int = 0
    web: int = 0
    services: tuple[str, ...] = field(default_factory=tuple)

    @property
    def reachable_host(self) -> str:
        """Where a client on this machine reaches it: its host, loopback for a wildcard one."""
        wildcard = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "[::1]", "[::]": "[::1]"}
        return wildcard.get(self.host, self.host)

    @property
    def address(self) -> str:
        """The main gRPC port's address."""
        return f"{self.reachable_host}:{self.grpc}"

    @property
    def internal_address(self) -> str:
        """Where the deployment's services call it: its internal port, or its only one."""
        return f"{self.reachable_host}:{self.internal or self.grpc}"

    def to_json(self) -> str:
        data = asdict(self)
        ports = {k: data.pop(k) for k in ("grpc", "internal", "health", "metrics", "web")}
        return json.dumps(
            {
                "type": PORT_FILE_TYPE,
                "version": PORT_FILE_VERSION,
                **data,
                "services": list(self.services),
                "ports": {k: v for k, v in ports.items() if v},
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str) -> ServedPorts:
        try:
            data = json.loads(text)
            if data.get("type") != PORT_FILE_TYPE or data.get("version") != PORT_FILE_VERSION:
                raise PortFileError(
                    f"not a {PORT_FILE_TYPE} document of version {PORT_FILE_VERSION}: "
                    f"{data.get('type')!r} {data.get('version')!r}"
                )
            ports = data["ports"]
            return cls(
                service=str(data["service"]),
                pid=int(data["pid"]),
                host=str(data["host"]),
                grpc=int(ports["grpc"]),
                **{k: int(ports.get(k, 0)) for k in ("internal", "health", "metrics", "web")},
                services=tuple(str(s) for s in data.get("services", ())),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            if isinstance(exc, PortFileError):
                raise
            raise PortFileError(f"not a port file: {exc!r}") from None

    def write(self, path: str | Path) -> None:
        """Write the document to ``path`` whole: to a temporary file beside it, then renamed."""
        write_atomically(Path(path), self.to_json() + "\n")

    @classmethod
    def read(cls, path: str | Path) -> ServedPorts | None:
        """The document at ``path``, None while there is none; PortFileError if it is not one."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        return cls.from_json(text)


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so a reader sees the old content or the new, never part
    of it: written to a temporary file in the same directory, flushed, then renamed over it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
