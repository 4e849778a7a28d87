"""A server's configuration: what a service tells the bootstrap about itself
(:class:`ServiceSpec`) and the settings it runs with (:class:`Config`), read from flags, then
the environment (``MAHJONG_<SERVICE>_<FLAG>``, then ``MAHJONG_<FLAG>``), then defaults.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import grpc

from infra.ports import port_value
from infra.store import DEFAULT_POOL_SIZE
from infra.tls import DEFAULT_TRUST_DOMAIN, default_tls_dir


@dataclass
class Config:
    """A server's settings. Ports are numbers or :data:`infra.ports.AUTO_PORT` (``auto``: the
    OS picks); once the server is bound, the config its service is given names the ports it
    got."""

    host: str = "127.0.0.1"
    port: int = 0  # 0 (or AUTO_PORT) = a port the OS picks
    metrics_port: int = 0  # 0 = no metrics HTTP server
    store_url: str = "memory://"
    store_pool_size: int = DEFAULT_POOL_SIZE  # most connections to a PostgreSQL store
    log_level: str = "info"
    max_workers: int = 16
    drain_seconds: float = 1.0
    grace_seconds: float = 5.0
    internal_token: str = ""  # a second factor for internal methods ("" = none)
    # Transport security (infra/tls.py): the directory of this workload's tls.crt, tls.key and
    # ca.crt, or plaintext with ``insecure`` (tests of that path only); neither set refuses to
    # start. Callers are identified by their certificates' SPIFFE IDs in ``trust_domain``.
    tls_dir: str = ""
    insecure: bool = False
    trust_domain: str = DEFAULT_TRUST_DOMAIN
    # The mutual-TLS port of a service that players call too (0 = any free port; ignored by a
    # service without public methods), and a plaintext port answering health alone (0 = off).
    internal_port: int = 0
    health_port: int = 0
    # Where ``serve`` writes the ports it bound (infra.ports.ServedPorts), "" = nowhere.
    port_file: str = ""
    reflection: bool = False  # server reflection (off unless asked for)
    # "threads": one handler thread per call (streams included); "asyncio": an event loop runs
    # every call, blocking work in --max-workers threads (infra/aio_server.py); "": the
    # service's default (ServiceSpec.server_models[0]).
    server_model: str = ""
    # Keepalive pings on every connection: a client that vanished without closing its
    # connection is noticed within keepalive + timeout seconds, and its calls end.
    keepalive_seconds: float = 20.0
    keepalive_timeout_seconds: float = 10.0
    # Limits of the asyncio model (0 = none): open streams in all and per client address, and
    # the connections one address holds calls on.
    max_streams: int = 0
    max_streams_per_address: int = 0
    max_connections_per_address: int = 0
    extra: dict[str, Any] = field(default_factory=dict)  # the service's own flags


@dataclass
class ServiceSpec:
    """What a service tells the bootstrap about itself."""

    name: str  # "wall", "rules", …
    default_port: int
    default_metrics_port: int
    # Registers servicers on the server; may return a resource with ``close()`` (after the
    # server stopped) and ``before_stop()`` (at SIGTERM, as health turns NOT_SERVING).
    add_to_server: Callable[[grpc.Server, Config], Any]
    # Fully-qualified service names for health and reflection, e.g. "mahjong.wall.v1.WallService".
    service_names: Iterable[str]
    # Adds service-specific flags (their values land in Config.extra).
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    # Handler threads unless --max-workers or the environment says otherwise; a service with
    # long-lived server streams needs one thread per open stream.
    default_max_workers: int = 16
    # Method names (e.g. "RecordHand") of the services above that only other services of the
    # deployment may call: they require the internal token when one is configured.
    internal_methods: frozenset[str] = frozenset()
    # Who may call what: method name -> the workloads (SPIFFE ID names) it answers; "*" for every
    # method not named. A method none of them covers is public (players, on ``--port``).
    callers: dict[str, frozenset[str]] = field(default_factory=dict)
    # A service with public methods and callers both listens twice: ``--port`` (server TLS, for
    # players) and ``--internal-port`` (mutual TLS, for the deployment's services), by default
    # this port.
    default_internal_port: int = 0
    # The server models its servicers support, the default first ("threads", "asyncio").
    server_models: tuple[str, ...] = ("threads",)
    # Checks the configuration before any port is bound (``add_to_server`` runs after the bind,
    # with the ports bound); a setting it refuses raises BindError naming the flag.
    check_config: Callable[[Config], None] | None = None


def _env(service: str, flag: str) -> str | None:
    key = flag.upper().replace("-", "_")
    return os.environ.get(f"MAHJONG_{service.upper()}_{key}") or os.environ.get(f"MAHJONG_{key}")


def _switch(raw: str) -> bool:
    text = raw.strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(raw)


def _env_value(p: argparse.ArgumentParser, action: argparse.Action, raw: str) -> Any:
    """An environment value for a service flag: booleans for switches (``1``/``true``/``yes``/
    ``on`` or ``0``/``false``/``no``/``off``), else the flag's type."""
    if action.nargs == 0:  # store_true / store_false switches
        try:
            return action.const if _switch(raw) else not action.const
        except ValueError:
            p.error(f"environment value {raw!r} for --{action.dest} is not true or false")
    try:
        return action.type(raw) if action.type else raw
    except (ValueError, argparse.ArgumentTypeError):
        p.error(f"environment value {raw!r} for --{action.dest} is not valid")


def parse_config(spec: ServiceSpec, argv: list[str] | None = None) -> Config:
    """Flags override environment, which overrides defaults."""
    p = argparse.ArgumentParser(
        prog=f"mahjong serve {spec.name}", description=f"Run the {spec.name} service."
    )

    def env_default(flag: str, default: Any, cast: Callable[[str], Any] = str) -> Any:
        raw = _env(spec.name, flag)
        if raw is None:
            return default
        try:
            return cast(raw)
        except argparse.ArgumentTypeError as exc:
            p.error(f"environment value {raw!r} for {flag}: {exc}")
        except ValueError:
            p.error(f"environment value {raw!r} for {flag} is not a valid {cast.__name__}")

    p.add_argument("--host", default=env_default("host", "127.0.0.1"))
    p.add_argument(
        "--port",
        type=port_value,
        default=env_default("port", spec.default_port, port_value),
        help="the gRPC port (0 or auto: one the OS picks, named in --port-file)",
    )
    p.add_argument(
        "--metrics-port",
        type=port_value,
        default=env_default("metrics_port", spec.default_metrics_port, port_value),
        help="Prometheus /metrics HTTP port (0 disables; auto: one the OS picks)",
    )
    p.add_argument(
        "--port-file",
        default=env_default("port_file", ""),
        help="once every port is bound, write their numbers here as JSON (written whole: a "
        "temporary file renamed), for a supervisor that started this process on auto ports",
    )
    p.add_argument(
        "--store-url",
        default=env_default("store_url", f"sqlite:///.data/{spec.name}.db"),
        help="memory://, sqlite:///path.db (default: .data/<service>.db) or "
        "postgresql://user@host:port/dbname (prefer MAHJONG_STORE_URL to the flag, and "
        "PGPASSWORD or ~/.pgpass to a password in the URL: flags show in `ps`)",
    )
    p.add_argument(
        "--store-pool-size",
        type=int,
        default=env_default("store_pool_size", DEFAULT_POOL_SIZE, int),
        help="most connections to a PostgreSQL store (shared by the service's threads)",
    )
    p.add_argument("--log-level", default=env_default("log_level", "info"))
    p.add_argument(
        "--max-workers",
        type=int,
        default=env_default("max_workers", spec.default_max_workers, int),
        help="gRPC handler threads (each open server stream holds one)",
    )
    if len(spec.server_models) > 1:
        p.add_argument(
            "--server-model",
            choices=spec.server_models,
            default=env_default("server_model", spec.server_models[0]),
            help="asyncio: an event loop runs every call, an open stream costs memory, not a "
            "thread; threads: one handler thread per call for its whole life (streams included)",
        )
    p.add_argument(
        "--keepalive-seconds",
        type=float,
        default=env_default("keepalive_seconds", 20.0, float),
        help="ping each client connection this often; one that does not answer within "
        "--keepalive-timeout-seconds is closed and its calls end",
    )
    p.add_argument(
        "--keepalive-timeout-seconds",
        type=float,
        default=env_default("keepalive_timeout_seconds", 10.0, float),
    )
    if "asyncio" in spec.server_models:
        for flag, default, what in (
            ("max-streams", 20_000, "open streams on this server"),
            ("max-streams-per-address", 2_000, "open streams of one client address"),
            ("max-connections-per-address", 200, "connections one client address holds calls on"),
        ):
            key = flag.replace("-", "_")
            p.add_argument(
                f"--{flag}",
                type=int,
                default=env_default(key, default, int),
                help=f"most {what} (asyncio model; 0: no limit)",
            )
    p.add_argument(
        "--tls-dir",
        default=env_default("tls_dir", default_tls_dir(spec.name)),
        help="this workload's tls.crt, tls.key and ca.crt (cert-manager's Secret layout; "
        "re-read when they change; default .data/tls/<service>, made by `mahjong certs`)",
    )
    p.add_argument(
        "--insecure",
        action="store_true",
        default=env_default("insecure", False, _switch),
        help="serve plaintext, nobody authenticated: only for tests of the plaintext path",
    )
    p.add_argument(
        "--trust-domain",
        default=env_default("trust_domain", DEFAULT_TRUST_DOMAIN),
        help="the SPIFFE trust domain of the deployment's workload certificates",
    )
    if spec.default_internal_port:
        p.add_argument(
            "--internal-port",
            type=port_value,
            default=env_default("internal_port", spec.default_internal_port, port_value),
            help="the mutual-TLS port the deployment's services call (--port serves players; "
            "0 or auto: one the OS picks)",
        )
    p.add_argument(
        "--health-port",
        type=port_value,
        default=env_default("health_port", 0, port_value),
        help="a plaintext port answering grpc health alone, for probes without TLS (0: off; "
        "auto: one the OS picks)",
    )
    p.add_argument(
        "--reflection",
        action="store_true",
        default=env_default("reflection", False, _switch),
        help="serve gRPC server reflection (off by default; never in production)",
    )
    p.add_argument("--drain-seconds", type=float, default=env_default("drain_seconds", 1.0, float))
    p.add_argument("--grace-seconds", type=float, default=env_default("grace_seconds", 5.0, float))
    p.add_argument(
        "--internal-token",
        default=env_default("internal_token", ""),
        help="a shared secret services send with internal calls, beside their certificates "
        "(prefer the environment: MAHJONG_INTERNAL_TOKEN; empty = the certificate alone)",
    )
    own: list[str] = []
    if spec.add_arguments:
        before = {a.dest for a in p._actions}
        spec.add_arguments(p)
        own = [a.dest for a in p._actions if a.dest not in before]
        for action in p._actions:
            if action.dest in own:
                raw = _env(spec.name, action.dest)
                if raw is not None:
                    action.default = _env_value(p, action, raw)
    ns = p.parse_args(argv)
    return Config(
        host=ns.host,
        port=ns.port,
        metrics_port=ns.metrics_port,
        store_url=ns.store_url,
        store_pool_size=ns.store_pool_size,
        log_level=ns.log_level,
        max_workers=ns.max_workers,
        drain_seconds=ns.drain_seconds,
        grace_seconds=ns.grace_seconds,
        internal_token=ns.internal_token,
        tls_dir=ns.tls_dir,
        insecure=ns.insecure,
        trust_domain=ns.trust_domain,
        internal_port=getattr(ns, "internal_port", 0),
        health_port=ns.health_port,
        port_file=ns.port_file,
        reflection=ns.reflection,
        server_model=getattr(ns, "server_model", spec.server_models[0]),
        keepalive_seconds=ns.keepalive_seconds,
        keepalive_timeout_seconds=ns.keepalive_timeout_seconds,
        max_streams=getattr(ns, "max_streams", 0),
        max_streams_per_address=getattr(ns, "max_streams_per_address", 0),
        max_connections_per_address=getattr(ns, "max_connections_per_address", 0),
        extra={k: getattr(ns, k) for k in own},
    )
