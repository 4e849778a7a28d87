"""The asyncio server model (``--server-model asyncio``): an open stream costs memory, not a thread.

:mod:`infra.server`'s threaded model holds one handler thread per call for the call's whole
life, so a server can never hold more open streams than it has threads. Here one event loop (in
its own thread) runs every call of a ``grpc.aio`` server: an idle stream is a suspended
coroutine. The servicer's handlers are coroutines; what must block (a table's lock, the store,
another service) runs in a bounded pool of worker threads (``--max-workers``) through
:meth:`AsyncRunningServer.run_blocking`, never on the loop.

Everything else is the threaded model's, reused, not rewritten: configuration, health (the
``grpc.health.v1`` asyncio servicer) and reflection, :func:`infra.interceptor.rpc_context`
around every call (log context, how callers are authenticated),
:func:`infra.status.error_status` for every error, :func:`infra.interceptor.record_rpc` for
the metrics, callers authorized by :class:`infra.interceptor.CallPolicy` (TLS and ports by
:func:`infra.binding.bind`), graceful shutdown (health NOT_SERVING, the drain, then the
grace period for calls in flight).

And, for servers that face the internet: keepalive pings
(:func:`infra.binding.keepalive_options`) so a client that vanished without closing its
connection frees its streams; limits on open streams, in all and per client address, and on the
connections one address holds calls on (:class:`CallLimits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import threading
import time
from collections.abc import Callable
from concurrent import futures
from typing import Any, TypeVar

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from grpc_status import rpc_status

from infra import tracing, tracing_grpc
from infra.binding import (
    bind,
    bound_config,
    keepalive_options,
    log_serving,
    reflected,
    resource_hook,
    serve_metrics,
)
from infra.config import Config, ServiceSpec
from infra.interceptor import (
    PLAINTEXT,
    STREAM_LIMIT,
    STREAMS_OPEN,
    CallPolicy,
    Serving,
    peer_address,
    record_rpc,
    rpc_context,
    serving_of,
)
from infra.status import error_status, status_code
from shared.errors import ResourceExhausted

log = structlog.get_logger("mahjong.server")
T = TypeVar("T")


class CallLimits:
    """Open streams in all and per client address, and connections per address that hold a call.

    A connection counts while it holds at least one call (unary or stream): gRPC does not let a
    server see idle connections, and an idle connection costs a file descriptor and a few KiB, not
    a stream. Used on the event loop only (no lock)."""

    def __init__(
        self, max_streams: int = 0, streams_per_address: int = 0, connections_per_address: int = 0
    ) -> None:
        self.max_streams = max_streams
        self.streams_per_address = streams_per_address
        self.connections_per_address = connections_per_address
        self.streams = 0
        self._streams_of: dict[str, int] = {}
        self._calls_of_connection: dict[str, int] = {}
        self._connections_of: dict[str, set[str]] = {}

    def enter(self, peer: str, stream: bool) -> Callable[[], None]:
        """Admit one call from ``peer`` (RESOURCE_EXHAUSTED past a limit); returns its exit."""
        address, connection = peer_address(peer)
        conns = self._connections_of.get(address)
        new_connection = connection not in self._calls_of_connection
        limit = self.connections_per_address
        if new_connection and limit and conns is not None and len(conns) >= limit:
            raise ResourceExhausted(
                f"{address} holds calls on {limit} connections, the limit per client address; "
                "send more calls on the connections you have",
                reason="CONNECTION_LIMIT",
                limit=limit,
            )
        if stream:
            if self.max_streams and self.streams >= self.max_streams:
                raise ResourceExhausted(
                    f"{self.max_streams} streams are open on this server, its limit; retry later "
                    "or on another replica",
                    reason="STREAM_LIMIT",
                    limit=self.max_streams,
                )
            mine = self._streams_of.get(address, 0)
            if self.streams_per_address and mine >= self.streams_per_address:
                raise ResourceExhausted(
                    f"{address} has {mine} streams open here, the limit per client address",
                    reason="ADDRESS_STREAM_LIMIT",
                    limit=self.streams_per_address,
                )
            self.streams += 1
            self._streams_of[address] = mine + 1
            STREAMS_OPEN.inc()
        self._calls_of_connection[connection] = self._calls_of_connection.get(connection, 0) + 1
        self._connections_of.setdefault(address, set()).add(connection)

        def leave() -> None:
            left = self._calls_of_connection[connection] - 1
            if left:
                self._calls_of_connection[connection] = left
            else:
                del self._calls_of_connection[connection]
                held = self._connections_of[address]
                held.discard(connection)
                if not held:
                    del self._connections_of[address]
            if stream:
                self.streams -= 1
                STREAMS_OPEN.dec()
                n = self._streams_of[address] - 1
                if n:
                    self._streams_of[address] = n
                else:
                    del self._streams_of[address]

        return leave


class AsyncServerInterceptor(CallPolicy, grpc.aio.ServerInterceptor):
    """The threaded model's interceptor (:class:`infra.interceptor.ServerInterceptor`) for coroutine
    handlers: log context, metrics, internal methods, errors as rich statuses; and the
    :class:`CallLimits` of every call."""

    def __init__(
        self,
        limits: CallLimits,
        *,
        internal: frozenset[tuple[str, str]] = frozenset(),
        serving: Serving = PLAINTEXT,
        callers: dict[str, frozenset[str]] | None = None,
    ) -> None:
        self.limits = limits
        super().__init__(internal, serving, callers)

    async def intercept_service(self, continuation, handler_call_details):
        return self._rewrap(await continuation(handler_call_details), handler_call_details.method)

    @staticmethod
    async def _abort(context, status) -> None:
        """End the call with ``status`` (a google.rpc.Status), its details included."""
        if status.details:
            s = rpc_status.to_status(status)
            await context.abort(s.code, s.details, s.trailing_metadata)
        await context.abort(status_code(status.code), status.message)

    def _wrap_unary(self, fn, service: str, method: str):
        blocking = not inspect.iscoroutinefunction(fn)

        async def wrapper(request, context):
            async with self._call_scope(service, method, context, request, stream=False):
                if blocking:  # a plain function: never on the loop
                    return await run_blocking(fn, request, context)
                return await fn(request, context)

        return wrapper

    def _wrap_stream(self, fn, service: str, method: str):
        if inspect.iscoroutinefunction(fn):  # writes with context.write(): no generator
            return self._wrap_writer(fn, service, method)
        if not inspect.isasyncgenfunction(fn):
            raise TypeError(f"{service}/{method}: a stream handler of the asyncio model is async")

        async def wrapper(request, context):
            async with self._call_scope(service, method, context, request, stream=True) as span:
                messages = fn(request, context)
                if span is not None:  # each message a span of its own, linked
                    messages = tracing_grpc.sent_messages_async(messages, span, method)
                async for message in messages:
                    yield message

        return wrapper

    def _wrap_writer(self, fn, service: str, method: str):
        async def wrapper(request, context):
            async with self._call_scope(service, method, context, request, stream=True) as span:
                if span is not None:  # each write a span of its own, linked
                    context = tracing_grpc.WritingContext(context, span, method)
                await fn(request, context)

        return wrapper

    @contextlib.asynccontextmanager
    async def _call_scope(self, service: str, method: str, context, request, *, stream: bool):
        """What every call runs inside: its span (:func:`infra.tracing.server_span`, yielded),
        the log context, the internal-method check, then its place in the :class:`CallLimits`
        (so unauthenticated callers never hold a stream), its errors as statuses, its
        metrics."""
        start, code = time.perf_counter(), "OK"
        leave = None
        span = tracing.server_span(service, method, context, request)
        try:
            with rpc_context(method, context.peer(), self._serving):
                try:
                    self._authorize(service, method, context)
                    leave = self.limits.enter(context.peer(), stream=stream)
                    yield span
                except asyncio.CancelledError:
                    code = "CANCELLED"  # the client went away
                    raise
                except grpc.aio.AbortError:
                    code = _code_name(context)
                    raise
                except Exception as exc:
                    status = error_status(exc, service, method)
                    code = status_code(status.code).name
                    await self._abort(context, status)
        finally:
            if leave is not None:
                leave()
            record_rpc(service, method, code, start)
            tracing.end_server_span(span, code)


def _code_name(context) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    if isinstance(code, int):
        return status_code(code).name
    return "UNKNOWN"


# Calls gRPC core holds for the server beyond its open-stream limit (unary calls, refusals).
BACKLOG_HEADROOM = 10_000
BACKLOG_UNLIMITED = 100_000  # the backlog when the server sets no stream limit


def backlog_options(config: Config) -> list[tuple[str, int]]:
    """How many calls gRPC core holds that the event loop has not picked up yet. The asyncio
    server takes its calls from core one at a time, so a burst of new streams (hundreds of
    spectators opening at once) waits in core's backlog; past its defaults (1,000, then random
    early drops up to 3,000) core ends the calls itself — bare ``CANCELLED``, before any handler
    sees them. Held up to the server's own limits instead, every call reaches
    :class:`CallLimits`: served, or refused ``RESOURCE_EXHAUSTED`` with a reason. (A call core
    holds for 30 s unpicked still ends ``CANCELLED``: an event loop that far behind is
    overloaded.)"""
    depth = (config.max_streams or BACKLOG_UNLIMITED) + BACKLOG_HEADROOM
    return [
        ("grpc.server.max_pending_requests", depth),
        ("grpc.server.max_pending_requests_hard_limit", depth),
    ]


# --- the worker pool ------------------------------------------------------------------------
def run_blocking(fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Run ``fn(*args)`` in the server's worker threads with the caller's context variables (the
    log context, the serving token), so a blocking call never stalls the event loop."""
    loop = asyncio.get_running_loop()
    ctx = contextvars.copy_context()
    return loop.run_in_executor(None, ctx.run, fn, *args)  # the server's pool


class AsyncRunningServer:
    """A started asyncio service, with the interface of :class:`infra.server.RunningServer`:
    its bound port, ``address``, ``resource``, ``stop`` and ``wait``. Its event loop runs in a
    thread of its own, so ``start`` and ``stop`` are called from ordinary code (tests, serve)."""

    def __init__(self, spec: ServiceSpec, config: Config) -> None:
        self.spec = spec
        self.config = config
        self._names = list(spec.service_names)
        self.pool = futures.ThreadPoolExecutor(
            max_workers=config.max_workers, thread_name_prefix=spec.name
        )
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(self.pool)
        self._thread = threading.Thread(
            target=self.loop.run_forever, name=f"{spec.name}-loop", daemon=True
        )
        self._thread.start()
        self._stopped = threading.Event()
        self._terminated = threading.Event()
        try:
            self._call(self._build())
        except BaseException:
            self._close_loop()
            raise

    def _call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def _build(self) -> None:
        config, spec = self.config, self.spec
        self.limits = CallLimits(
            config.max_streams, config.max_streams_per_address, config.max_connections_per_address
        )
        STREAM_LIMIT.set(config.max_streams)
        self.server = grpc.aio.server(
            interceptors=[
                AsyncServerInterceptor(
                    self.limits,
                    internal=frozenset((s, m) for s in self._names for m in spec.internal_methods),
                    serving=serving_of(config),
                    callers=spec.callers,
                )
            ],
            options=[
                ("grpc.so_reuseport", 0),
                *keepalive_options(config),
                *backlog_options(config),
            ],
            maximum_concurrent_rpcs=None,
        )
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        # Bound first, so the service is given the ports it got (infra.binding.bound_config).
        self.ports = bind(self.server, spec, config)
        self.port = self.ports.port
        self.config = config = bound_config(config, self.ports)
        try:
            self.resource = spec.add_to_server(self.server, config)
            if config.reflection:
                reflection.enable_server_reflection(reflected(spec, config), self.server)
            self.metrics_port = serve_metrics(spec, config)
        except BaseException:
            await self.server.stop(0)
            raise

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    @property
    def internal_address(self) -> str:
        return f"{self.config.host}:{self.ports.internal_port or self.port}"

    def start(self) -> AsyncRunningServer:
        async def go() -> None:
            await self.server.start()
            for name in ["", *self._names]:
                await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

        self._call(go())
        log_serving(self.spec, self.config, self.ports, self.metrics_port, "asyncio")
        return self

    def stop(self, grace: float | None = None, drain: float = 0.0) -> None:
        """Health NOT_SERVING and the service's ``before_stop``, wait ``drain`` seconds so
        balancers notice, then stop accepting calls and give those in flight ``grace`` seconds;
        then the service's resources."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._call(self.health.enter_graceful_shutdown())
        resource_hook(self.resource, "before_stop")
        if drain > 0:
            time.sleep(drain)
        self._call(self.server.stop(self.config.grace_seconds if grace is None else grace))
        resource_hook(self.resource, "close")
        tracing.flush()
        self._close_loop()
        log.info("stopped", service=self.spec.name)

    def _close_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.pool.shutdown(wait=False, cancel_futures=True)
        self._terminated.set()

    def wait(self) -> None:
        self._terminated.wait()
