"""A server's configuration: what a service tells the bootstrap about itself
(:class:`ServiceSpec`) and the settings it runs with (:class:`Config`), read from flags, then
the environment (``MAHJONG_<SERVICE>_<FLAG>``, then ``MAHJONG_<FLAG>``), then defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import grpc

from infra.ports import port_value
from infra.settings import PerService, add_settings, declared, from_flags, setting
from infra.store import DEFAULT_POOL_SIZE
from infra.tls import DEFAULT_TRUST_DOMAIN, default_tls_dir


def _workers(spec: Any) -> int:
    return spec.default_max_workers


def _asyncio(spec: Any) -> bool:
    return "asyncio" in spec.server_models


def _asyncio_default(limit: int) -> PerService:
    """A limit of the asyncio model: the flag's default for a service that has the model (a
    Config built without one has none)."""
    return PerService(lambda _spec: limit)


@dataclass
class Config:
    """A server's settings. Ports are numbers or :data:`infra.ports.AUTO_PORT` (``auto``: the
    OS picks); once the server is bound, the config its service is given names the ports it
    got. A field's default is what a server built in a test runs with; the flag's (often the
    service's own) is what ``mahjong serve NAME`` runs with."""

    host: str = setting("127.0.0.1", "--host", "interface to listen on (0.0.0.0 in containers)")
    port: int = setting(  # 0 (or AUTO_PORT) = a port the OS picks
        0,
        "--port",
        "the gRPC port (0 or auto: one the OS picks, named in --port-file)",
        flag_default=PerService(lambda spec: spec.default_port),
        parse=port_value,
    )
    metrics_port: int = setting(  # 0 = no metrics HTTP server
        0,
        "--metrics-port",
        "Prometheus /metrics HTTP port (0 disables; auto: one the OS picks)",
        flag_default=PerService(lambda spec: spec.default_metrics_port),
        parse=port_value,
    )
    # Where ``serve`` writes the ports it bound (infra.ports.ServedPorts), "" = nowhere.
    port_file: str = setting(
        "",
        "--port-file",
        "once every port is bound, write their numbers here as JSON (written whole: a "
        "temporary file renamed), for a supervisor that started this process on auto ports",
    )
    store_url: str = setting(
        "memory://",
        "--store-url",
        "memory://, sqlite:///path.db (default: .data/<service>.db) or "
        "postgresql://user@host:port/dbname (prefer MAHJONG_STORE_URL to the flag, and "
        "PGPASSWORD or ~/.pgpass to a password in the URL: flags show in `ps`)",
        flag_default=PerService(lambda spec: f"sqlite:///.data/{spec.name}.db"),
    )
    store_pool_size: int = setting(
        DEFAULT_POOL_SIZE,
        "--store-pool-size",
        "most connections to a PostgreSQL store (shared by the service's threads)",
    )
    log_level: str = setting("info", "--log-level", "debug, info, warning or error")
    max_workers: int = setting(
        16,
        "--max-workers",
        "gRPC handler threads (each open server stream holds one)",
        flag_default=PerService(_workers),
        parse=int,
    )
    # "threads": one handler thread per call (streams included); "asyncio": an event loop runs
    # every call, blocking work in --max-workers threads (infra/aio_server.py); "": the
    # service's default (ServiceSpec.server_models[0]).
    server_model: str = setting(
        "",
        "--server-model",
        "asyncio: an event loop runs every call, an open stream costs memory, not a "
        "thread; threads: one handler thread per call for its whole life (streams included)",
        flag_default=PerService(lambda spec: spec.server_models[0]),
        choices=PerService(lambda spec: spec.server_models),
        applies=lambda spec: len(spec.server_models) > 1,
    )
    # Keepalive pings on every connection: a client that vanished without closing its
    # connection is noticed within keepalive + timeout seconds, and its calls end.
    keepalive_seconds: float = setting(
        20.0,
        "--keepalive-seconds",
        "ping each client connection this often; one that does not answer within "
        "--keepalive-timeout-seconds is closed and its calls end",
    )
    keepalive_timeout_seconds: float = setting(
        10.0, "--keepalive-timeout-seconds", "see --keepalive-seconds"
    )
    # Limits of the asyncio model (0 = none): open streams in all and per client address, and
    # the connections one address holds calls on.
    max_streams: int = setting(
        0,
        "--max-streams",
        "most open streams on this server (asyncio model; 0: no limit)",
        flag_default=_asyncio_default(20_000),
        parse=int,
        applies=_asyncio,
    )
    max_streams_per_address: int = setting(
        0,
        "--max-streams-per-address",
        "most open streams of one client address (asyncio model; 0: no limit)",
        flag_default=_asyncio_default(2_000),
        parse=int,
        applies=_asyncio,
    )
    max_connections_per_address: int = setting(
        0,
        "--max-connections-per-address",
        "most connections one client address holds calls on (asyncio model; 0: no limit)",
        flag_default=_asyncio_default(200),
        parse=int,
        applies=_asyncio,
    )
    # Transport security (infra/tls.py): the directory of this workload's tls.crt, tls.key and
    # ca.crt, or plaintext with ``insecure`` (tests of that path only); neither set refuses to
    # start. Callers are identified by their certificates' SPIFFE IDs in ``trust_domain``.
    tls_dir: str = setting(
        "",
        "--tls-dir",
        "this workload's tls.crt, tls.key and ca.crt (cert-manager's Secret layout; "
        "re-read when they change; default .data/tls/<service>, made by `mahjong certs`)",
        flag_default=PerService(lambda spec: default_tls_dir(spec.name)),
    )
    insecure: bool = setting(
        False,
        "--insecure",
        "serve plaintext, nobody authenticated: only for tests of the plaintext path",
    )
    trust_domain: str = setting(
        DEFAULT_TRUST_DOMAIN,
        "--trust-domain",
        "the SPIFFE trust domain of the deployment's workload certificates",
    )
    # The mutual-TLS port of a service that players call too (0 = any free port; ignored by a
    # service without public methods), and a plaintext port answering health alone (0 = off).
    internal_port: int = setting(
        0,
        "--internal-port",
        "the mutual-TLS port the deployment's services call (--port serves players; "
        "0 or auto: one the OS picks)",
        flag_default=PerService(lambda spec: spec.default_internal_port),
        parse=port_value,
        applies=lambda spec: bool(spec.default_internal_port),
    )
    health_port: int = setting(
        0,
        "--health-port",
        "a plaintext port answering grpc health alone, for probes without TLS (0: off; "
        "auto: one the OS picks)",
        parse=port_value,
    )
    reflection: bool = setting(  # server reflection (off unless asked for)
        False,
        "--reflection",
        "serve gRPC server reflection (off by default; never in production)",
    )
    drain_seconds: float = setting(
        1.0, "--drain-seconds", "NOT_SERVING this long before stopping, on SIGTERM"
    )
    grace_seconds: float = setting(
        5.0, "--grace-seconds", "time for the calls in flight when stopping"
    )
    internal_token: str = setting(  # a second factor for internal methods ("" = none)
        "",
        "--internal-token",
        "a shared secret services send with internal calls, beside their certificates "
        "(prefer the environment: MAHJONG_INTERNAL_TOKEN; empty = the certificate alone)",
    )
    # Tracing (infra/tracing.py): off unless an OTLP/gRPC endpoint is set.
    otlp_endpoint: str = setting(
        "",
        "--otlp-endpoint",
        "send traces over OTLP/gRPC to this collector (host:port or http://host:port; "
        "https:// for TLS); empty: tracing off",
    )
    trace_sample_ratio: float = setting(
        0.01,
        "--trace-sample-ratio",
        "the share of new traces recorded (0-1); a call whose caller's trace is sampled is "
        "recorded whatever it says (parent-based)",
        parse=float,
    )
    extra: dict[str, Any] = field(default_factory=dict)  # the service's own flags' values


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
    # The settings dataclasses of the service's own flags (infra.settings; their values land
    # in Config.extra, read back with infra.settings.from_flags).
    settings: tuple[type, ...] = ()
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
    # The service's web port for browsers (infra.web.WebPort), if it has one: its flags are
    # infra.web.WebSettings (list it in ``settings``).
    web: Any = None


def parse_config(spec: ServiceSpec, argv: list[str] | None = None) -> Config:
    """Flags override environment, which overrides defaults (:func:`infra.settings.add_settings`
    for the server's own settings and the service's)."""
    p = argparse.ArgumentParser(
        prog=f"mahjong serve {spec.name}", description=f"Run the {spec.name} service."
    )
    add_settings(p, spec, declared(Config))
    own = add_settings(p, spec, declared(*spec.settings))
    values = vars(p.parse_args(argv))
    config = from_flags(Config, values, extra={k: values[k] for k in own})
    return dataclasses.replace(config, server_model=config.server_model or spec.server_models[0])
