"""A client process holding many Subscribe streams on a gateway (tests and ``make bench``):

``python -m tests.support.stream_load ADDRESS TABLE_ID TOKEN N [CHANNELS]`` opens ``N``
streams over ``CHANNELS`` connections (10 by default), reads each one's first event and prints
``{"open": N, "seconds": …}``. Then each line on stdin is a command, answered with one JSON line:
``probe`` (a GetTableState while the streams are open: ``{"unary_ms": …}``), ``count`` (the
events every stream has received since it opened: ``{"events": …}``) and ``close``
(cancel every stream: ``{"closed": N, "errors": […]}``, then exit). A stream that ends on its
own before ``close``, with any status, is an error.

It connects as a player: server TLS trusting ``MAHJONG_TLS_CA`` or else the development CA
(``.data/tls/ca.crt`` of this repository); plaintext with ``MAHJONG_INSECURE``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time

import grpc
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.supervisor import DEV_TLS_ROOT
from infra.tls import player_credentials

WAVE = 100  # streams opened at once (a burst of thousands on ten connections loses some)


async def main(address: str, table_id: str, token: str, n: int, channels: int) -> None:
    ca_file = "" if os.environ.get("MAHJONG_TLS_CA") else str(DEV_TLS_ROOT / "ca.crt")
    creds = player_credentials(ca_file)
    conns = [
        grpc.aio.insecure_channel(address)
        if creds is None
        else grpc.aio.secure_channel(address, creds)
        for _ in range(channels)
    ]
    stubs = [gateway_pb2_grpc.GatewayServiceStub(c) for c in conns]
    request = pb.SubscribeRequest(table_id=table_id, seat_token=token)
    start = time.perf_counter()
    calls: list = []
    errors: list[str] = []
    for wave in range(0, n, WAVE):  # as clients arrive: a few hundred at a time
        opened = [stubs[i % channels].Subscribe(request) for i in range(wave, min(n, wave + WAVE))]
        firsts = await asyncio.gather(*(c.read() for c in opened), return_exceptions=True)
        errors += [repr(f) for f in firsts if not isinstance(f, pb.SubscribeResponse)]
        calls += opened
    counted = {"events": 0}

    async def count(call) -> None:  # every stream goes on reading what it is sent
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
            while await call.read() is not grpc.aio.EOF:
                counted["events"] += 1

    readers = [asyncio.create_task(count(c)) for c in calls]
    opened = {
        "open": n - len(errors),
        "failed": len(errors),
        "seconds": time.perf_counter() - start,
        "errors": errors[:10],
    }
    print(json.dumps(opened), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if line == "probe":
            t = time.perf_counter()
            await stubs[0].GetTableState(
                pb.GetTableStateRequest(table_id=table_id, seat_token=token), timeout=30
            )
            print(json.dumps({"unary_ms": (time.perf_counter() - t) * 1000}), flush=True)
        elif line == "count":
            print(json.dumps({"events": counted["events"]}), flush=True)
        elif line in ("close", ""):
            break
    errors += [f"ended on its own: {await c.code()}" for c in calls if c.done()]
    for c in calls:
        c.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
    for c in conns:
        await c.close()
    print(json.dumps({"closed": n, "errors": errors[:10], "failed": len(errors)}), flush=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    asyncio.run(main(a[0], a[1], a[2], int(a[3]), int(a[4]) if len(a) > 4 else 10))
