"""The server bootstrap every service uses.

A service describes itself with a :class:`ServiceSpec` (its name, default ports, the function
that adds its servicers, its own flags) and calls :func:`serve`. The bootstrap provides:

* configuration from flags, then environment (``MAHJONG_<SERVICE>_<FLAG>``, then
  ``MAHJONG_<FLAG>``), then defaults;
* gRPC health (``grpc.health.v1``) and server reflection;
* structlog JSON logs with the RPC, peer and request context bound on every line;
* Prometheus metrics per RPC (count by status code, latency histogram), open server streams
  beside their limit and the container's cgroup limits (:mod:`infra.process_limits`) on an
  HTTP port;
* domain errors (:mod:`shared.errors`) mapped to status codes with google.rpc details, and any
  other exception answered INTERNAL and logged, never crashing the process;
* graceful shutdown on SIGTERM/SIGINT: health NOT_SERVING, a drain period, then a grace period
  for calls in flight;
* ports the OS picks (``--port 0``, ``--metrics-port auto`` …: :mod:`infra.ports`), bound before
  the service is built so it sees the real ones, and named in ``--port-file`` once every port is
  bound and the server answers, for the supervisor that started it;
* transport security (:mod:`infra.tls`): every port serves TLS from ``--tls-dir``. A service
  that only other services call (wall, rules, scoring) has one mutual-TLS port; one that players
  call too (matchmaking, the gateway) serves them on ``--port`` with server TLS and the
  deployment's services on ``--internal-port`` with mutual TLS. ``--health-port`` is a plaintext
  port that answers grpc health alone (kubelet's probes speak no TLS). ``--insecure`` serves
  plaintext, for tests of that path only;
* authorization by the caller's workload identity (the SPIFFE ID in its certificate): each
  method in ``ServiceSpec.callers`` answers only the workloads named there, anything else is
  PERMISSION_DENIED naming the caller and the method (UNAUTHENTICATED without a certificate).
  Internal methods (``ServiceSpec.internal_methods``) also need the internal token when one is
  configured (``--internal-token``, a second factor, sent as ``x-mahjong-internal-token``).
  A handler asks whether its caller is one of the deployment's services with
  :func:`from_internal_caller`.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import dataclasses
import hmac
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import structlog
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from grpc_status import rpc_status
from prometheus_client import Counter, Gauge, Histogram, start_http_server

from infra.gc_tuning import settle_after_start_up
from infra.ports import AUTO_PORT, ServedPorts, listen_port, port_value
from infra.process_limits import export_limits
from infra.store import DEFAULT_POOL_SIZE, Store, open_store, redact_url
from infra.store.base import StoreError
from infra.tls import (
    DEFAULT_TRUST_DOMAIN,
    TLSConfigError,
    TLSFiles,
    caller_workload,
    default_tls_dir,
    is_plaintext,
    peer_auth,
    server_credentials,
    workload_in,
)
from shared.errors import DomainError, PermissionDenied, Unauthenticated

log = structlog.get_logger("mahjong.server")

RPC_HANDLED = Counter(
    "grpc_server_handled_total",
    "RPCs completed on the server, by status code.",
    ["grpc_service", "grpc_method", "grpc_code"],
)
RPC_LATENCY = Histogram(
    "grpc_server_handling_seconds",
    "Time to handle an RPC (for streams: until the stream ends).",
    ["grpc_service", "grpc_method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
)
STREAMS_OPEN = Gauge(
    "mahjong_server_streams_open",
    "Server streams open now (on the threaded model each holds a handler thread).",
)
STREAM_LIMIT = Gauge(
    "mahjong_server_stream_limit",
    "Server streams that may be open at once; past it a stream ends RESOURCE_EXHAUSTED.",
)

ERROR_DOMAIN = "mahjong"
# The metadata key that carries the internal token between services.
INTERNAL_TOKEN_HEADER = "x-mahjong-internal-token"


# --- configuration ---------------------------------------------------------------------------
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


# --- logging ---------------------------------------------------------------------------------
_logging_done = False


def configure_logging(level: str = "info", stream: Any = None) -> None:
    """structlog JSON lines on stderr, with context variables (rpc, table, hand, seat) merged."""
    global _logging_done
    lvl = logging.getLevelName(level.upper())
    if not isinstance(lvl, int):
        lvl = logging.INFO
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
    _logging_done = True


# --- errors and the interceptor --------------------------------------------------------------
# The status travels in trailing metadata, which clients refuse past 16 KiB (the call would end
# RESOURCE_EXHAUSTED instead): a message or detail echoing a huge input is cut short.
MAX_ERROR_TEXT = 1000


def _bounded(text: str) -> str:
    if len(text) <= MAX_ERROR_TEXT:
        return text
    return f"{text[:MAX_ERROR_TEXT]}… ({len(text)} characters)"


def rich_status(err: DomainError | StoreError) -> status_pb2.Status:
    """The google.rpc.Status (code, message, an ErrorInfo detail) of a domain error, or of a
    store error with a code of its own (UNAVAILABLE when the store cannot be reached)."""
    code = getattr(code_pb2, err.code, code_pb2.UNKNOWN)
    facts = details_of(err)
    metadata = {_bounded(k): _bounded(v) for k, v in facts.items()}
    info = error_details_pb2.ErrorInfo(reason=err.reason, domain=ERROR_DOMAIN, metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    details = [detail]
    delay = facts.get("retry_delay_ms", "")
    if delay.isdigit():  # a refusal that says when to retry: google.rpc.RetryInfo as well
        retry = any_pb2.Any()
        retry.Pack(
            error_details_pb2.RetryInfo(
                retry_delay=duration_pb2.Duration(
                    seconds=int(delay) // 1000, nanos=int(delay) % 1000 * 1_000_000
                )
            )
        )
        details.append(retry)
    return status_pb2.Status(code=code, message=_bounded(err.message), details=details)


def details_of(err: DomainError | StoreError) -> dict[str, str]:
    """The facts of an error (ErrorInfo metadata); ``retry_delay_ms`` is sent as RetryInfo too."""
    return err.details if isinstance(err, DomainError) else {}


def status_for(err: DomainError | StoreError) -> grpc.Status:
    """A rich status (google.rpc.Status with ErrorInfo) for a domain or store error, as gRPC
    sends it."""
    return rpc_status.to_status(rich_status(err))


def error_status(exc: BaseException, service: str, method: str) -> status_pb2.Status:
    """What a handler's exception is answered with, on every transport (gRPC here, Connect and
    gRPC-Web in :mod:`infra.web`), logged: a domain error its rich status; a failed call to
    another service that call's code, named; anything else INTERNAL (never the process)."""
    if isinstance(exc, DomainError):
        log.info("rpc_rejected", code=exc.code, error=exc.message)
        return rich_status(exc)
    if isinstance(exc, StoreError) and exc.code != "INTERNAL":
        log.warning("store_failed", code=exc.code, reason=exc.reason, error=exc.message)
        return rich_status(exc)
    if isinstance(exc, grpc.RpcError) and isinstance(exc, grpc.Call):
        log.warning("downstream_failed", code=exc.code().name, error=exc.details())
        return status_pb2.Status(
            code=exc.code().value[0], message=_bounded(f"downstream: {exc.details()}")
        )
    log.exception("rpc_failed", error=repr(exc))
    return status_pb2.Status(
        code=code_pb2.INTERNAL, message=f"internal error in {service}/{method}"
    )


def status_code(code: int) -> grpc.StatusCode:
    """The grpc.StatusCode of a google.rpc code number."""
    return next((c for c in grpc.StatusCode if c.value[0] == code), grpc.StatusCode.UNKNOWN)


def split_method(full: str) -> tuple[str, str]:
    _, service, method = full.split("/", 2) if full.count("/") >= 2 else ("", "", full)
    return service, method


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


def stream_limit(max_workers: int) -> int:
    """How many server streams may be open at once: every handler thread but a reserve for
    unary calls (a quarter of the threads, 2 to 8), so watchers never starve the service."""
    return max(1, max_workers - max(2, min(8, max_workers // 4)))


def peer_address(peer: str) -> tuple[str, str]:
    """(the client's address, its connection) of a gRPC peer string: ``ipv4:10.0.0.7:51234`` is
    (``10.0.0.7``, ``10.0.0.7:51234``), ``ipv6:[::1]:5000`` is (``[::1]``, ``[::1]:5000``)."""
    _, _, rest = peer.partition(":")
    if not rest:
        return peer, peer
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return rest, rest
    return host, rest


def internal_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """The call metadata that authenticates a service calling another's internal methods
    (empty without a token: development mode)."""
    return ((INTERNAL_TOKEN_HEADER, token),) if token else ()


def check_internal_token(expected: str, metadata: Iterable[tuple[str, Any]], method: str) -> None:
    """Unauthenticated unless ``metadata`` carries ``expected`` (compared in constant time)."""
    sent = next((v for k, v in metadata if k == INTERNAL_TOKEN_HEADER), "")
    if not sent:
        raise Unauthenticated(
            f"{method} is internal: no {INTERNAL_TOKEN_HEADER} metadata sent (only services of "
            "this deployment, configured with the same MAHJONG_INTERNAL_TOKEN, may call it)",
            reason="INTERNAL_TOKEN_MISSING",
        )
    raw = sent if isinstance(sent, bytes) else str(sent).encode("utf-8", "surrogateescape")
    if not hmac.compare_digest(raw, expected.encode()):
        raise Unauthenticated(
            f"{method} is internal: the {INTERNAL_TOKEN_HEADER} sent does not match this "
            "server's MAHJONG_INTERNAL_TOKEN",
            reason="INTERNAL_TOKEN_INVALID",
        )


@dataclass(frozen=True)
class Serving:
    """What a server tells its handlers about how it authenticates callers (for
    :func:`from_internal_caller`): its internal token, whether it runs plaintext, its trust
    domain."""

    internal_token: str = ""
    insecure: bool = False
    trust_domain: str = DEFAULT_TRUST_DOMAIN


# How a plaintext server (--insecure) and a TLS server without a token authenticate.
PLAINTEXT = Serving(insecure=True)
TLS_NO_TOKEN = Serving()
# The server whose handler runs in this thread, set by the interceptor around every call.
_SERVING: contextvars.ContextVar[Serving] = contextvars.ContextVar("serving", default=TLS_NO_TOKEN)


@contextlib.contextmanager
def rpc_context(method: str, peer: str, serving: Serving):
    """What a call runs inside, on every transport: the RPC and peer bound on every log line,
    and how the serving server authenticates (for :func:`from_internal_caller`); both cleared
    at the end."""
    structlog.contextvars.bind_contextvars(rpc=method, peer=peer)
    token = _SERVING.set(serving)
    try:
        yield
    finally:
        _SERVING.reset(token)
        structlog.contextvars.clear_contextvars()


def record_rpc(service: str, method: str, code: str, start: float) -> None:
    """Count a finished call by status code name and observe its latency (from ``start``,
    a ``time.perf_counter()``)."""
    RPC_HANDLED.labels(service, method, code).inc()
    RPC_LATENCY.labels(service, method).observe(time.perf_counter() - start)


def from_internal_caller(context, workloads: frozenset[str], *, strict: bool = False) -> bool:
    """Whether the call ``context`` belongs to came from one of ``workloads`` of this
    deployment: its verified certificate names one of them (and it sent the internal token, when
    the server has one). For methods open to everyone that act differently for the deployment's
    own services (the gateway reports only tables matchmaking created). On a plaintext server
    (``--insecure``, tests of that path) nobody has a certificate: there the internal token
    alone counts, and without one every caller counts as internal — unless ``strict``: for a
    privilege that must never be open (handing out another player's seat token)."""
    serving = _SERVING.get()
    if not serving.insecure and caller_workload(context, serving.trust_domain) not in workloads:
        return False
    if not serving.internal_token:
        return not (serving.insecure and strict)
    try:
        check_internal_token(serving.internal_token, context.invocation_metadata() or (), "")
    except Unauthenticated:
        return False
    return True


HEALTH_SERVICE = "grpc.health.v1.Health"
REFLECTION_SERVICES = frozenset(
    {"grpc.reflection.v1alpha.ServerReflection", "grpc.reflection.v1.ServerReflection"}
)


class CallPolicy:
    """What both server models' interceptors do around every handler: who may call it (by the
    workload in the caller's certificate, ``ServiceSpec.callers``), internal methods' token, and
    each unary or server-streaming handler wrapped (``_wrap_unary``, ``_wrap_stream``, each
    model's own)."""

    def __init__(
        self,
        internal: Iterable[tuple[str, str]],
        serving: Serving,
        callers: dict[str, frozenset[str]] | None = None,
    ) -> None:
        self._internal = frozenset(internal) if serving.internal_token else frozenset()
        self._serving = serving
        self._callers = dict(callers or {})

    def _authorize(self, service: str, method: str, context) -> None:
        try:
            self._check_caller(service, method, context)
            if (service, method) in self._internal:
                check_internal_token(
                    self._serving.internal_token, context.invocation_metadata() or (), method
                )
        except (Unauthenticated, PermissionDenied) as exc:
            log.warning("call_refused", rpc=method, peer=context.peer(), error=exc.reason)
            raise

    def _check_caller(self, service: str, method: str, context) -> None:
        if service == HEALTH_SERVICE or self._serving.insecure:
            return
        auth = peer_auth(context)  # read once: it is not free (about 17 µs a call)
        if is_plaintext(auth):
            raise Unauthenticated(
                f"{service}/{method} is not served on this plaintext port: it answers grpc "
                "health alone; call the TLS port",
                reason="PLAINTEXT_PORT",
            )
        allowed = self._callers.get(method, self._callers.get("*"))
        if allowed is None or service in REFLECTION_SERVICES:
            return  # a public method
        who = workload_in(auth, self._serving.trust_domain)
        if not who:
            raise Unauthenticated(
                f"{service}/{method} answers only {', '.join(sorted(allowed))}: the caller "
                "presented no workload certificate of this deployment (call the service's "
                "mutual-TLS port with one)",
                reason="NO_WORKLOAD_CERTIFICATE",
            )
        if who not in allowed:
            raise PermissionDenied(
                f"{who} may not call {service}/{method}: it answers only "
                f"{', '.join(sorted(allowed))}",
                reason="CALLER_NOT_ALLOWED",
                caller=who,
                method=f"{service}/{method}",
            )

    def _rewrap(self, handler, full_method: str):
        if handler is None:
            return None
        service, method = split_method(full_method)
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(handler.unary_unary, service, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(handler.unary_stream, service, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # streaming requests: not used by our contracts

    def _wrap_unary(self, fn, service: str, method: str):
        raise NotImplementedError

    def _wrap_stream(self, fn, service: str, method: str):
        raise NotImplementedError


class ServerInterceptor(CallPolicy, grpc.ServerInterceptor):
    """Binds log context, records metrics and maps domain errors to status codes. With
    ``max_streams``, server streams past that many open at once end RESOURCE_EXHAUSTED. Callers
    are authorized as :class:`CallPolicy` says."""

    def __init__(
        self,
        max_streams: int | None = None,
        *,
        internal: Iterable[tuple[str, str]] = (),
        serving: Serving = PLAINTEXT,
        callers: dict[str, frozenset[str]] | None = None,
    ) -> None:
        self._max_streams = max_streams
        self._streams = threading.BoundedSemaphore(max_streams) if max_streams else None
        if max_streams:
            STREAM_LIMIT.set(max_streams)
        super().__init__(internal, serving, callers)

    def intercept_service(self, continuation, handler_call_details):
        return self._rewrap(continuation(handler_call_details), handler_call_details.method)

    @staticmethod
    def _finish(service: str, method: str, start: float, context) -> None:
        code = context.code() if hasattr(context, "code") else None
        record_rpc(service, method, code.name if isinstance(code, grpc.StatusCode) else "OK", start)

    @staticmethod
    def _abort(context, service: str, method: str, exc: BaseException) -> None:
        status = error_status(exc, service, method)
        if status.details:
            context.abort_with_status(rpc_status.to_status(status))
        context.abort(status_code(status.code), status.message)

    @contextlib.contextmanager
    def _call_scope(self, service: str, method: str, context, start: float):
        """What every call runs inside: :func:`rpc_context`, any exception turned into a status
        (:meth:`_abort`), metrics recorded at the end."""
        try:
            with rpc_context(method, context.peer(), self._serving):
                try:
                    yield
                except Exception as exc:
                    if _is_abort(exc):
                        raise
                    self._abort(context, service, method, exc)
        finally:
            self._finish(service, method, start, context)

    def _wrap_unary(self, fn, service: str, method: str):
        def wrapper(request, context):
            with self._call_scope(service, method, context, time.perf_counter()):
                self._authorize(service, method, context)
                return fn(request, context)

        return wrapper

    def _wrap_stream(self, fn, service: str, method: str):
        def wrapper(request, context):
            start = time.perf_counter()
            try:  # before taking a stream slot: unauthenticated callers never hold one
                self._authorize(service, method, context)
            except (Unauthenticated, PermissionDenied) as exc:
                RPC_HANDLED.labels(service, method, exc.code).inc()
                context.abort_with_status(status_for(exc))
            if self._streams is not None and not self._streams.acquire(blocking=False):
                RPC_HANDLED.labels(service, method, "RESOURCE_EXHAUSTED").inc()
                context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"{self._max_streams} streams are open on this server, its limit; "
                    "retry later or on another replica",
                )
            STREAMS_OPEN.inc()
            try:
                with self._call_scope(service, method, context, start):
                    yield from fn(request, context)
            finally:
                STREAMS_OPEN.dec()
                if self._streams is not None:
                    self._streams.release()

        return wrapper


def _is_abort(exc: BaseException) -> bool:
    """context.abort() ends a handler by raising a bare ``Exception()``; let it through."""
    return type(exc) is Exception and not exc.args


# --- running ---------------------------------------------------------------------------------
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


def serving_of(config: Config) -> Serving:
    """How a server of ``config`` authenticates its callers."""
    return Serving(config.internal_token, config.insecure, config.trust_domain)


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


class RunningServer:
    """A started service: its bound port, health servicer and a graceful ``stop``."""

    def __init__(self, spec: ServiceSpec, config: Config) -> None:
        self.spec = spec
        self.config = config
        names = list(spec.service_names)
        self.server = grpc.server(
            futures.ThreadPoolExecutor(
                max_workers=config.max_workers, thread_name_prefix=spec.name
            ),
            interceptors=[
                ServerInterceptor(
                    stream_limit(config.max_workers),
                    internal=[(s, m) for s in names for m in spec.internal_methods],
                    serving=serving_of(config),
                    callers=spec.callers,
                )
            ],
            options=[("grpc.so_reuseport", 0), *keepalive_options(config)],
        )
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        # Bound first, so the service is given the ports it got (its replica id, the address
        # it advertises).
        self.ports = bind(self.server, spec, config)
        self.port = self.ports.port
        self.config = config = bound_config(config, self.ports)
        try:
            self.resource = spec.add_to_server(self.server, config)
            if config.reflection:
                reflection.enable_server_reflection(reflected(spec, config), self.server)
            self.metrics_port = serve_metrics(spec, config)
        except BaseException:
            self.server.stop(0)
            raise
        self._names = names
        self._stopped = threading.Event()

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    @property
    def internal_address(self) -> str:
        """Where the deployment's services call it (the main port when it has no other)."""
        return f"{self.config.host}:{self.ports.internal_port or self.port}"

    def start(self) -> RunningServer:
        self.server.start()
        for name in ["", *self._names]:
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log_serving(self.spec, self.config, self.ports, self.metrics_port, "threads")
        return self

    def stop(self, grace: float | None = None, drain: float = 0.0) -> None:
        """Health NOT_SERVING, wait ``drain`` seconds so balancers notice, then stop accepting
        calls and give those in flight ``grace`` seconds."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self.health.enter_graceful_shutdown()
        resource_hook(self.resource, "before_stop")
        if drain > 0:
            time.sleep(drain)
        self.server.stop(self.config.grace_seconds if grace is None else grace).wait()
        resource_hook(self.resource, "close")
        log.info("stopped", service=self.spec.name)

    def wait(self) -> None:
        self.server.wait_for_termination()


def open_config_store(config: Config) -> Store:
    """The store ``config`` names (``--store-url``, ``--store-pool-size``)."""
    return open_store(config.store_url, pool_size=config.store_pool_size)


def start(spec: ServiceSpec, config: Config | None = None) -> RunningServer:
    """Build and start a server (tests use this with port 0 and ``memory://``)."""
    config = config or Config()
    if not _logging_done:
        configure_logging(config.log_level)
    model = config.server_model or spec.server_models[0]
    if model not in spec.server_models:
        raise ValueError(f"{spec.name} has no {model!r} server model")
    if model == "asyncio":
        from infra.aio_server import AsyncRunningServer

        return AsyncRunningServer(spec, config).start()  # type: ignore[return-value]
    return RunningServer(spec, config).start()


SIGNAL_POLL_SECONDS = 0.2  # how soon the main thread sees a signal another thread received


def serve(spec: ServiceSpec, argv: list[str] | None = None) -> None:
    """Entry point of ``mahjong serve <name>``: run until SIGTERM or SIGINT, then shut down
    gracefully."""
    config = parse_config(spec, argv)
    configure_logging(config.log_level)
    try:
        running = start(spec, config)
    except BindError as exc:
        raise SystemExit(f"mahjong serve {spec.name}: {exc}") from None
    done = threading.Event()

    def on_signal(signum, _frame):
        log.info("shutdown_requested", signal=signal.Signals(signum).name)
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # Started: what start-up built stays, so the collector stops walking it (infra.gc_tuning).
    settle_after_start_up()
    if config.port_file:  # serving, and a SIGTERM from now on stops it gracefully
        served_ports(running).write(config.port_file)
    # The kernel may deliver a signal to any of the process's threads (gRPC's among them); the
    # main thread runs the Python handler only when it wakes, and a wait without a timeout
    # never wakes it: a SIGTERM could sit unhandled until something else did. Wake it often.
    while not done.wait(SIGNAL_POLL_SECONDS):
        pass
    running.stop(drain=config.drain_seconds)
