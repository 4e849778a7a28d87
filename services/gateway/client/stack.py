"""A private local stack: every service the gateway needs, as real processes on free ports.

``mahjong play --local`` uses it so a person can play without ``make run``; the client tests
(terminal, Node.js) use it to play against the real services. Each service runs as
``python -m services.cli serve NAME`` (:class:`shared.supervisor.ServiceProcess`) with its own
SQLite store in a temporary directory and ``--<dep>-addr`` flags for the services it calls
(their internal, mutual-TLS ports: each child presents its development certificate, and
:attr:`LocalStack.gateway` is the gateway's public port, which players reach over server TLS).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from shared.addresses import INTERNAL_PORTS, WEB_PORTS
from shared.supervisor import ServiceProcess, free_port, run_token, web_flags

GATEWAY_STACK = ("wall", "rules", "scoring", "gateway")


class LocalStack:
    """Start ``services`` (in dependency order) on free loopback ports; a context manager."""

    def __init__(
        self,
        services: Sequence[str] = GATEWAY_STACK,
        *,
        extra_args: dict[str, list[str]] | None = None,
        workdir: str | Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.services = tuple(services)
        self.extra_args = extra_args or {}
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="mahjong-stack-")
        self.workdir = Path(workdir or self._tmp.name)  # type: ignore[union-attr]
        self.env = env or {}
        self.procs: dict[str, ServiceProcess] = {}
        self.web_ports: dict[str, int] = {}

    def address(self, name: str) -> str:
        """Service ``name``'s public port (a player's; TLS unless the stack runs plaintext)."""
        return self.procs[name].address

    def internal_address(self, name: str) -> str:
        """Service ``name``'s mutual-TLS port, where the other services call it."""
        return self.procs[name].internal_address

    @property
    def internal_token(self) -> str:
        """The token the stack's services share for internal calls (RecordHand …)."""
        return self.env.get("MAHJONG_INTERNAL_TOKEN") or run_token()

    @property
    def gateway(self) -> str:
        return self.address("gateway")

    @property
    def web(self) -> str:
        """The gateway's web port (Connect, gRPC-Web and the web table), as a URL."""
        return f"http://127.0.0.1:{self.web_ports['gateway']}"

    def start(self, timeout: float = 60.0) -> LocalStack:
        from services.cli import servable

        available = servable()
        missing = [n for n in self.services if n not in available]
        if missing:
            raise RuntimeError(f"services without a server: {', '.join(missing)}")
        try:
            for name in self.services:
                wants = getattr(available[name], "CALLS", ())
                flags = [
                    f
                    for dep in wants
                    if dep in self.procs
                    for f in (f"--{dep}-addr", self.procs[dep].internal_address)
                ]
                if name in WEB_PORTS:
                    self.web_ports[name] = free_port()
                    flags += web_flags(self.web_ports[name])
                proc = ServiceProcess(
                    name,
                    free_port(),
                    free_port(),
                    f"sqlite:///{self.workdir / f'{name}.db'}",
                    [*flags, *self.extra_args.get(name, [])],
                    env=self.env,
                    log_path=self.workdir / f"{name}.log",
                    internal_port=free_port() if name in INTERNAL_PORTS else 0,
                )
                self.procs[name] = proc.start()
            for name, proc in self.procs.items():
                try:
                    proc.wait_ready(timeout)
                except (RuntimeError, TimeoutError) as exc:
                    raise RuntimeError(f"{exc}; its log ends:\n{self.log_tail(name)}") from exc
        except BaseException:
            self.stop()
            raise
        return self

    def log_tail(self, name: str, lines: int = 40) -> str:
        path = self.workdir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        for proc in reversed(list(self.procs.values())):
            proc.stop()
        self.procs.clear()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
