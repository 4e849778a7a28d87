"""The plain HTTP parts of a web port: CORS for the listed origins only (:class:`Cors`;
none by default: the page the server itself serves needs none) and the static files of a built
web page (:class:`StaticFiles`), as ASGI applications around the Connect one.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

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
    "authorization",  # an operator's session on the console RPCs (infra/operator_calls.py)
)
EXPOSED_HEADERS = (
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "connect-content-encoding",
    "connect-accept-encoding",
    "content-encoding",
)

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
