"""The transport's floor for ``bench_gateway_capacity`` (2): the gateway's wire traffic of a
human-paced table with none of the game behind it.

``python -m tests.bench.transport_floor TABLES [MODE]`` serves GatewayService's ``Subscribe``
and ``Act`` on a grpc.aio server with the gateway's public-port TLS (the development
certificate) and prints one JSON line: ``{"address": …, "tables": [[table_id, [token × 4]],
…]}``, the input of :mod:`tests.bench.seat_load`. It serves until its standard input closes.

Each table keeps a turn: its seat has an own-turn prompt (the drawn tile, a few discards). An Act
of that seat sends every open stream of the table one message of two events, the discard and the
next seat's prompt, as the real gateway sends an action and the engine steps after it (4.0
messages and 7.7 events per act at 300 tables). An Act of a seat whose turn it is not is refused
FAILED_PRECONDITION. No store, no rules or wall calls, no interceptor, no checks: what is left of
the gateway's CPU per act is gRPC's (grpc.aio's calls, writes and callbacks, TLS) and the event
loop's, the least any design of this gateway on grpc.aio can cost.

MODE adds, one at a time, what the gateway's design adds to that floor:
- ``loop`` (the default): the Act is handled on the event loop, as above;
- ``pool``: the Act is handled in a worker thread of a pool of 64 (the gateway's
  ``run_blocking``), which wakes the loop to answer and to write the streams;
- ``pool+calls``: the worker also makes three blocking unary calls (the gateway's calls to the
  rules and the wall for an act) to a gRPC health server on core 1, over plaintext;
- ``loop+calls``: the same three calls as grpc.aio calls from the event loop, no worker."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.supervisor import DEV_TLS_ROOT
from infra.tls import TLSFiles, server_credentials

HAND = [1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 31, 32, 33]  # the turn seat's discard choices


class FloorTable:
    """A table's turn and its streams' queues (one per open Subscribe)."""

    def __init__(self, table_id: str) -> None:
        self.id = table_id
        self.turn = 0
        self.sequence = 1
        self.tile = 5
        self.streams: set[asyncio.Queue] = set()
        self.lock = threading.Lock()

    def prompt(self) -> pb.Event:
        return pb.Event(
            sequence=self.sequence,
            time_unix_ms=int(time.time() * 1000),
            hand_id=f"{self.id}/h1",
            hand_number=1,
            prompt=pb.Prompt(
                seat=self.turn + 1,
                kind=pb.PROMPT_KIND_OWN_TURN,
                tile=self.tile,
                options=pb.Options(discards=[self.tile, *HAND]),
                deadline_unix_ms=int(time.time() * 1000) + 60_000,
            ),
        )

    def advance(self, seat: int, action: pb.Action) -> tuple[int, pb.SubscribeResponse]:
        """The act of ``seat``: its sequence and the message every stream of the table gets."""
        with self.lock:
            if seat != self.turn or action.WhichOneof("kind") != "discard":
                raise PermissionError
            discard = pb.Event(
                sequence=self.sequence + 1,
                time_unix_ms=int(time.time() * 1000),
                hand_id=f"{self.id}/h1",
                hand_number=1,
                tile_discarded=pb.TileDiscarded(seat=seat + 1, tile=action.discard.tile),
            )
            self.sequence += 2
            self.turn = (self.turn + 1) % 4
            self.tile = 1 + (self.tile + 6) % 9
            return discard.sequence, pb.SubscribeResponse(events=[discard, self.prompt()])

    def broadcast(self, message: pb.SubscribeResponse) -> None:
        """On the event loop."""
        for q in self.streams:
            q.put_nowait(message)


ECHO = """
import sys, grpc
from concurrent import futures
from grpc_health.v1 import health, health_pb2_grpc
server = grpc.server(futures.ThreadPoolExecutor(16))
health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
print(server.add_insecure_port("127.0.0.1:0"), flush=True)
server.start()
sys.stdin.read()
"""
CALLS_PER_ACT = 3  # the gateway's per act: claim options (rules), a draw (wall), own-turn options


class FloorGateway(gateway_pb2_grpc.GatewayServiceServicer):
    def __init__(self, tables: int, mode: str, echo: str = "") -> None:
        self.tables = {f"floor-{i}": FloorTable(f"floor-{i}") for i in range(tables)}
        self.mode = mode
        self.pool = ThreadPoolExecutor(64) if mode.startswith("pool") else None
        self.check = self.check_async = None
        if echo:
            from grpc_health.v1 import health_pb2, health_pb2_grpc

            request = health_pb2.HealthCheckRequest()
            if self.pool is not None:
                stub = health_pb2_grpc.HealthStub(grpc.insecure_channel(echo))
                self.check = lambda: stub.Check(request, timeout=10)
            else:
                aio_stub = health_pb2_grpc.HealthStub(grpc.aio.insecure_channel(echo))
                self.check_async = lambda: aio_stub.Check(request, timeout=10)

    @staticmethod
    def _seat(token: str) -> int:
        return int(token.rsplit("/", 1)[1])

    async def Subscribe(self, request, context):
        table = self.tables[request.table_id]
        q: asyncio.Queue = asyncio.Queue()
        table.streams.add(q)
        try:
            with table.lock:
                first = pb.SubscribeResponse(events=[table.prompt()])
            await context.write(first)
            while True:
                await context.write(await q.get())
        finally:
            table.streams.discard(q)

    async def Act(self, request, context):
        table = self.tables[request.table_id]
        seat = self._seat(request.seat_token)
        try:
            if self.pool is None:
                for _ in range(CALLS_PER_ACT if self.check_async else 0):
                    await self.check_async()
                seq, message = table.advance(seat, request.action)
                table.broadcast(message)
            else:
                loop = asyncio.get_running_loop()
                seq = await loop.run_in_executor(self.pool, self._act, loop, table, seat, request)
        except PermissionError:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not this seat's turn")
        return pb.ActResponse(sequence=seq)

    def _act(self, loop, table: FloorTable, seat: int, request) -> int:
        """In a worker thread: the calls, then the act; its writes are woken on the loop."""
        for _ in range(CALLS_PER_ACT if self.check else 0):
            self.check()
        seq, message = table.advance(seat, request.action)
        loop.call_soon_threadsafe(table.broadcast, message)
        return seq


def echo_server() -> tuple[subprocess.Popen, str]:
    """The health server of ``pool+calls``, on core 1 (as the rules and the wall are)."""
    proc = subprocess.Popen(
        ["taskset", "-c", "1", sys.executable, "-c", ECHO],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return proc, f"127.0.0.1:{int(proc.stdout.readline())}"


async def main(tables: int, mode: str) -> None:
    if mode not in ("loop", "pool", "pool+calls", "loop+calls"):
        raise SystemExit(f"unknown mode {mode!r}: loop, pool, pool+calls or loop+calls")
    echo, address = echo_server() if mode.endswith("+calls") else (None, "")
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    floor = FloorGateway(tables, mode, address)
    gateway_pb2_grpc.add_GatewayServiceServicer_to_server(floor, server)
    creds = server_credentials(TLSFiles(DEV_TLS_ROOT / "gateway"), mutual=False)
    port = server.add_secure_port("127.0.0.1:0", creds)
    await server.start()
    made = [[t, [f"{t}/{s}" for s in range(4)]] for t in floor.tables]
    print(json.dumps({"address": f"127.0.0.1:{port}", "tables": made}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until closed
    await server.stop(0)
    if echo is not None:
        echo.stdin.close()
        echo.wait(timeout=30)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "loop"))
