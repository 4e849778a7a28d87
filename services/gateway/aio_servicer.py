"""GatewayService on the asyncio server (``--server-model asyncio``, the default).

Each unary call is admitted on the event loop (flood control, :meth:`GatewayServicer.admit`)
and then runs :class:`~services.gateway.servicer.GatewayServicer`'s own call in a worker thread
(it takes the table's lock and writes the store), so answers, codes and idempotency are the
threaded server's exactly. ``Subscribe`` is a coroutine: it waits for the table's events on the
loop (:func:`~services.gateway.tables.streams.stream_async`), so an open stream holds no thread.

A client that does not read its stream: gRPC's flow control stops the writes once the
connection's windows are full (the backlog sits in the client's buffers, not here: nothing is
produced ahead of a write). A write that waits ``stream_write_timeout_ms``, or a stream that
falls ``stream_max_lag`` events behind its live table, ends RESOURCE_EXHAUSTED
``SLOW_CONSUMER``; the client resumes from the last event it got, the table plays on.
"""

from __future__ import annotations

import asyncio

from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from services.gateway.convert.events import event_to_proto
from services.gateway.servicer import GatewayServicer
from shared.aio_server import run_blocking
from shared.errors import ResourceExhausted


class AsyncGatewayServicer(gateway_pb2_grpc.GatewayServiceServicer):
    def __init__(self, calls: GatewayServicer) -> None:
        self.calls = calls
        self.manager = calls.manager

    async def CreateTable(self, request, context):
        self.calls.admit(request, context)
        return await run_blocking(self.calls.create_table, request, context)

    async def JoinSeat(self, request, context):
        self.calls.admit(request, context)
        return await run_blocking(self.calls.join_seat, request, context)

    async def Act(self, request, context):
        self.calls.admit(request, context)
        return await run_blocking(self.calls.act, request, context)

    async def GetTableState(self, request, context):
        self.calls.admit(request, context)
        return await run_blocking(self.calls.get_table_state, request, context)

    async def Leave(self, request, context):
        self.calls.admit(request, context)
        return await run_blocking(self.calls.leave, request, context)

    async def GetHint(self, request, context):
        self.calls.admit(request, context)
        return await run_blocking(self.calls.get_hint, request, context)

    async def Subscribe(self, request, context):
        self.calls.admit(request, context)
        after = request.after_sequence
        table, viewer = await run_blocking(
            self.manager.open_stream, request.table_id, request.seat_token, after
        )
        st = self.manager.settings
        timeout = st.stream_write_timeout_ms / 1000
        live_from = table.head  # events after this one were appended while the stream ran
        sent = after
        async for logged, seen in self.manager.subscribe_async(table, viewer, after, run_blocking):
            behind = table.head - logged.seq
            if logged.seq > live_from and behind > st.stream_max_lag:
                raise _slow(table.id, sent, f"is {behind} events behind the table")
            message = pb.SubscribeResponse(event=event_to_proto(logged, seen))
            try:
                async with asyncio.timeout(timeout):  # no task per write, unlike wait_for
                    await context.write(message)
            except TimeoutError:
                raise _slow(table.id, sent, f"read nothing for {timeout:g} s") from None
            sent = logged.seq


def _slow(table_id: str, sent: int, why: str) -> ResourceExhausted:
    return ResourceExhausted(
        f"the stream of table {table_id} {why} (its client is not reading); resume with "
        f"Subscribe after_sequence = the last event received ({sent} or later)",
        reason="SLOW_CONSUMER",
        last_sequence=sent,
    )
