"""A gRPC service for browsers: the Connect and gRPC-Web protocols on an HTTP port.

Browsers cannot speak gRPC (no HTTP/2 trailers from ``fetch``), so a service that browsers use
also answers on an HTTP/1.1 port (:class:`WebServer`). The framing is PyPI ``connectrpc``'s
public ASGI application (``connectrpc.server.ConnectASGIApplication``: both protocols, unary and
server-streaming calls, binary and JSON codecs; no hand-written framing here), served by
``uvicorn`` on an asyncio event loop: the service's own (the gateway's ``grpc.aio`` loop) or one
beside it in a thread (a threaded server). An open stream is a suspended coroutine, not a
thread, and a browser that leaves is seen at once (its connection closes, the server's
``http.disconnect`` cancels the call): no stream is ever ended for being old.

Every call runs the *same* servicer method as over gRPC, in the same log and internal-token
context, its errors answered with the same status (:mod:`infra.web_calls`), so a browser call
can do nothing a gRPC call with the same token and metadata cannot.

Also served: CORS for the listed origins only and the static files of a built web page
(:mod:`infra.web_http`).

Any service may open such a port (the gateway for the whole GatewayService and the web table,
matchmaking for its public methods): :class:`WebSettings` declares the ``--web-*`` flags and
:func:`web_server` starts the port they describe, for the methods a browser may call (a browser
presents no workload certificate, so a method only the deployment calls is never served here:
``methods`` leaves it out, and a call to it is answered NOT_FOUND like any unknown path).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
import uvicorn
from google.protobuf.descriptor import ServiceDescriptor

from infra.addresses import WEB_PORTS
from infra.binding import BindError, tls_files
from infra.config import Config
from infra.interceptor import serving_of
from infra.ports import listen_port, port_value
from infra.settings import PerService, from_flags, setting
from infra.tls import RELOAD_CHECK_SECONDS, TLSFiles
from infra.web_calls import DEFAULT_MAX_STREAMS, ServiceBinding, connect_app
from infra.web_http import Cors, StaticFiles

log = structlog.get_logger("mahjong.web")

# How long open calls get to finish when the port closes; streams are then cancelled (the page
# opens its stream again, on another replica).
CLOSE_GRACE_SECONDS = 1.0


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


# --- a service's web port from its settings -----------------------------------------------------
@dataclass(frozen=True)
class WebPort:
    """A service's web port, as its spec describes it (``ServiceSpec.web``): ``what`` it serves
    (in ``--web-port``'s help), the default of ``--web-root`` (the page served; "": none, and no
    flag) and of ``--web-max-streams`` (lower for a servicer whose open streams each wait in a
    thread, or -1 for the service's own choice)."""

    what: str = "the same API"
    root: str = ""
    max_streams: int = DEFAULT_MAX_STREAMS


def _web(spec: Any) -> WebPort:
    return spec.web if spec is not None and spec.web is not None else WebPort()


@dataclass(frozen=True)
class WebSettings:
    """The ``--web-*`` flags of a service's web port (:class:`WebPort` in its spec)."""

    web_port: int = setting(
        0,
        "--web-port",
        PerService(
            lambda spec: (
                f"HTTP port for browsers: {_web(spec).what} over Connect and gRPC-Web "
                f"(0: off; auto: one the OS picks; mahjong run uses {WEB_PORTS[spec.name]})"
            )
        ),
        parse=port_value,
        applies=lambda spec: spec.web is not None,
    )
    web_cors_origins: str = setting(
        "",
        "--web-cors-origins",
        "comma-separated origins whose pages may call the web port (e.g. "
        "http://localhost:5173); empty: only the page it serves itself; * any (never in "
        "production)",
        applies=lambda spec: spec.web is not None,
    )
    web_root: str = setting(
        "",
        "--web-root",
        "the built web page to serve on the web port (empty: the API only)",
        flag_default=PerService(lambda spec: _web(spec).root),
        applies=lambda spec: spec.web is not None and bool(spec.web.root),
    )
    web_tls_dir: str = setting(
        "",
        "--web-tls-dir",
        "tls.crt and tls.key (and ca.crt) for HTTPS on the web port; empty: plain HTTP, "
        "allowed only on a loopback address",
        applies=lambda spec: spec.web is not None,
    )
    web_max_streams: int = setting(
        DEFAULT_MAX_STREAMS,
        "--web-max-streams",
        "streams the web port holds at once (each a connection, about 10 KiB); past it a "
        "stream ends RESOURCE_EXHAUSTED (0: no limit; negative: the service's number for its "
        "server model)",
        flag_default=PerService(lambda spec: _web(spec).max_streams),
        parse=int,
        applies=lambda spec: spec.web is not None,
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
    directory = from_flags(WebSettings, config.extra).web_tls_dir
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
        if from_flags(WebSettings, config.extra).web_port != 0:
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
    """The web port of the :class:`WebSettings` in ``config`` (None when ``--web-port`` is 0):
    ``servicer``'s ``methods`` over Connect and gRPC-Web, started (``service``: whose settings a
    refusal names). Called on a running event loop (an asyncio server's set-up), the
    port runs on that loop; else on one of its own, beside the threaded server, whose plain
    calls get ``--max-workers`` threads."""
    web = from_flags(WebSettings, config.extra)
    if web.web_port == 0:
        return None
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    binding = ServiceBinding(
        servicer,
        descriptor,
        serving=serving_of(config),
        max_streams=max(0, web.web_max_streams),
        methods=methods,
    )
    return WebServer(
        binding,
        host=config.host,
        port=listen_port(web.web_port),
        origins=web.web_cors_origins.split(","),
        web_root=Path(web.web_root) if web.web_root else None,
        tls=web_tls(config, tls, service),
        loop=loop,
        workers=max(4, int(config.max_workers or 16)),
    ).start()
