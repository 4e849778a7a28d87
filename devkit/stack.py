"""A private local stack: every service the gateway needs, as real processes on ports the OS
picks (each names them in its port file: infra.ports).

``mahjong play --local`` uses it so a person can play without ``make run``; the client tests
(terminal, Node.js, the browser) use it to play against the real services.

With matchmaking (:data:`SIGNED_IN_STACK`) players sign in: the stack serves a development
issuer of its own (an ephemeral key, :attr:`LocalStack.issuer`) that matchmaking trusts, guests
are allowed, and matchmaking's web port lets the page of the gateway's web port call it (as the
issuer does). The gateway and matchmaking call each other: the gateway starts first, with an
address file naming matchmaking (written once matchmaking is up: until then its reports wait
in its outbox), so that matchmaking and the issuer can be told the page's origin.

Each service runs as ``python -m services.cli serve NAME``
(:class:`infra.supervisor.ServiceProcess`) with its own SQLite store in a temporary directory
and ``--<dep>-addr`` flags for the services it calls (their internal, mutual-TLS ports: each
child presents its development certificate, and :attr:`LocalStack.gateway` is the gateway's
public port, which players reach over server TLS).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infra.addresses import WEB_PORTS, address_file_flag, write_address_file
from infra.ports import AUTO_PORT
from infra.supervisor import (
    LOCAL_WEB_ORIGINS,
    ServiceProcess,
    page_origins,
    run_token,
    stop_all,
    web_flags,
)

GATEWAY_STACK = ("wall", "rules", "scoring", "gateway")
SIGNED_IN_STACK = (*GATEWAY_STACK, "matchmaking")


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
        self.issuer: Any = None  # the development issuer's server, with matchmaking

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

    @property
    def matchmaking(self) -> str:
        """Matchmaking's public port (players sign in there; TLS unless plaintext)."""
        return self.address("matchmaking")

    @property
    def matchmaking_web(self) -> str:
        """Matchmaking's web port (Connect and gRPC-Web), as a URL."""
        return f"http://127.0.0.1:{self.web_ports['matchmaking']}"

    @property
    def issuer_url(self) -> str:
        """The development issuer's base URL (``/token?name=NAME``)."""
        return self.issuer.base_url

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
            if "matchmaking" in pending and "gateway" in pending:
                # the gateway first (it needs matchmaking only for its reports), so that its
                # page's origin is known to matchmaking and the issuer
                pending.remove("matchmaking")
                pending.append("matchmaking")
            while pending:
                # Those whose callees are up start together (they are given their addresses);
                # in a cycle, the first one left starts with the addresses known so far.
                wave = [n for n in pending if all(d in self.procs for d in calls(n))]
                wave = wave or pending[:1]
                if "matchmaking" in wave:
                    self._serve_issuer()
                for name in wave:
                    pending.remove(name)
                    self.procs[name] = self._process(name, calls(name)).start()
                for name in wave:
                    self.procs[name].wait_ready(timeout)
                if "matchmaking" in wave:
                    write_address_file(self._mm_file, [self.internal_address("matchmaking")])
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
        if name == "gateway" and "matchmaking" in self.services and "matchmaking" not in self.procs:
            flags += ["--matchmaking-addr", address_file_flag(self._mm_file)]
        origins = LOCAL_WEB_ORIGINS
        if name == "matchmaking":
            flags += self._identity_flags()
            origins = self._page_origins()
        if name in WEB_PORTS:
            flags += web_flags(AUTO_PORT, origins)
        return ServiceProcess(
            name,
            0,
            AUTO_PORT,
            f"sqlite:///{self.workdir / f'{name}.db'}",
            [*flags, *self.extra_args.get(name, [])],
            env=self.env,
            log_path=self.workdir / f"{name}.log",
        )

    @property
    def _mm_file(self) -> Path:
        return self.workdir / "matchmaking.addr"

    def _page_origins(self) -> tuple[str, ...]:
        """Pages that may call matchmaking's web port and the issuer: the gateway's (if up)."""
        web = self.web_ports.get("gateway")
        return (*LOCAL_WEB_ORIGINS, *(page_origins(web) if web else ()))

    def _serve_issuer(self) -> None:
        from devkit.dev_issuer import DevIssuer, DevIssuerServer

        if self.issuer is None:
            self.issuer = DevIssuerServer(
                DevIssuer.ephemeral(), cors_origins=self._page_origins()
            ).start()

    def _identity_flags(self) -> list[str]:
        from services.matchmaking.domain.players.issuers import format_issuer

        # every local player joins from loopback: quick match seats them together
        local_queue = ["--queue-one-per-address", "off"]
        return ["--issuers", format_issuer(self.issuer.config()), "--allow-guests", *local_queue]

    def log_tail(self, name: str, lines: int = 40) -> str:
        path = self.workdir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        stop_all(reversed(list(self.procs.values())))
        self.procs.clear()
        if self.issuer is not None:
            self.issuer.close()
            self.issuer = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def dev_id_token(name: str, root: str = ".data/dev-issuer") -> str:
    """The development issuer's ID token for ``name`` (its key under ``root``, made on first
    use: the issuer ``make run`` serves), for ``mahjong play --sign-in`` without ``--id-token``."""
    from devkit.dev_issuer import DevIssuer

    return DevIssuer.at(Path(root)).id_token(name, name)
