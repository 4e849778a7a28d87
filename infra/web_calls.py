"""How a Connect or gRPC-Web call runs a servicer method (:class:`ServiceBinding`).

Every call runs the *same* servicer method as over gRPC, with a context
(:class:`WebCallContext`) whose ``invocation_metadata()`` are the HTTP headers, inside the same
:func:`infra.interceptor.rpc_context` (log context, the internal token
:func:`infra.interceptor.from_internal_caller` checks), its errors answered by the same
:func:`infra.status.error_status` (code, message and the ``google.rpc.ErrorInfo`` detail) and
counted in the same metrics. A servicer of coroutines (``grpc.aio``'s kind) runs on the loop; a
plain one's calls run in worker threads, its streams each in a thread while they wait. The
framing is PyPI ``connectrpc``'s ASGI application (:func:`connect_app`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterable, Iterator
from concurrent import futures
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_codecs
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.rpc import status_pb2
from prometheus_client import Gauge
from protobuf.wkt import Any as WireAny

from infra.interceptor import TLS_NO_TOKEN, Serving, record_rpc, rpc_context
from infra.status import error_status, status_code
from shared.errors import ResourceExhausted

# Streams one web port holds at once by default (--web-max-streams): each costs a connection
# (a file descriptor) and about 10 KiB, not a thread; past it a stream ends RESOURCE_EXHAUSTED.
DEFAULT_MAX_STREAMS = 20_000

WEB_STREAMS_OPEN = Gauge(
    "mahjong_web_streams_open", "Server streams open now on the web port (Connect, gRPC-Web)."
)


def connect_error(status: status_pb2.Status) -> ConnectError:
    """The Connect form of a google.rpc.Status: same code, message and details (each detail's
    type and bytes unchanged, so an ErrorInfo reads the same on every transport)."""
    code = Code[status_code(status.code).name.replace("CANCELLED", "CANCELED")]
    details = [ErrorDetail(WireAny(type_url=d.type_url, value=d.value)) for d in status.details]
    return ConnectError(code, status.message, details)


class Aborted(Exception):
    """A handler's ``await context.abort(...)``: the call ends with ``status``."""

    def __init__(self, status: status_pb2.Status) -> None:
        super().__init__(status.message)
        self.status = status


class WebCallContext:
    """The part of ``grpc.ServicerContext`` (and of ``grpc.aio``'s) a servicer uses, for a call
    over HTTP: the request headers as ``invocation_metadata()``, the peer, ``is_active()`` (false
    once the browser has gone: a plain servicer's stream polls it), ``abort`` and, for a stream
    handler that writes rather than yields, ``write``."""

    def __init__(self, headers: Any, peer: str) -> None:
        self._metadata = tuple((k.lower(), v) for k, v in headers.items())
        self._peer = peer
        self._active = True
        self._writer: Callable[[Any], Awaitable[None]] | None = None

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def peer(self) -> str:
        return self._peer

    def is_active(self) -> bool:
        return self._active

    def cancel(self) -> None:
        """The call is over (its client went away, or it ended): ``is_active()`` turns false."""
        self._active = False

    def time_remaining(self) -> float | None:
        """No deadline reaches a web call (a forwarded call takes its own)."""
        return None

    def writes_with(self, writer: Callable[[Any], Awaitable[None]]) -> None:
        """Where :meth:`write` hands a stream's messages (set by the call's binding)."""
        self._writer = writer

    async def write(self, message: Any) -> None:
        """Send one message of a stream (``grpc.aio``'s ``context.write``); returns once the
        message is taken for sending, so a client that does not read holds the writer."""
        if self._writer is None:
            raise RuntimeError("write() outside a streaming call")
        await self._writer(message)

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> None:
        """End the call with ``code`` and ``details`` (``grpc.aio``'s ``context.abort``); a
        ``grpc-status-details-bin`` in ``trailing_metadata`` brings its details along."""
        status = status_pb2.Status(
            code=code.value[0] if isinstance(code, grpc.StatusCode) else int(code), message=details
        )
        for key, value in trailing_metadata or ():
            if key == "grpc-status-details-bin":
                status.MergeFromString(value)
                status.code = code.value[0] if isinstance(code, grpc.StatusCode) else int(code)
                status.message = details
        raise Aborted(status)


def method_infos(descriptor: ServiceDescriptor) -> dict[str, MethodInfo]:
    """Connect's description of each unary and server-streaming method of a service, read from
    the generated gRPC stubs' descriptors (no second code generator); clients use it too."""
    infos: dict[str, MethodInfo] = {}
    for m in descriptor.methods:
        if m.client_streaming:
            continue  # no client-streaming calls in our contracts (nor in browsers)
        infos[m.name] = MethodInfo(
            name=m.name,
            service_name=descriptor.full_name,
            input=message_factory.GetMessageClass(m.input_type),
            output=message_factory.GetMessageClass(m.output_type),
            idempotency_level=IdempotencyLevel.UNKNOWN,
            stream_type=StreamType.SERVER_STREAM if m.server_streaming else StreamType.UNARY,
        )
    return infos


_END = object()  # a plain stream handler's iterator is exhausted


class ServiceBinding:
    """One servicer's methods as Connect endpoints, each calling the servicer's own method;
    ``methods``: only these (None: every unary and server-streaming method).

    A method may be a coroutine (awaited on the loop), an async generator, a coroutine that
    writes its stream with ``context.write`` (``grpc.aio``'s two kinds of stream handler), or a
    plain function or generator (a threaded server's: run in ``pool``'s worker threads, one held
    by each open stream while it waits). At most ``max_streams`` streams at once (0: no limit),
    counted in :attr:`streams` (touched on the loop only)."""

    def __init__(
        self,
        servicer: Any,
        descriptor: ServiceDescriptor,
        *,
        serving: Serving = TLS_NO_TOKEN,
        max_streams: int = DEFAULT_MAX_STREAMS,
        methods: Collection[str] | None = None,
        pool: futures.Executor | None = None,
    ) -> None:
        self.servicer = servicer
        self.descriptor = descriptor
        self.methods = None if methods is None else frozenset(methods)
        self.serving = serving  # a browser presents no workload certificate: never internal
        self.max_streams = max_streams
        self.streams = 0
        self.pool = pool  # None: the loop's default executor
        self._stream_pool: futures.ThreadPoolExecutor | None = None  # a plain servicer's streams

    @property
    def path(self) -> str:
        return f"/{self.descriptor.full_name}"

    def endpoints(self) -> dict[str, Endpoint]:
        out: dict[str, Endpoint] = {}
        for info in method_infos(self.descriptor).values():
            if self.methods is not None and info.name not in self.methods:
                continue
            handler = getattr(self.servicer, info.name)
            if info.stream_type is StreamType.SERVER_STREAM:
                out[f"{self.path}/{info.name}"] = Endpoint.server_stream(
                    method=info, function=self._stream(info.name, handler)
                )
            else:
                out[f"{self.path}/{info.name}"] = Endpoint.unary(
                    method=info, function=self._unary(info.name, handler)
                )
        return out

    @staticmethod
    def _context(ctx: Any) -> WebCallContext:
        return WebCallContext(ctx.request_headers, f"web:{ctx.client_address or ''}")

    def _blocking(
        self, fn: Callable[..., Any], *args: Any, pool: futures.Executor | None = None
    ) -> asyncio.Future[Any]:
        """``fn(*args)`` in a worker thread, with the call's context variables."""
        ctx = contextvars.copy_context()
        executor = pool or self.pool
        return asyncio.get_running_loop().run_in_executor(executor, ctx.run, fn, *args)

    def _streams_pool(self) -> futures.ThreadPoolExecutor:
        """The threads a plain servicer's open streams wait in (one each, made as needed), apart
        from the workers its unary calls use, so watchers never starve them."""
        if self._stream_pool is None:
            self._stream_pool = futures.ThreadPoolExecutor(
                self.max_streams or 1024, thread_name_prefix="web-stream"
            )
        return self._stream_pool

    def _unary(self, method: str, handler: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
        service = self.descriptor.full_name
        on_loop = inspect.iscoroutinefunction(handler)

        async def call(request: Any, ctx: Any) -> Any:
            start, code = time.perf_counter(), ["OK"]
            web = self._context(ctx)
            try:
                with rpc_context(method, web.peer(), self.serving):
                    try:
                        if on_loop:
                            return await handler(request, web)
                        return await self._blocking(handler, request, web)
                    except asyncio.CancelledError:
                        code[0] = "CANCELLED"  # the browser went away
                        raise
                    except Exception as exc:
                        raise self._error(exc, method, code) from None
            finally:
                web.cancel()
                record_rpc(service, method, code[0], start)

        return call

    def _error(self, exc: Exception, method: str, code: list[str]) -> ConnectError:
        """The Connect error a handler's exception is answered with; its code name in ``code``."""
        if isinstance(exc, Aborted):
            status = exc.status
        else:
            status = error_status(exc, self.descriptor.full_name, method)
        code[0] = status_code(status.code).name
        return connect_error(status)

    def _stream(
        self, method: str, handler: Callable[..., Any]
    ) -> Callable[..., AsyncIterator[Any]]:
        service = self.descriptor.full_name
        if inspect.isasyncgenfunction(handler):
            messages: Callable[[Any, WebCallContext], AsyncIterator[Any]] = handler
        elif inspect.iscoroutinefunction(handler):
            messages = _written(handler)
        else:
            messages = self._threaded(handler)

        async def call(request: Any, ctx: Any) -> AsyncIterator[Any]:
            start, code = time.perf_counter(), ["OK"]
            web = self._context(ctx)
            held = False
            try:
                with rpc_context(method, web.peer(), self.serving):
                    try:
                        if self.max_streams and self.streams >= self.max_streams:
                            raise ResourceExhausted(
                                f"{self.max_streams} web streams are open on this server, its "
                                "limit; retry later or on another replica",
                                reason="STREAM_LIMIT",
                                limit=self.max_streams,
                            )
                        held = True
                        self.streams += 1
                        WEB_STREAMS_OPEN.inc()
                        async for message in messages(request, web):
                            yield message
                    except (asyncio.CancelledError, GeneratorExit):
                        code[0] = "CANCELLED"  # the browser went away
                        raise
                    except Exception as exc:
                        raise self._error(exc, method, code) from None
            finally:
                web.cancel()
                if held:
                    self.streams -= 1
                    WEB_STREAMS_OPEN.dec()
                record_rpc(service, method, code[0], start)

        return call

    def _threaded(
        self, handler: Callable[[Any, WebCallContext], Iterable[Any]]
    ) -> Callable[[Any, WebCallContext], AsyncIterator[Any]]:
        """A plain generator's stream: each next message taken in a worker thread. When the
        call ends early, ``is_active()`` turns false (the handler's own poll sees it) and the
        generator is closed in the thread once its pending step returns."""

        async def messages(request: Any, web: WebCallContext) -> AsyncIterator[Any]:
            pool = self._streams_pool()
            it: Iterator[Any] = iter(await self._blocking(handler, request, web, pool=pool))
            step: asyncio.Future[Any] | None = None
            try:
                while True:
                    step = self._blocking(next, it, _END, pool=pool)
                    message = await step
                    step = None
                    if message is _END:
                        return
                    yield message
            finally:
                web.cancel()
                close = getattr(it, "close", None)
                if close is not None:
                    if step is None:
                        await self._blocking(close, pool=pool)
                    else:  # still running in its thread: closed when it returns
                        step.add_done_callback(lambda _: pool.submit(close))

        return messages


def _written(
    handler: Callable[[Any, WebCallContext], Awaitable[None]],
) -> Callable[[Any, WebCallContext], AsyncIterator[Any]]:
    """A stream handler that writes with ``await context.write(m)`` (as ``grpc.aio`` allows) as
    an async iterator: each write hands one message over and waits until it is taken, so the
    handler runs no further ahead of the client than gRPC's flow control would let it."""

    async def messages(request: Any, web: WebCallContext) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        slot: asyncio.Future[Any] = loop.create_future()  # the next message, when written
        taken: asyncio.Future[None] = loop.create_future()

        async def write(message: Any) -> None:
            slot.set_result(message)
            await taken

        web.writes_with(write)
        task = asyncio.ensure_future(handler(request, web))
        try:
            while True:
                await asyncio.wait((slot, task), return_when=asyncio.FIRST_COMPLETED)
                if slot.done():
                    message = slot.result()
                    slot, taken, done = loop.create_future(), loop.create_future(), taken
                    yield message
                    done.set_result(None)
                    continue
                task.result()  # the handler's error, if it raised
                return
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    return messages


def connect_app(binding: ServiceBinding) -> Callable[..., Awaitable[None]]:
    """The ASGI application answering Connect and gRPC-Web calls of ``binding``'s service."""

    class App(ConnectASGIApplication[ServiceBinding]):
        @property
        def path(self) -> str:
            return binding.path

    return App(service=binding, endpoints=ServiceBinding.endpoints, codecs=google_protobuf_codecs())
