"""A gRPC service for browsers: the Connect and gRPC-Web protocols on an HTTP port.

Browsers cannot speak gRPC (no HTTP/2 trailers from ``fetch``), so a service that browsers use
also answers on an HTTP/1.1 port (:class:`WebServer`). The framing is PyPI ``connectrpc``'s WSGI
application (both protocols, unary and server-streaming calls, binary and JSON codecs; no
hand-written framing here), served by ``cheroot``'s threaded WSGI server. Every call runs the
*same* servicer method as over gRPC (:func:`endpoints`), with a context whose
``invocation_metadata()`` are the HTTP headers, inside the same :func:`shared.server.rpc_context`
(log context, the internal token :func:`shared.server.from_internal_caller` checks), its errors
answered by the same :func:`shared.server.error_status` (code, message and the
``google.rpc.ErrorInfo`` detail) and counted in the same metrics. So a browser call can do
nothing a gRPC call with the same token and metadata cannot.

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
import ipaddress
import mimetypes
import ssl
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

import structlog
from cheroot import wsgi
from cheroot.ssl.builtin import BuiltinSSLAdapter
from connectrpc._server_shared import EndpointSync
from connectrpc._server_sync import ConnectWSGIApplication
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_codecs
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.rpc import status_pb2
from protobuf.wkt import Any as WireAny

from shared.errors import ResourceExhausted
from shared.ports import listen_port, port_value
from shared.server import (
    TLS_NO_TOKEN,
    BindError,
    Config,
    Serving,
    error_status,
    record_rpc,
    rpc_context,
    serving_of,
    status_code,
    stream_limit,
    tls_files,
)
from shared.tls import RELOAD_CHECK_SECONDS, TLSFiles

log = structlog.get_logger("mahjong.web")

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


class WebCallContext:
    """The part of ``grpc.ServicerContext`` a servicer uses, for a call over HTTP: the request
    headers as ``invocation_metadata()``, the peer, and ``is_active()`` — false once the stream
    has run ``max_seconds`` (a browser resumes from its last sequence number; a stream on a quiet
    table would otherwise hold its thread after the browser is gone, which WSGI cannot see)."""

    def __init__(self, headers: Any, peer: str, max_seconds: float) -> None:
        self._metadata = tuple((k.lower(), v) for k, v in headers.items())
        self._peer = peer
        self._until = time.monotonic() + max_seconds

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def peer(self) -> str:
        return self._peer

    def is_active(self) -> bool:
        return time.monotonic() < self._until

    def time_remaining(self) -> float | None:
        """No deadline reaches a WSGI call (a forwarded call takes its own)."""
        return None


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


class ServiceBinding:
    """One servicer's methods as Connect endpoints, each calling the servicer's own method;
    ``methods``: only these (None: every unary and server-streaming method)."""

    def __init__(
        self,
        servicer: Any,
        descriptor: ServiceDescriptor,
        *,
        serving: Serving = TLS_NO_TOKEN,
        max_streams: int = 64,
        stream_seconds: float = 300.0,
        methods: Collection[str] | None = None,
    ) -> None:
        self.servicer = servicer
        self.descriptor = descriptor
        self.methods = None if methods is None else frozenset(methods)
        self.serving = serving  # a browser presents no workload certificate: never internal
        self.stream_seconds = stream_seconds
        self.max_streams = max_streams
        self._streams = threading.BoundedSemaphore(max_streams)

    @property
    def path(self) -> str:
        return f"/{self.descriptor.full_name}"

    def endpoints(self) -> dict[str, EndpointSync]:
        out: dict[str, EndpointSync] = {}
        for info in method_infos(self.descriptor).values():
            if self.methods is not None and info.name not in self.methods:
                continue
            handler = getattr(self.servicer, info.name)
            if info.stream_type is StreamType.SERVER_STREAM:
                function = self._stream(info.name, handler)
                endpoint = EndpointSync.server_stream(method=info, function=function)
            else:
                endpoint = EndpointSync.unary(method=info, function=self._unary(info.name, handler))
            out[f"{self.path}/{info.name}"] = endpoint
        return out

    def _context(self, ctx: Any) -> WebCallContext:
        return WebCallContext(
            ctx.request_headers, f"web:{ctx.client_address or ''}", self.stream_seconds
        )

    def _unary(self, method: str, handler: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        service = self.descriptor.full_name

        def call(request: Any, ctx: Any) -> Any:
            start, code = time.perf_counter(), "OK"
            web = self._context(ctx)
            try:
                with rpc_context(method, web.peer(), self.serving):
                    try:
                        return handler(request, web)
                    except Exception as exc:
                        status = error_status(exc, service, method)
                        code = status_code(status.code).name
                        raise connect_error(status) from None
            finally:
                record_rpc(service, method, code, start)

        return call

    def _stream(
        self, method: str, handler: Callable[[Any, Any], Iterable[Any]]
    ) -> Callable[..., Any]:
        service = self.descriptor.full_name

        def call(request: Any, ctx: Any) -> Iterator[Any]:
            start, code = time.perf_counter(), "OK"
            web = self._context(ctx)
            held = self._streams.acquire(blocking=False)
            try:
                with rpc_context(method, web.peer(), self.serving):
                    try:
                        if not held:
                            raise ResourceExhausted(
                                f"{self.max_streams} web streams are open on this server, its "
                                "limit; retry later or on another replica"
                            )
                        yield from handler(request, web)
                    except GeneratorExit:
                        code = "CANCELLED"  # the browser went away
                        raise
                    except Exception as exc:
                        status = error_status(exc, service, method)
                        code = status_code(status.code).name
                        raise connect_error(status) from None
            finally:
                if held:
                    self._streams.release()
                record_rpc(service, method, code, start)

        return call


def connect_app(binding: ServiceBinding) -> Callable[..., Iterable[bytes]]:
    """The WSGI application answering Connect and gRPC-Web calls of ``binding``'s service."""

    class App(ConnectWSGIApplication):
        @property
        def path(self) -> str:
            return binding.path

    return App(endpoints=binding.endpoints(), codecs=google_protobuf_codecs())


class Cors:
    """CORS for the listed origins (``*`` = any, never the default): preflights answered, and
    the headers Connect and gRPC-Web need allowed and exposed. Other origins get no CORS
    headers, so their pages cannot read an answer (their preflight is refused outright)."""

    def __init__(self, app: Callable[..., Iterable[bytes]], origins: Iterable[str]) -> None:
        self.app = app
        self.origins = frozenset(o.strip().rstrip("/") for o in origins if o.strip())

    def allowed(self, origin: str) -> bool:
        return bool(origin) and ("*" in self.origins or origin in self.origins)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]):
        origin = environ.get("HTTP_ORIGIN", "")
        allowed = self.allowed(origin)
        if environ["REQUEST_METHOD"] == "OPTIONS" and environ.get(
            "HTTP_ACCESS_CONTROL_REQUEST_METHOD"
        ):
            if not allowed:
                start_response(
                    "403 Forbidden", [("Content-Type", "text/plain"), ("Vary", "Origin")]
                )
                return [f"origin {origin or '(none)'} is not allowed (--web-cors-origins)".encode()]
            start_response(
                "204 No Content",
                [
                    ("Access-Control-Allow-Origin", origin),
                    ("Access-Control-Allow-Methods", "POST, GET, OPTIONS"),
                    ("Access-Control-Allow-Headers", ", ".join(ALLOWED_HEADERS)),
                    ("Access-Control-Max-Age", "7200"),
                    ("Vary", "Origin"),
                ],
            )
            return []

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None):
            if allowed:
                headers = [
                    *headers,
                    ("Access-Control-Allow-Origin", origin),
                    ("Access-Control-Expose-Headers", ", ".join(EXPOSED_HEADERS)),
                    ("Vary", "Origin"),
                ]
            return start_response(status, headers, exc_info)

        return self.app(environ, start)


class StaticFiles:
    """A built web page (``root``: Vite's ``dist/``) on GET, every other request to ``app``.
    ``/`` and unknown paths without a dot (the page's own routes) get ``index.html``."""

    def __init__(self, app: Callable[..., Iterable[bytes]], root: Path | None) -> None:
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

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]):
        if environ["REQUEST_METHOD"] not in ("GET", "HEAD") or environ.get("CONTENT_TYPE"):
            return self.app(environ, start_response)
        path = environ.get("PATH_INFO") or "/"
        found = self._file(path)
        if found is None:
            if path in ("/", "/index.html"):
                start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
                return [b"no web page is built here: run make web (or give --web-root)\n"]
            return self.app(environ, start_response)
        body = found.read_bytes()
        kind = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
        cache = "no-cache" if found.name == "index.html" else "public, max-age=31536000, immutable"
        start_response(
            "200 OK",
            [("Content-Type", kind), ("Content-Length", str(len(body))), ("Cache-Control", cache)],
        )
        return [] if environ["REQUEST_METHOD"] == "HEAD" else [body]


class WebServer:
    """The HTTP port: ``binding``'s service over Connect and gRPC-Web, CORS for ``origins``,
    and the page in ``web_root`` (if given). ``port`` 0 picks a free one (:attr:`port`)."""

    def __init__(
        self,
        binding: ServiceBinding,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        origins: Iterable[str] = (),
        web_root: Path | None = None,
        threads: int = 64,
        tls: TLSFiles | None = None,
    ) -> None:
        app = StaticFiles(Cors(connect_app(binding), origins), web_root)
        self.server = wsgi.Server((host, port), app, numthreads=threads, max=threads)
        if tls is not None:
            self.server.ssl_adapter = ReloadingSSLAdapter(tls.check("--web-tls-dir"))
        try:
            self.server.prepare()  # binds now: a port in use fails here, at start-up
        except OSError as exc:
            raise BindError(
                f"cannot serve the web port on {host}:{port} ({exc.strerror or exc}); choose "
                "another with --web-port (0 = off)"
            ) from None
        self.host = host
        self.port = self.server.bind_addr[1]
        self._thread = threading.Thread(target=self.server.serve, name="web", daemon=True)

    @property
    def url(self) -> str:
        scheme = "https" if self.server.ssl_adapter is not None else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def start(self) -> WebServer:
        self._thread.start()
        log.info("web_serving", url=self.url)
        return self

    def close(self) -> None:
        self.server.stop()
        self._thread.join(5)


class ReloadingSSLAdapter(BuiltinSSLAdapter):
    """HTTPS from a TLS directory (:class:`shared.tls.TLSFiles`), its certificate read again for
    new connections once the files change (a rotation needs no restart)."""

    def __init__(self, files: TLSFiles) -> None:
        cert, key, _ = files.paths
        super().__init__(str(cert), str(key))
        self._files = files
        self._stamp = files.stamp()
        self._looked = time.monotonic()
        self._lock = threading.Lock()

    def wrap(self, sock):
        self._reload()
        return super().wrap(sock)

    def _reload(self) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._looked < RELOAD_CHECK_SECONDS:
                return
            self._looked = now
            stamp = self._files.stamp()
            if stamp == self._stamp:
                return
            cert, key, _ = self._files.paths
            context = ssl.create_default_context(purpose=ssl.Purpose.CLIENT_AUTH)
            try:
                context.load_cert_chain(str(cert), str(key))
            except (OSError, ssl.SSLError) as exc:  # mid-rotation: keep serving the old pair
                log.warning("web_certificate_reload_failed", error=str(exc))
                return
            self._stamp = stamp
            self.context = context
            log.info("web_certificate_reloaded", certificate=str(cert))


# --- a service's web port from its flags -------------------------------------------------------
def add_web_arguments(
    p: argparse.ArgumentParser, local_port: int, *, what: str = "the same API", root: str = ""
) -> None:
    """The ``--web-*`` flags of a service's web port (``local_port``: the one ``mahjong run``
    opens); ``root``: the default of ``--web-root`` (the page served), none without one."""
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
    p.add_argument("--web-threads", type=int, default=64, help="web port threads (one per stream)")
    p.add_argument(
        "--web-stream-seconds",
        type=float,
        default=300.0,
        help="a web stream ends after this long (the page opens it again)",
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
    settings a refusal names)."""
    x = config.extra
    if int(x.get("web_port", 0) or 0) == 0:
        return None
    threads = max(4, int(x.get("web_threads", 64)))
    binding = ServiceBinding(
        servicer,
        descriptor,
        serving=serving_of(config),
        max_streams=stream_limit(threads),
        stream_seconds=float(x.get("web_stream_seconds", 300.0)),
        methods=methods,
    )
    root = x.get("web_root", "")
    return WebServer(
        binding,
        host=config.host,
        port=listen_port(int(x["web_port"])),
        origins=str(x.get("web_cors_origins", "")).split(","),
        web_root=Path(root) if root else None,
        threads=threads,
        tls=web_tls(config, tls, service),
    ).start()
