"""A gRPC service for browsers: the Connect and gRPC-Web protocols on an HTTP port.

Browsers cannot speak gRPC (no HTTP/2 trailers from ``fetch``), so a service that browsers use
also answers on an HTTP/1.1 port (:class:`WebServer`). The framing is PyPI ``connectrpc``'s
public ASGI application (``connectrpc.server.ConnectASGIApplication``: both protocols, unary and
server-streaming calls, binary and JSON codecs; no hand-written framing here), served by
``uvicorn`` on an asyncio event loop: the service's own (the gateway's ``grpc.aio`` loop) or one
beside it in a thread (a threaded server). An open stream is a suspended coroutine, not a
thread, and a browser that leaves is seen at once (its connection closes, the server's
``http.disconnect`` cancels the call): no stream is ever ended for being old.

Every call runs the *same* servicer method as over gRPC (:class:`ServiceBinding`), with a context
whose ``invocation_metadata()`` are the HTTP headers, inside the same
:func:`infra.server.rpc_context` (log context, the internal token
:func:`infra.server.from_internal_caller` checks), its errors answered by the same
:func:`infra.server.error_status` (code, message and the ``google.rpc.ErrorInfo`` detail) and
counted in the same metrics. So a browser call can do nothing a gRPC call with the same token
and metadata cannot. A servicer of coroutines (``grpc.aio``'s kind) runs on the loop; a plain
one's calls run in worker threads, its streams each in a thread while they wait.

Also here: CORS for the listed origins only (:class:`Cors`; none by default: the page the server
itself serves needs none) and the static files of a built web page (:class:`StaticFiles`).

Any service may open such a port (the gateway for the whole GatewayService and the web table,
matchmaking for its public methods): :func:`add_web_arguments` adds the ``--web-*`` flags and
:func:`web_server` starts the port they describe, for the methods a browser may call (a browser
presents no workload certificate, so a method only the deployment calls is never served here:
``methods`` leaves it out, and a call to it is answered NOT_FOUND like any unknown path).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import inspect
import ipaddress
import mimetypes
import socket
import ssl
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import structlog
import uvicorn
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

from infra.ports import listen_port, port_value
from infra.server import (
    TLS_NO_TOKEN,
    BindError,
    Config,
    Serving,
    error_status,
    record_rpc,
    rpc_context,
    serving_of,
    status_code,
    tls_files,
)
from infra.tls import RELOAD_CHECK_SECONDS, TLSFiles
from shared.errors import ResourceExhausted

log = structlog.get_logger("mahjong.web")

# Streams one web port holds at once by default (--web-max-streams): each costs a connection
# (a file descriptor) and about 10 KiB, not a thread; past it a stream ends RESOURCE_EXHAUSTED.
DEFAULT_MAX_STREAMS = 20_000
# How long open calls get to finish when the port closes; streams are then cancelled (the page
# opens its stream again, on another replica).
CLOSE_GRACE_SECONDS = 1.0

WEB_STREAMS_OPEN = Gauge(
    "mahjong_web_streams_open", "Server streams open now on the web port (Connect, gRPC-Web)."
)

# Headers a browser must be allowed to send and to read for Connect and gRPC-Web (the lists the
# Connect project publishes for CORS), plus the internal token's.
ALLOWED_HEADERS = (
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-accept-encoding",
    "connect-content-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    "x-mahjong-internal-token",
)
EXPOSED_HEADERS = (
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "connect-content-encoding",
    "connect-accept-encoding",
    "content-encoding",
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


Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return ""


async def _respond(send: Send, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Cors:
    """CORS for the listed origins (``*`` = any, never the default): preflights answered, and
    the headers Connect and gRPC-Web need allowed and exposed. Other origins get no CORS
    headers, so their pages cannot read an answer (their preflight is refused outright)."""

    def __init__(self, app: Callable[..., Awaitable[None]], origins: Iterable[str]) -> None:
        self.app = app
        self.origins = frozenset(o.strip().rstrip("/") for o in origins if o.strip())

    def allowed(self, origin: str) -> bool:
        return bool(origin) and ("*" in self.origins or origin in self.origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        origin = _header(scope, b"origin")
        allowed = self.allowed(origin)
        if scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method"):
            if not allowed:
                text = f"origin {origin or '(none)'} is not allowed (--web-cors-origins)"
                await _respond(
                    send, 403, [("Content-Type", "text/plain"), ("Vary", "Origin")], text.encode()
                )
                return
            await _respond(
                send,
                204,
                [
                    ("Access-Control-Allow-Origin", origin),
                    ("Access-Control-Allow-Methods", "POST, GET, OPTIONS"),
                    ("Access-Control-Allow-Headers", ", ".join(ALLOWED_HEADERS)),
                    ("Access-Control-Max-Age", "7200"),
                    ("Vary", "Origin"),
                ],
                b"",
            )
            return
        if not allowed:
            return await self.app(scope, receive, send)
        extra = [
            (b"access-control-allow-origin", origin.encode()),
            (b"access-control-expose-headers", ", ".join(EXPOSED_HEADERS).encode()),
            (b"vary", b"Origin"),
        ]

        async def with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, with_cors)


class StaticFiles:
    """A built web page (``root``: Vite's ``dist/``) on GET, every other request to ``app``.
    ``/`` and unknown paths without a dot (the page's own routes) get ``index.html``."""

    def __init__(self, app: Callable[..., Awaitable[None]], root: Path | None) -> None:
        self.app = app
        self.root = root.resolve() if root else None

    def _file(self, path: str) -> Path | None:
        if self.root is None:
            return None
        rel = path.lstrip("/") or "index.html"
        target = (self.root / rel).resolve()
        if not target.is_relative_to(self.root):
            return None
        if target.is_file():
            return target
        if "." not in Path(rel).name:
            index = self.root / "index.html"
            return index if index.is_file() else None
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in ("GET", "HEAD")
            or _header(scope, b"content-type")
        ):
            return await self.app(scope, receive, send)
        path = scope.get("path") or "/"
        found = self._file(path)
        if found is None:
            if path in ("/", "/index.html"):
                text = b"no web page is built here: run make web (or give --web-root)\n"
                await _respond(send, 404, [("Content-Type", "text/plain; charset=utf-8")], text)
                return
            return await self.app(scope, receive, send)
        body = found.read_bytes()  # the page's few small files, read once per request
        kind = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
        cache = "no-cache" if found.name == "index.html" else "public, max-age=31536000, immutable"
        headers = [
            ("Content-Type", kind),
            ("Content-Length", str(len(body))),
            ("Cache-Control", cache),
        ]
        await _respond(send, 200, headers, b"" if scope["method"] == "HEAD" else body)


class WebServer:
    """The HTTP port: ``binding``'s service over Connect and gRPC-Web, CORS for ``origins``,
    and the page in ``web_root`` (if given). ``port`` 0 picks a free one (:attr:`port`).

    It runs on ``loop`` (a running event loop in another thread, the service's own), else on
    an event loop of its own in a thread (whose worker threads, ``workers``, run a plain
    servicer's calls). The socket is bound here, so a port in use fails at start-up."""

    def __init__(
        self,
        binding: ServiceBinding,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        origins: Iterable[str] = (),
        web_root: Path | None = None,
        tls: TLSFiles | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        workers: int = 16,
    ) -> None:
        self.binding = binding
        try:
            self.socket = socket.create_server(
                (host, port),
                family=socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET,
                backlog=4096,
            )
        except OSError as exc:
            raise BindError(
                f"cannot serve the web port on {host}:{port} ({exc.strerror or exc}); choose "
                "another with --web-port (0 = off)"
            ) from None
        self.host = host
        self.port = self.socket.getsockname()[1]
        self.tls = tls.check("--web-tls-dir") if tls is not None else None
        # made here, so unreadable files fail at start-up, not in the server's task
        self._ssl = ReloadingContext(self.tls).context if self.tls is not None else None
        app = StaticFiles(Cors(connect_app(binding), origins), web_root)
        self.config = uvicorn.Config(
            app,
            http="httptools",  # uvicorn's faster parser (measured: see README)
            ws="none",
            lifespan="off",
            log_config=None,  # the service's logging (structlog) stays as it is
            access_log=False,
            proxy_headers=False,  # the peer is the connection's: no X-Forwarded-For trusted
            server_header=False,
            timeout_keep_alive=30,
            timeout_graceful_shutdown=int(CLOSE_GRACE_SECONDS),
            ssl_context_factory=self._ssl_context if self._ssl is not None else None,
        )
        self.server = uvicorn.Server(self.config)
        self._own_loop = loop is None
        self._pool: futures.ThreadPoolExecutor | None = None
        if loop is None:
            loop = asyncio.new_event_loop()
            self._pool = futures.ThreadPoolExecutor(workers, thread_name_prefix="web")
            loop.set_default_executor(self._pool)
            threading.Thread(target=loop.run_forever, name="web-loop", daemon=True).start()
        self.loop = loop
        self._task: asyncio.Future[None] | None = None

    def _ssl_context(self, _config: Any, _default: Any) -> ssl.SSLContext:
        assert self._ssl is not None
        return self._ssl

    @property
    def url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def start(self) -> WebServer:
        async def serve() -> None:
            await self.server.serve(sockets=[self.socket])

        async def started() -> None:
            self._task = asyncio.ensure_future(serve())
            while not self.server.started and not self._task.done():
                await asyncio.sleep(0.01)
            if self._task.done():
                self._task.result()

        self._run(started())
        log.info("web_serving", url=self.url)
        return self

    def _run(self, coro: Awaitable[Any], timeout: float | None = 10.0) -> Any:
        """``coro`` on the server's loop, from any thread (the loop's own cannot wait here)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:  # called on the loop (a service's set-up): just schedule it
            return asyncio.ensure_future(coro)
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)  # type: ignore[arg-type]

    def close(self) -> None:
        """Stop taking connections; calls in flight get :data:`CLOSE_GRACE_SECONDS`, then open
        streams are cancelled (their pages open them again elsewhere)."""

        async def stop() -> None:
            self.server.should_exit = True
            if self._task is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(self._task), CLOSE_GRACE_SECONDS + 3)
                except TimeoutError:
                    self.server.force_exit = True
                    self._task.cancel()

        if not self.loop.is_closed() and self.loop.is_running():
            with contextlib.suppress(futures.TimeoutError, RuntimeError):
                self._run(stop(), CLOSE_GRACE_SECONDS + 5)
        self.socket.close()
        if self._own_loop:
            self.loop.call_soon_threadsafe(self.loop.stop)
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)


class ReloadingContext:
    """HTTPS from a TLS directory (:class:`infra.tls.TLSFiles`): a server context whose
    handshakes look at the files again (every :data:`infra.tls.RELOAD_CHECK_SECONDS` at most)
    and take a changed certificate for new connections (a rotation needs no restart)."""

    def __init__(self, files: TLSFiles) -> None:
        self._files = files
        self._stamp = files.stamp()
        self._looked = time.monotonic()
        self._lock = threading.Lock()
        self.current = self._load()
        self.context = self._load()  # the one the server holds: it hands over to ``current``
        self.context.sni_callback = self._handshake

    def _load(self) -> ssl.SSLContext:
        cert, key, _ = self._files.paths
        context = ssl.create_default_context(purpose=ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(cert), str(key))
        return context

    def _handshake(self, connection: Any, _server_name: str | None, _context: Any) -> None:
        self._reload()
        if self.current is not self.context:
            connection.context = self.current

    def _reload(self) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._looked < RELOAD_CHECK_SECONDS:
                return
            self._looked = now
            stamp = self._files.stamp()
            if stamp == self._stamp:
                return
            try:
                context = self._load()
            except (OSError, ssl.SSLError) as exc:  # mid-rotation: keep serving the old pair
                log.warning("web_certificate_reload_failed", error=str(exc))
                return
            self._stamp = stamp
            self.current = context
            log.info("web_certificate_reloaded", certificate=str(self._files.paths[0]))


# --- a service's web port from its flags -------------------------------------------------------
def add_web_arguments(
    p: argparse.ArgumentParser,
    local_port: int,
    *,
    what: str = "the same API",
    root: str = "",
    max_streams: int = DEFAULT_MAX_STREAMS,
) -> None:
    """The ``--web-*`` flags of a service's web port (``local_port``: the one ``mahjong run``
    opens); ``root``: the default of ``--web-root`` (the page served), none without one;
    ``max_streams``: the default of ``--web-max-streams`` (lower for a servicer whose open
    streams each wait in a thread)."""
    p.add_argument(
        "--web-port",
        type=port_value,
        default=0,
        help=f"HTTP port for browsers: {what} over Connect and gRPC-Web (0: off; auto: one the "
        f"OS picks; mahjong run uses {local_port})",
    )
    p.add_argument(
        "--web-cors-origins",
        default="",
        help="comma-separated origins whose pages may call the web port (e.g. "
        "http://localhost:5173); empty: only the page it serves itself; * any (never in "
        "production)",
    )
    if root:
        p.add_argument(
            "--web-root", default=root, help="the built web page to serve (empty: the API only)"
        )
    p.add_argument(
        "--web-tls-dir",
        default="",
        help="tls.crt and tls.key (and ca.crt) for HTTPS on the web port; empty: plain HTTP, "
        "allowed only on a loopback address",
    )
    p.add_argument(
        "--web-max-streams",
        type=int,
        default=max_streams,
        help="streams the web port holds at once; past it a stream ends RESOURCE_EXHAUSTED "
        "(0: no limit)",
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def web_tls(config: Config, tls: TLSFiles | None, service: str = "") -> TLSFiles | None:
    """The web port's HTTPS files: ``--web-tls-dir``; none (plain HTTP) only on a loopback
    address (browsers treat loopback as a secure context) or on a plaintext server. The refusal
    names ``service``'s environment variable for the flag."""
    directory = str(config.extra.get("web_tls_dir", ""))
    if directory:
        return TLSFiles(Path(directory))
    if tls is None or is_loopback(config.host):
        return None
    env = f" (MAHJONG_{service.upper()}_WEB_TLS_DIR)" if service else ""
    raise BindError(
        f"the web port listens on {config.host}, not loopback: give --web-tls-dir{env} for "
        "HTTPS, or terminate TLS in front of it and say --insecure only in tests"
    )


def check_web_port(service: str) -> Callable[[Config], None]:
    """A service's ``check_config``: a plain-HTTP web port off loopback (:func:`web_tls`) is
    refused before any port is bound."""

    def check(config: Config) -> None:
        if int(config.extra.get("web_port", 0) or 0) != 0:
            web_tls(config, tls_files(config, service), service)

    return check


def web_server(
    servicer: Any,
    descriptor: ServiceDescriptor,
    config: Config,
    tls: TLSFiles | None,
    *,
    service: str = "",
    methods: Collection[str] | None = None,
) -> WebServer | None:
    """The web port of :func:`add_web_arguments`' flags in ``config`` (None when ``--web-port``
    is 0): ``servicer``'s ``methods`` over Connect and gRPC-Web, started (``service``: whose
    settings a refusal names). Called on a running event loop (an asyncio server's set-up), the
    port runs on that loop; else on one of its own, beside the threaded server, whose plain
    calls get ``--max-workers`` threads."""
    x = config.extra
    if int(x.get("web_port", 0) or 0) == 0:
        return None
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    binding = ServiceBinding(
        servicer,
        descriptor,
        serving=serving_of(config),
        max_streams=max(0, int(x.get("web_max_streams", DEFAULT_MAX_STREAMS))),
        methods=methods,
    )
    root = x.get("web_root", "")
    return WebServer(
        binding,
        host=config.host,
        port=listen_port(int(x["web_port"])),
        origins=str(x.get("web_cors_origins", "")).split(","),
        web_root=Path(root) if root else None,
        tls=web_tls(config, tls, service),
        loop=loop,
        workers=max(4, int(config.max_workers or 16)),
    ).start()
