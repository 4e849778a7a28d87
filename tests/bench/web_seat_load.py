"""The browser-seat load generator of ``bench_gateway_capacity``: human-paced players on the
gateway's web port, one process.

``python -m tests.bench.web_seat_load URL TABLES_JSON SECONDS [batched|single]
[view|poll|stream]`` plays every seat of every table in TABLES_JSON (``[[table_id, [token × 4]],
…]``) as the web table (web/src/table.ts) does in a browser, over Connect with the binary codec
(web/src/api.ts: ``useBinaryFormat``) to URL (``https://`` trusting the development CA, or
``http://``): each seat is a browser of its own, its Subscribe (``batched`` by default, as the
page asks) a Connect server stream (``application/connect+proto``, one enveloped request) on an
HTTP/1.1 connection of its own, held open as a page holds its ``fetch``; its unary calls
(``application/proto``) on the browser's keep-alive connections to that origin (opened when
every one is busy, at most six, reused when idle, as ``fetch`` pools them). A seat asks
GetTableState on arrival, as the page does before it subscribes. Then, with ``view`` (the
default, the page as it is), its stream asks ``with_view`` and the view comes with each batch:
GetTableState again only after a message without one (an older gateway's) or a refused Act; with
``poll`` (the page before ``with_view``) the stream carries no view and the seat asks
GetTableState after every event (one call at a time, the events meanwhile coalesced into one
more call) and after each Act; ``stream`` asks neither, to tell the protocol's cost from the
page's. A seat answers each of its prompts after thinking 0.8–1.2 s with
:func:`tests.e2e.players.legal_answer`. The headers are a browser's: its own origin (the page
the web port serves), ``Connect-Protocol-Version``, and the ``Accept-Encoding`` a browser adds
to every fetch (so the server gzips unary answers as it would for a browser; their bodies are
not read here beyond the status).

The output is seat_load.py's: ``{"ready": true}`` once every stream is open and WARMUP_S more
have passed, then after SECONDS more one JSON line with the Act latencies' p50/p99, acts,
refusals, stream errors, events and messages received and this process's CPU seconds, all of the
counted part alone; and also ``views`` (GetTableState calls answered), ``view_refused`` and
``connections`` (opened during the count: new TLS handshakes), ``not_open`` (seats whose
first stream had neither opened nor failed after OPEN_TIMEOUT_S, counted as stream errors).

The requests are written on bare asyncio sockets and the answers parsed by ``httptools`` (in
the venv with uvicorn): a client library per seat would measure the client."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import resource
import ssl
import struct
import sys
import time
import uuid
import zlib
from collections.abc import Callable
from urllib.parse import urlsplit

import httptools
from mahjong.gateway.v1 import gateway_pb2 as pb

from mahjong_client.player import events_of
from tests.bench.seat_load import counted
from tests.e2e.players import legal_answer

OPEN_WAVE = 100
WARMUP_S = 5.0
OPEN_TIMEOUT_S = 120.0  # for every seat's first stream to open
BROWSER_CONNECTIONS = 6  # HTTP/1.1 connections a browser opens to one origin at most
PATH = "/mahjong.gateway.v1.GatewayService/"
BATCHED = True  # Subscribe ``batched`` (the command line's fourth word)
MODE = "view"  # how the page keeps its view (the fifth word: view, poll or stream)
MAX_EVENTS_PER_MESSAGE = 64  # a replay's full messages: only the batch's last has the view
END_STREAM = 0x02  # a Connect envelope's flag: the end-of-stream message (JSON)
USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131"


class Refused(Exception):
    """A Connect error: ``code`` is its name in gRPC's spelling (``RESOURCE_EXHAUSTED``)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _code(body: bytes, encoding: str) -> str:
    """The code of a Connect error body (JSON, perhaps gzipped as the answer's)."""
    with contextlib.suppress(Exception):
        if encoding == "gzip":
            body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
        code = json.loads(body).get("code", "unknown")
        return "CANCELLED" if code == "canceled" else code.upper()
    return "UNKNOWN"


class Origin:
    """The web port as a page sees it: where to connect, TLS, and the headers of its calls."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        self.ssl: ssl.SSLContext | None = None
        if self.tls:
            from infra.supervisor import DEV_TLS_ROOT

            self.ssl = ssl.create_default_context(cafile=str(DEV_TLS_ROOT / "ca.crt"))
        default = self.port == (443 if self.tls else 80)
        authority = self.host if default else f"{self.host}:{self.port}"
        page = f"{parts.scheme}://{authority}"
        self.head = (
            f"Host: {authority}\r\nConnection: keep-alive\r\nUser-Agent: {USER_AGENT}\r\n"
            f"Accept: */*\r\nOrigin: {page}\r\nReferer: {page}/\r\nSec-Fetch-Site: same-origin"
            "\r\nSec-Fetch-Mode: cors\r\nSec-Fetch-Dest: empty\r\n"
            "Accept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en-GB,en;q=0.9\r\n"
            "Connect-Protocol-Version: 1\r\n"
        )
        self.opened = 0

    def request(self, method: str, message: bytes, stream: bool) -> bytes:
        if stream:  # one enveloped message (flags 0, big-endian length)
            kind, body = "application/connect+proto", struct.pack(">BI", 0, len(message)) + message
        else:
            kind, body = "application/proto", message
        return (
            f"POST {PATH}{method} HTTP/1.1\r\n{self.head}Content-Type: {kind}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body

    async def connect(self, protocol: Callable[[], Connection]) -> Connection:
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(
            protocol,
            self.host,
            self.port,
            ssl=self.ssl,
            server_hostname=self.host if self.tls else None,
        )
        self.opened += 1
        return conn


class Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: one request at a time, its answer parsed by httptools. A unary
    answer resolves :meth:`call` with (status, content encoding, body); a stream's body goes to
    :attr:`sink` as it comes (the chunks already undone), and :attr:`ended` is called once at
    its end (None, or the connection's error)."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.answer: asyncio.Future | None = None
        self.sink: Callable[[bytes], None] | None = None
        self.ended: Callable[[Exception | None], None] | None = None
        self.opened: Callable[[], None] | None = None  # a stream's answer began (200)
        self.status = 0
        self.encoding = ""
        self.body = bytearray()
        self.alive = True
        self.got = False  # a byte of the answer in flight came

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.got = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._end(ConnectionError(f"bad HTTP: {exc}"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.alive = False
        self._end(ConnectionError("closed by the server"))

    # httptools' callbacks
    def on_message_begin(self) -> None:
        self.body = bytearray()
        self.encoding = ""

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"content-encoding":
            self.encoding = value.decode()

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        if self.status == 200 and self.opened is not None:
            self.opened()

    def on_body(self, body: bytes) -> None:
        if self.sink is not None and self.status == 200:
            self.sink(body)
        else:
            self.body += body

    def on_message_complete(self) -> None:
        if not self.parser.should_keep_alive():
            self.alive = False
        if self.answer is not None and not self.answer.done():
            self.answer.set_result((self.status, self.encoding, bytes(self.body)))
        self._end(None)

    def _end(self, exc: Exception | None) -> None:
        if self.answer is not None and not self.answer.done() and exc is not None:
            self.answer.set_exception(exc)
        ended, self.ended = self.ended, None
        if ended is not None:
            ended(exc)

    async def call(self, request: bytes) -> tuple[int, str, bytes]:
        assert self.transport is not None and self.alive
        self.answer = asyncio.get_running_loop().create_future()
        self.got = False
        self.transport.write(request)
        try:
            return await self.answer
        finally:
            self.answer = None

    def close(self) -> None:
        self.alive = False
        if self.transport is not None:
            self.transport.close()


class Browser:
    """One browser's keep-alive connections to the origin for unary calls, as fetch pools
    them: an idle one reused, else a new one while fewer than BROWSER_CONNECTIONS are open,
    else the call waits for one."""

    def __init__(self, origin: Origin) -> None:
        self.origin = origin
        self.idle: list[Connection] = []
        self.busy = 0
        self.waiting: collections.deque[asyncio.Future] = collections.deque()

    async def _take(self) -> Connection:
        while True:
            while self.idle:
                conn = self.idle.pop()
                if conn.alive:
                    self.busy += 1
                    return conn
            if self.busy < BROWSER_CONNECTIONS:
                self.busy += 1
                try:
                    return await self.origin.connect(Connection)
                except BaseException:
                    self._give(None)
                    raise
            fut = asyncio.get_running_loop().create_future()
            self.waiting.append(fut)
            await fut

    def _give(self, conn: Connection | None) -> None:
        self.busy -= 1
        if conn is not None:
            if conn.alive:
                self.idle.append(conn)
            else:
                conn.close()
        while self.waiting:
            fut = self.waiting.popleft()
            if not fut.done():
                fut.set_result(None)
                break

    async def call(self, method: str, message: bytes) -> None:
        """A Connect unary call; raises :class:`Refused` with the error's code."""
        request = self.origin.request(method, message, stream=False)
        for attempt in range(2):
            conn = await self._take()
            try:
                status, encoding, body = await conn.call(request)
            except ConnectionError:
                # a kept-alive connection the server closed as it was reused: fetch sends the
                # request again on a new one (an Act is one request by its request id)
                conn.close()
                self._give(None)
                if conn.got or attempt:
                    raise
                continue
            except BaseException:
                conn.close()
                self._give(None)
                raise
            self._give(conn)
            if status != 200:
                raise Refused(_code(body, encoding))
            return

    def close(self) -> None:
        for conn in self.idle:
            conn.close()
        self.idle = []


class Run:
    """What the seats share: the counts, when to stop, and how many streams have been open."""

    def __init__(self) -> None:
        self.stats: dict = {}
        self.fresh()
        self.stop = float("inf")
        self.settled = 0  # seats whose first stream opened or failed
        self.all_settled = asyncio.Event()
        self.seats = 0

    def fresh(self) -> None:
        self.stats.update(
            latencies=[],
            refused={},
            events=0,
            messages=0,
            stream_errors=[],
            views=0,
            view_refused={},
            stream_views=0,
        )

    def settle(self) -> None:
        self.settled += 1
        if self.settled >= self.seats:
            self.all_settled.set()


class Seat:
    def __init__(self, origin: Origin, table_id: str, token: str, seat: int, run: Run) -> None:
        self.origin, self.table_id, self.token, self.seat = origin, table_id, token, seat
        self.browser = Browser(origin)
        self.run_ = run
        self.stats = run.stats
        self.settled = False
        self.last = 0
        self.rng = random.Random(hash((table_id, seat)))
        self.refreshing = False
        self.again = False
        self.view = pb.GetTableStateRequest(table_id=table_id, seat_token=token).SerializeToString()
        self.tasks: set[asyncio.Task] = set()

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _settle(self) -> None:
        if not self.settled:
            self.settled = True
            self.run_.settle()

    async def run(self) -> None:
        try:
            self.refreshing = True
            await self._refresh()  # the page: the view first (a connection), then the stream
            while time.monotonic() < self.run_.stop:
                if await self._follow():
                    return
                await asyncio.sleep(0.5)
        finally:
            for t in list(self.tasks):
                t.cancel()
            self.browser.close()

    async def _follow(self) -> bool:
        """One Subscribe from the last event seen; True once the table has finished."""
        message = pb.SubscribeRequest(
            table_id=self.table_id,
            seat_token=self.token,
            after_sequence=self.last,
            batched=BATCHED,
            with_view=MODE == "view",
        ).SerializeToString()
        loop = asyncio.get_running_loop()
        ended: asyncio.Future = loop.create_future()
        buffer = bytearray()
        finished = False

        def body(data: bytes) -> None:
            nonlocal finished
            buffer.extend(data)
            while len(buffer) >= 5:
                flags, size = struct.unpack_from(">BI", buffer)
                if len(buffer) < 5 + size:
                    return
                payload = bytes(buffer[5 : 5 + size])
                del buffer[: 5 + size]
                if flags & END_STREAM:
                    error = json.loads(payload or b"{}").get("error")
                    if error and not ended.done():
                        code = error.get("code", "unknown")
                        ended.set_exception(Refused(code.upper()))
                    continue
                if self._message(pb.SubscribeResponse.FromString(payload)):
                    finished = True

        def end(exc: Exception | None) -> None:
            if not ended.done():
                if exc is not None:
                    ended.set_exception(exc)
                elif conn.status != 200:
                    ended.set_exception(Refused(_code(bytes(conn.body), conn.encoding)))
                else:
                    ended.set_result(None)

        conn: Connection | None = None
        try:
            conn = await self.origin.connect(Connection)
            conn.sink, conn.ended, conn.opened = body, end, self._settle
            assert conn.transport is not None
            conn.transport.write(self.origin.request("Subscribe", message, stream=True))
            await ended
            return finished
        except (Refused, ConnectionError, OSError) as exc:
            self._settle()
            if finished:
                return True
            self.stats["stream_errors"].append(getattr(exc, "code", repr(exc)))
            return False
        finally:
            if conn is not None:
                conn.close()

    def _message(self, r: pb.SubscribeResponse) -> bool:
        self.stats["messages"] += 1
        done = False
        for e in events_of(r):
            self.last = e.sequence
            self.stats["events"] += 1
            kind = e.WhichOneof("kind")
            if kind == "prompt" and e.prompt.seat == self.seat + 1:
                self._spawn(self.answer(e))
            elif kind == "table_finished":
                done = True
            if MODE == "poll":
                self.refresh()
        if MODE == "view":
            if r.HasField("view"):
                self.stats["stream_views"] += 1
            elif len(r.events) < MAX_EVENTS_PER_MESSAGE:  # a batch's end without its view
                self.refresh()
        return done

    def refresh(self) -> None:
        """The page's refresh(): one GetTableState at a time, and one more after it for all that
        came meanwhile (the rest of a message's events, say: a message of two events or more
        asks twice, as the page's loop does)."""
        if self.refreshing:
            self.again = True
            return
        self.refreshing = True
        self.again = False
        self._spawn(self._refresh())

    async def _refresh(self) -> None:
        try:
            while True:
                try:
                    await self.browser.call("GetTableState", self.view)
                    self.stats["views"] += 1
                except Refused as exc:
                    refused = self.stats["view_refused"]
                    refused[exc.code] = refused.get(exc.code, 0) + 1
                    return
                except (ConnectionError, OSError):
                    self.stats["view_refused"]["CONNECTION"] = (
                        self.stats["view_refused"].get("CONNECTION", 0) + 1
                    )
                    return
                if not self.again:
                    return
                self.again = False
        finally:
            self.refreshing = False

    async def answer(self, e: pb.Event) -> None:
        await asyncio.sleep(self.rng.uniform(0.8, 1.2))  # the player thinks
        if time.monotonic() > self.run_.stop:
            return
        request = pb.ActRequest(
            table_id=self.table_id,
            seat_token=self.token,
            request_id=uuid.uuid4().hex,
            last_sequence=e.sequence,
            action=legal_answer(e.prompt),
        ).SerializeToString()
        t0 = time.perf_counter()
        try:
            await self.browser.call("Act", request)
            self.stats["latencies"].append(time.perf_counter() - t0)
        except Refused as exc:
            self.stats["refused"][exc.code] = self.stats["refused"].get(exc.code, 0) + 1
            if MODE == "view":
                self.refresh()  # the page's act(): a refusal refreshes
        except (ConnectionError, OSError):
            self.stats["refused"]["CONNECTION"] = self.stats["refused"].get("CONNECTION", 0) + 1
        if MODE == "poll":
            self.refresh()  # the page's act() before with_view: finally refresh()


async def main(url: str, tables: list, seconds: float) -> dict:
    origin = Origin(url)
    run = Run()
    stats = run.stats
    seats = [
        Seat(origin, table_id, tokens[s], s, run) for table_id, tokens in tables for s in range(4)
    ]
    run.seats = len(seats)
    tasks = []
    for i in range(0, len(seats), OPEN_WAVE):  # pages open as players arrive
        tasks += [asyncio.create_task(s.run()) for s in seats[i : i + OPEN_WAVE]]
        await asyncio.sleep(0.02)
    # every stream open (its answer begun; the TLS handshakes done), then the warm-up
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(run.all_settled.wait(), OPEN_TIMEOUT_S)
    await asyncio.sleep(WARMUP_S)
    not_open = len(seats) - run.settled
    run.fresh()  # from here
    opened0 = origin.opened
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.monotonic()
    run.stop = start + seconds
    print(json.dumps({"ready": True}), flush=True)
    await asyncio.sleep(seconds)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    r = counted(stats, start, usage0, usage1)
    r["stream_errors"] += not_open
    return r | {
        "views": stats["views"],
        "stream_views": stats["stream_views"],
        "view_refused": stats["view_refused"],
        "connections": origin.opened - opened0,
        "stream_error_kinds": sorted(set(stats["stream_errors"]))[:5],
        "not_open": not_open,
    }


if __name__ == "__main__":
    url, path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    BATCHED = (sys.argv[4] if len(sys.argv) > 4 else "batched") == "batched"
    MODE = sys.argv[5] if len(sys.argv) > 5 else "view"
    if MODE not in ("view", "poll", "stream"):
        raise SystemExit(f"unknown mode {MODE!r}: view, poll or stream")
    with open(path) as f:
        tables = json.load(f)
    print(json.dumps(asyncio.run(main(url, tables, seconds))), flush=True)
