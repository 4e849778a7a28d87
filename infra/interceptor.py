"""The call policy both server models apply around every handler.

Who may call a method (the workload in the caller's certificate, ``ServiceSpec.callers``), the
internal token of internal methods, the log context and the per-RPC metrics
(:func:`rpc_context`, :func:`record_rpc`), and the threaded model's interceptor
(:class:`ServerInterceptor`), which also turns every error into its status
(:func:`infra.status.error_status`) and bounds the open server streams. The asyncio model's
interceptor (:mod:`infra.aio_server`) builds on the same :class:`CallPolicy`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hmac
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import grpc
import structlog
from grpc_status import rpc_status
from prometheus_client import Counter, Gauge, Histogram

from infra import tracing, tracing_grpc
from infra.config import Config
from infra.status import error_status, status_code, status_for
from infra.tls import DEFAULT_TRUST_DOMAIN, caller_workload, is_plaintext, peer_auth, workload_in
from shared.errors import PermissionDenied, Unauthenticated

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

# The metadata key that carries the internal token between services.
INTERNAL_TOKEN_HEADER = "x-mahjong-internal-token"


def split_method(full: str) -> tuple[str, str]:
    _, service, method = full.split("/", 2) if full.count("/") >= 2 else ("", "", full)
    return service, method


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
    a ``time.perf_counter()``), with the trace id of a sampled call as its exemplar."""
    seconds = time.perf_counter() - start
    RPC_HANDLED.labels(service, method, code).inc()
    RPC_LATENCY.labels(service, method).observe(seconds, tracing.exemplar())
    log.debug("rpc_finished", service=service, method=method, code=code, ms=seconds * 1000)


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
    def _finish(service: str, method: str, start: float, context, span) -> None:
        code = context.code() if hasattr(context, "code") else None
        name = code.name if isinstance(code, grpc.StatusCode) else "OK"
        record_rpc(service, method, name, start)
        tracing.end_server_span(span, name)

    @staticmethod
    def _abort(context, service: str, method: str, exc: BaseException) -> None:
        status = error_status(exc, service, method)
        if status.details:
            context.abort_with_status(rpc_status.to_status(status))
        context.abort(status_code(status.code), status.message)

    @contextlib.contextmanager
    def _call_scope(self, service: str, method: str, context, start: float, span=None):
        """What every call runs inside: its span (:func:`infra.tracing.server_span`, made by
        the caller), :func:`rpc_context`, any exception turned into a status (:meth:`_abort`),
        metrics recorded and the span ended at the end."""
        try:
            with rpc_context(method, context.peer(), self._serving):
                try:
                    yield
                except Exception as exc:
                    if _is_abort(exc):
                        raise
                    self._abort(context, service, method, exc)
        finally:
            self._finish(service, method, start, context, span)

    def _wrap_unary(self, fn, service: str, method: str):
        def wrapper(request, context):
            start = time.perf_counter()
            span = tracing.server_span(service, method, context, request)
            with self._call_scope(service, method, context, start, span):
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
                span = tracing.server_span(service, method, context, request)
                with self._call_scope(service, method, context, start, span):
                    messages = fn(request, context)
                    if span is not None:  # each message a span of its own, linked
                        messages = tracing_grpc.sent_messages(messages, span, method)
                    yield from messages
            finally:
                STREAMS_OPEN.dec()
                if self._streams is not None:
                    self._streams.release()

        return wrapper


def _is_abort(exc: BaseException) -> bool:
    """context.abort() ends a handler by raising a bare ``Exception()``; let it through."""
    return type(exc) is Exception and not exc.args


def serving_of(config: Config) -> Serving:
    """How a server of ``config`` authenticates its callers."""
    return Serving(config.internal_token, config.insecure, config.trust_domain)
