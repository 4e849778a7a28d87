"""A client process holding many browser streams on a gateway's web port (``make bench``):

``python -m tests.support.web_stream_load URL TABLE_ID TOKEN N`` opens ``N`` Subscribe streams
over the Connect protocol, one HTTP/1.1 connection each (as N browser tabs do), reads each one's
first event and prints ``{"open": …, "failed": …, "seconds": …}``. Then each line on stdin is a
command answered with one JSON line: ``probe`` (a Connect GetTableState on a connection of its
own while the streams are open: ``{"unary_ms": …}``), ``leave K`` (close K streams' connections
as closed tabs do: ``{"left": K}``) and ``close`` (every connection: ``{"closed": N, "ended":
…}``, ``ended`` counting the streams the server had ended on its own before, then exit).

The requests are written on bare sockets, not with a client library: ten thousand library
clients would measure the client, and a browser's request is this one (a POST of one enveloped
message, ``application/connect+proto``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
import sys
import time
from urllib.parse import urlsplit

from mahjong.gateway.v1 import gateway_pb2 as pb

WAVE = 200  # connections opened at once
PATH = "/mahjong.gateway.v1.GatewayService/"


def _request(host: str, method: str, message: bytes, stream: bool) -> bytes:
    kind = "application/connect+proto" if stream else "application/proto"
    body = struct.pack(">BI", 0, len(message)) + message if stream else message
    head = (
        f"POST {PATH}{method} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {kind}\r\n"
        f"Connect-Protocol-Version: 1\r\nContent-Length: {len(body)}\r\n"
        f"{'' if stream else 'Connection: close' + chr(13) + chr(10)}\r\n"
    )
    return head.encode() + body


class Stream:
    """One open Subscribe: its connection, and whether the server has ended it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.ended = False
        self.task: asyncio.Task | None = None

    async def drain(self) -> None:  # goes on reading what it is sent, until the server ends it
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while await self.reader.read(65536):
                pass
        self.ended = True


async def _open(host: str, port: int, request: bytes) -> Stream:
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(request)
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    if not head.startswith(b"HTTP/1.1 200"):
        writer.close()
        raise RuntimeError(head.split(b"\r\n", 1)[0].decode())
    # the first chunk: a chunk-size line, then the first event's envelope
    await asyncio.wait_for(reader.readuntil(b"\r\n"), 30)
    flags, size = struct.unpack(">BI", await asyncio.wait_for(reader.readexactly(5), 30))
    if flags & 0x02:  # an end-of-stream message first: the stream was refused
        writer.close()
        raise RuntimeError((await reader.readexactly(size)).decode(errors="replace"))
    await reader.readexactly(size)
    return Stream(reader, writer)


async def _probe(host: str, port: int, table_id: str, token: str) -> float:
    message = pb.GetTableStateRequest(table_id=table_id, seat_token=token).SerializeToString()
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(_request(host, "GetTableState", message, stream=False))
    answer = await asyncio.wait_for(reader.read(), 30)  # to the end: Connection: close
    writer.close()
    if not answer.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(answer.split(b"\r\n", 1)[0].decode())
    return (time.perf_counter() - start) * 1000


async def main(url: str, table_id: str, token: str, n: int) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    message = pb.SubscribeRequest(table_id=table_id, seat_token=token).SerializeToString()
    request = _request(host, "Subscribe", message, stream=True)
    start = time.perf_counter()
    streams: list[Stream] = []
    errors: list[str] = []
    for wave in range(0, n, WAVE):
        opened = await asyncio.gather(
            *(_open(host, port, request) for _ in range(min(WAVE, n - wave))),
            return_exceptions=True,
        )
        streams += [s for s in opened if isinstance(s, Stream)]
        errors += [repr(e) for e in opened if not isinstance(e, Stream)]
    for s in streams:
        s.task = asyncio.create_task(s.drain())
    print(
        json.dumps(
            {
                "open": len(streams),
                "failed": len(errors),
                "seconds": time.perf_counter() - start,
                "errors": errors[:5],
            }
        ),
        flush=True,
    )
    loop = asyncio.get_running_loop()
    left = 0
    while True:
        line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if line == "probe":
            print(json.dumps({"unary_ms": await _probe(host, port, table_id, token)}), flush=True)
        elif line.startswith("leave "):
            k = int(line.split()[1])
            for s in streams[left : left + k]:
                s.writer.close()
            left += k
            print(json.dumps({"left": k}), flush=True)
        elif line in ("close", ""):
            break
    ended = sum(s.ended for s in streams[left:])
    for s in streams:
        s.writer.close()
    await asyncio.gather(*(s.task for s in streams if s.task), return_exceptions=True)
    print(json.dumps({"closed": len(streams), "ended": ended}), flush=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    asyncio.run(main(a[0], a[1], a[2], int(a[3])))
