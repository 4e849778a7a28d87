"""The load generator of ``bench_gateway_capacity``: human-paced players, one process.

``python -m tests.bench.seat_load ADDRESS TABLES_JSON SECONDS [batched|single]`` plays every
seat of every table in TABLES_JSON (``[[table_id, [token × 4]], …]``) as a real gRPC client:
each seat has its own Subscribe stream (``batched``, the default: a step's events in one
message; ``single``: one event per message, as before batching) and answers each of its prompts
after thinking 0.8–1.2 s (a win when offered, else the drawn tile or the first discard allowed,
else pass). The seats share a few connections, as players behind one load balancer would. Once
every stream is open and WARMUP_S more have passed (the first prompts of every table came at
once; the warm-up lets the tables drift apart, as real players' would), it prints
``{"ready": true}`` and starts counting; after SECONDS more it prints one JSON line: the Act
latencies' p50/p99, acts, refusals, events and messages received, and the CPU seconds this
process used (to show it was not the bottleneck), all of the counted part alone. Players
connect with server TLS (:func:`tests.bench.aio_player_channel`)."""

from __future__ import annotations

import asyncio
import json
import random
import resource
import statistics
import sys
import time
import uuid

import grpc
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from mahjong_client.player import events_of
from tests.bench import aio_player_channel
from tests.e2e.players import legal_answer

CHANNELS = 16
OPEN_WAVE = 100
WARMUP_S = 5.0
BATCHED = True  # Subscribe ``batched`` (the command line's fourth word)


class Seat:
    def __init__(self, stub, table_id: str, token: str, seat: int, stats: dict) -> None:
        self.stub, self.table_id, self.token, self.seat = stub, table_id, token, seat
        self.stats = stats
        self.last = 0
        self.rng = random.Random(hash((table_id, seat)))

    async def run(self, stop: float) -> None:
        while time.monotonic() < stop:
            call = self.stub.Subscribe(
                pb.SubscribeRequest(
                    table_id=self.table_id,
                    seat_token=self.token,
                    after_sequence=self.last,
                    batched=BATCHED,
                )
            )
            try:
                async for r in call:
                    self.stats["messages"] += 1
                    for e in events_of(r):
                        self.last = e.sequence
                        self.stats["events"] += 1
                        kind = e.WhichOneof("kind")
                        if kind == "prompt" and e.prompt.seat == self.seat + 1:
                            asyncio.get_running_loop().create_task(self.answer(e, stop))
                        elif kind == "table_finished":
                            return
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.CANCELLED:
                    self.stats["stream_errors"].append(exc.code().name)
                await asyncio.sleep(0.5)
            finally:
                call.cancel()

    async def answer(self, e: pb.Event, stop: float) -> None:
        await asyncio.sleep(self.rng.uniform(0.8, 1.2))  # the player thinks
        if time.monotonic() > stop:
            return
        t0 = time.perf_counter()
        try:
            await self.stub.Act(
                pb.ActRequest(
                    table_id=self.table_id,
                    seat_token=self.token,
                    request_id=uuid.uuid4().hex,
                    last_sequence=e.sequence,
                    action=legal_answer(e.prompt),
                ),
                timeout=30,
            )
            self.stats["latencies"].append(time.perf_counter() - t0)
        except grpc.aio.AioRpcError as exc:
            self.stats["refused"][exc.code().name] = (
                self.stats["refused"].get(exc.code().name, 0) + 1
            )


async def main(address: str, tables: list, seconds: float) -> dict:
    channels = [aio_player_channel(address) for _ in range(CHANNELS)]  # players: server TLS
    stubs = [gateway_pb2_grpc.GatewayServiceStub(c) for c in channels]
    stats: dict = {"latencies": [], "refused": {}, "events": 0, "messages": 0, "stream_errors": []}
    seats = [
        Seat(stubs[(i * 4 + s) % CHANNELS], table_id, tokens[s], s, stats)
        for i, (table_id, tokens) in enumerate(tables)
        for s in range(4)
    ]
    stop = time.monotonic() + len(seats) / OPEN_WAVE * 0.02 + WARMUP_S + seconds
    tasks = []
    for i in range(0, len(seats), OPEN_WAVE):  # streams open as players arrive
        tasks += [asyncio.create_task(s.run(stop)) for s in seats[i : i + OPEN_WAVE]]
        await asyncio.sleep(0.02)
    await asyncio.sleep(WARMUP_S)
    stats.update(latencies=[], refused={}, events=0, messages=0, stream_errors=[])  # from here
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.monotonic()
    print(json.dumps({"ready": True}), flush=True)
    await asyncio.sleep(max(0.0, stop - time.monotonic()))
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    for c in channels:
        await c.close()
    return counted(stats, start, usage0, usage1)


def counted(stats: dict, start: float, usage0, usage1) -> dict:
    """The counted part's figures (the output's last line): Act latencies' p50/p99 from
    ``stats``, its counts, the seconds since ``start`` and the CPU between the two usages."""
    lat = sorted(stats["latencies"])
    q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [0.0] * 99
    cpu = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    return {
        "acts": len(lat),
        "p50_ms": q[49] * 1000,
        "p99_ms": q[98] * 1000,
        "refused": stats["refused"],
        "stream_errors": len(stats["stream_errors"]),
        "events": stats["events"],
        "messages": stats["messages"],
        "seconds": time.monotonic() - start,
        "cpu_seconds": cpu,
    }


if __name__ == "__main__":
    address, path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    BATCHED = (sys.argv[4] if len(sys.argv) > 4 else "batched") == "batched"
    with open(path) as f:
        tables = json.load(f)
    print(json.dumps(asyncio.run(main(address, tables, seconds))), flush=True)
