"""What both server models do to start a service: listen on its ports (TLS from the
workload's files, mutual where the deployment's services call: :func:`bind`), keepalive,
/metrics, the port file's contents, the start-up line and the service resource's hooks.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from grpc_health.v1 import health
from grpc_reflection.v1alpha import reflection
from prometheus_client import start_http_server

from infra.config import Config, ServiceSpec
from infra.ports import AUTO_PORT, ServedPorts, listen_port
from infra.process_limits import export_limits
from infra.store import Store, open_store, redact_url
from infra.tls import TLSConfigError, TLSFiles, server_credentials

log = structlog.get_logger("mahjong.server")

# Clients may ping every 10 s at most (infra.addresses.CLIENT_KEEPALIVE_OPTIONS: 30 s; the
# cluster test's clients: 10 s). The servers accept a ping every 5 s: half that, so the jitter of
# a client's timer and of the server's reads (a ping read late, the next one on time) never makes
# a ping look early. A connection that sends no data (an idle channel, a quiet stream) counts
# each early ping, and the third gets a GOAWAY "too_many_pings" that ends the calls on it.
MIN_CLIENT_PING_MS = 10_000
ACCEPTED_PING_MS = MIN_CLIENT_PING_MS // 2


def keepalive_options(
    config: Config, accepted_ping_ms: int = ACCEPTED_PING_MS
) -> list[tuple[str, int]]:
    """The server's HTTP/2 keepalive: ping every connection each ``keepalive_seconds`` (calls or
    not) and close one whose ping is not answered within ``keepalive_timeout_seconds``, so a
    client gone without a FIN (a phone that lost its network, a paused process) frees its calls
    within their sum. Clients' pings are accepted every ``accepted_ping_ms``
    (:data:`ACCEPTED_PING_MS`) even on a connection without calls."""
    return [
        ("grpc.keepalive_time_ms", max(1, round(config.keepalive_seconds * 1000))),
        ("grpc.keepalive_timeout_ms", max(1, round(config.keepalive_timeout_seconds * 1000))),
        # grpc 1.5x and later time an unanswered ping by this one (a minute by default)
        ("grpc.http2.ping_timeout_ms", max(1, round(config.keepalive_timeout_seconds * 1000))),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        # The shortest interval between a client's pings the server accepts (without data sent
        # in between). The name is grpc's GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS;
        # an unknown name is ignored silently, leaving grpc's default, five minutes.
        ("grpc.http2.min_ping_interval_without_data_ms", accepted_ping_ms),
    ]


_metrics_ports: set[int] = set()
_metrics_lock = threading.Lock()


def start_metrics(port: int, host: str = "127.0.0.1") -> int:
    """Start the process's /metrics HTTP server once per port (:data:`infra.ports.AUTO_PORT`:
    a new one on a port the OS picks); returns the bound port (0 = off)."""
    if port == 0:
        return 0
    with _metrics_lock:
        if port == AUTO_PORT:
            httpd, _ = start_http_server(0, addr=host)
            port = httpd.server_port
            _metrics_ports.add(port)
            export_limits()
        elif port not in _metrics_ports:
            start_http_server(port, addr=host)
            _metrics_ports.add(port)
            export_limits()
    return port


class BindError(RuntimeError):
    """A port the server cannot listen on; the message names it and the flag that moves it."""


@dataclass(frozen=True)
class BoundPorts:
    """Where a started server listens: its main port, the mutual-TLS port of a service players
    call too (0 = none) and the plaintext health port (0 = none)."""

    port: int
    internal_port: int = 0
    health_port: int = 0


def _add_port(server, host: str, port: int, credentials, flag: str, spec: ServiceSpec) -> int:
    address = f"{host}:{listen_port(port)}"
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError:  # grpc raises on a port in use (older versions return 0)
        port = 0
    if port == 0:
        env = f"MAHJONG_{spec.name.upper()}_{flag.upper().replace('-', '_')}"
        raise BindError(
            f"cannot listen on {address} (in use?); choose another with --{flag} or {env}"
        )
    return port


def tls_files(config: Config, service: str = "") -> TLSFiles | None:
    """The workload's certificate files, for its ports and its calls to other services (None
    with ``insecure``); BindError when they are missing."""
    if config.insecure:
        return None
    if not config.tls_dir:
        raise BindError(
            f"{service or 'server'}: no --tls-dir (MAHJONG_TLS_DIR): every port serves TLS; give "
            "the directory of tls.crt, tls.key and ca.crt, or --insecure (tests of that path only)"
        )
    try:
        return TLSFiles(Path(config.tls_dir)).check()
    except TLSConfigError as exc:
        raise BindError(f"{service or 'server'}: {exc}") from None


def bind(server, spec: ServiceSpec, config: Config) -> BoundPorts:
    """Listen on ``config``'s host and ports (either server model): TLS from the workload's
    files, mutual where the deployment's services call; plaintext only with ``insecure``. The
    service's ``check_config`` runs first: a setting it refuses is refused before anything
    listens."""
    if spec.check_config is not None:
        spec.check_config(config)
    files = tls_files(config, spec.name)
    public = bool(spec.default_internal_port)  # players call it too: two ports

    def creds(mutual: bool):
        return None if files is None else server_credentials(files, mutual=mutual)

    port = _add_port(server, config.host, config.port, creds(not public), "port", spec)
    internal = 0
    if public:
        internal = _add_port(
            server, config.host, config.internal_port, creds(True), "internal-port", spec
        )
    health_port = 0
    if config.health_port:
        health_port = _add_port(server, config.host, config.health_port, None, "health-port", spec)
    return BoundPorts(port, internal, health_port)


def bound_config(config: Config, ports: BoundPorts) -> Config:
    """``config`` naming the ports the server got (a service's own settings derived from its
    port, such as a replica's default id, see the real one, not 0 or ``auto``)."""
    return dataclasses.replace(
        config,
        port=ports.port,
        internal_port=ports.internal_port,
        health_port=ports.health_port,
    )


def served_ports(server: Any) -> ServedPorts:
    """Where a started server (either model) listens, for its port file: its gRPC ports, its
    /metrics port, and the ports its service opened itself (a resource's ``web_port``)."""
    return ServedPorts(
        service=server.spec.name,
        pid=os.getpid(),
        host=server.config.host,
        grpc=server.ports.port,
        internal=server.ports.internal_port,
        health=server.ports.health_port,
        metrics=server.metrics_port,
        web=int(getattr(server.resource, "web_port", 0) or 0),
        services=tuple(server.spec.service_names),
    )


def reflected(spec: ServiceSpec, config: Config) -> list[str]:
    """The services reflection lists, when ``--reflection`` turns it on (else none)."""
    if not config.reflection:
        return []
    return [*spec.service_names, health.SERVICE_NAME, reflection.SERVICE_NAME]


def serve_metrics(spec: ServiceSpec, config: Config) -> int:
    """The service's /metrics port (0 = off), or BindError naming the flag that moves it."""
    try:
        return start_metrics(config.metrics_port, config.host)
    except OSError as exc:
        raise BindError(
            f"cannot serve metrics on {config.host}:{config.metrics_port} ({exc.strerror}); "
            f"choose another with --metrics-port or MAHJONG_{spec.name.upper()}_METRICS_PORT "
            "(0 = off)"
        ) from None


def log_serving(
    spec: ServiceSpec, config: Config, ports: BoundPorts, metrics_port: int, model: str
) -> None:
    """The start-up line of either server model, and the plaintext warning."""
    log.info(
        "serving",
        service=spec.name,
        port=ports.port,
        internal_port=ports.internal_port,
        health_port=ports.health_port,
        metrics_port=metrics_port,
        store=redact_url(config.store_url),
        server_model=model,
        tls="off" if config.insecure else config.tls_dir,
        reflection=config.reflection,
        internal_token=bool(config.internal_token),
    )
    if config.insecure:
        log.warning(
            "plaintext",
            service=spec.name,
            hint="--insecure: no caller is authenticated and every port is plaintext; only "
            "for tests of that path",
        )


def resource_hook(resource: Any, name: str) -> None:
    """Call the service resource's ``before_stop`` (at SIGTERM, as health turns NOT_SERVING:
    e.g. the gateway hands its tables over) or ``close`` (once the server stopped), if it has
    one."""
    hook = getattr(resource, name, None)
    if callable(hook):
        hook()


def open_config_store(config: Config) -> Store:
    """The store ``config`` names (``--store-url``, ``--store-pool-size``)."""
    return open_store(config.store_url, pool_size=config.store_pool_size)
