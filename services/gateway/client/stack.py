"""A private local stack: every service the gateway needs, as real processes on ports the OS
picks (each names them in its port file: shared.ports).

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

from shared.addresses import WEB_PORTS
from shared.ports import AUTO_PORT
from shared.supervisor import ServiceProcess, run_token, web_flags

GATEWAY_STACK = ("wall", "rules", "scoring", "gateway")


class LocalStack:
    """Start ``services`` (in dependency order) on loopback ports the OS picks, each once the
    ones it calls answer SERVING (it is given their addresses); a context manager."""

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
    def web_ports(self) -> dict[str, int]:
        """The web port of each service that opened one (the gateway)."""
        return {n: p.ports.web for n, p in self.procs.items() if p.served and p.served.web}

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

        def calls(name: str) -> list[str]:
            return [d for d in getattr(available[name], "CALLS", ()) if d in self.services]

        pending = list(self.services)
        try:
            while pending:
                # Those whose callees are up start together (they are given their addresses);
                # in a cycle, the first one left starts with the addresses known so far.
                wave = [n for n in pending if all(d in self.procs for d in calls(n))]
                wave = wave or pending[:1]
                for name in wave:
                    pending.remove(name)
                    self.procs[name] = self._process(name, calls(name)).start()
                for name in wave:
                    self.procs[name].wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _process(self, name: str, calls: list[str]) -> ServiceProcess:
        """Service ``name`` (not started), calling those of ``calls`` that are up."""
        flags = [
            f
            for dep in calls
            if dep in self.procs
            for f in (f"--{dep}-addr", self.procs[dep].internal_address)
        ]
        if name in WEB_PORTS:
            flags += web_flags(AUTO_PORT)
        return ServiceProcess(
            name,
            0,
            AUTO_PORT,
            f"sqlite:///{self.workdir / f'{name}.db'}",
            [*flags, *self.extra_args.get(name, [])],
            env=self.env,
            log_path=self.workdir / f"{name}.log",
        )

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
