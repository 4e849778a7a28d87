"""GatewayService on the asyncio server (``--server-model asyncio``, the default).

Each unary call is admitted on the event loop (flood control, :meth:`GatewayServicer.admit`)
and then runs :class:`~services.gateway.servicer.GatewayServicer`'s own call in a worker thread
(it takes the table's lock and writes the store), so answers, codes and idempotency are the
threaded server's exactly. ``Subscribe`` is a coroutine: it waits for the table's events on the
loop (:func:`~services.gateway.tables.streams.stream_async`), so an open stream holds no thread.

Any replica serves any client: a call for a table another replica runs is forwarded to it, and
a stream of such a table relayed from it (:mod:`services.gateway.forwarding`) — also a stream
whose table moves while it is open: it goes on from the new owner after the last event sent.

A client that does not read its stream: gRPC's flow control stops the writes once the
connection's windows are full (the backlog sits in the client's buffers, not here: nothing is
produced ahead of a write). A write that waits ``stream_write_timeout_ms`` (seen within a
quarter of it more: :class:`WriteWatch`), or a stream that falls ``stream_max_lag`` events
behind its live table, ends RESOURCE_EXHAUSTED ``SLOW_CONSUMER``; the client resumes from the
last event it got, the table plays on.

A stream asked for ``heartbeats`` gets a ``StreamHeartbeat`` as it opens and whenever it sent
nothing for a third of the lease (:class:`Heartbeats`): a client that hears nothing for the lease
and a second knows its replica is paused or cut off and resumes elsewhere. A heartbeat uses no
event number and carries only the lease; a relayed stream's heartbeats are this replica's own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import grpc
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.aio_server import run_blocking
from services.gateway import console
from services.gateway.convert.stream import last_sequence
from services.gateway.forwarding import (
    AGAIN_PAUSE_S,
    Forwarder,
    Stuck,
    here_or_owner_async,
    relay_error,
)
from services.gateway.servicer import GatewayServicer, act_response, heartbeat
from services.gateway.tables.answer_early import run_answering_early
from shared.errors import DomainError, ResourceExhausted, Unavailable


class AsyncGatewayServicer(gateway_pb2_grpc.GatewayServiceServicer):
    def __init__(self, calls: GatewayServicer) -> None:
        self.calls = calls
        self.manager = calls.manager
        st = self.manager.settings
        self.forwarder = Forwarder(st.replica_id, st.address, calls.tls, st.lease_ms)
        self.watch = calls.watch  # one watch of relayed streams per replica
        self.writes = WriteWatch(st.stream_write_timeout_ms / 1000)  # every stream's writes

    async def _call(self, method: str, fn, request, context, run=run_blocking):
        """Admit, then answer here (``fn`` in a worker thread, through ``run``) or at the
        table's owner (:func:`forwarding.route`)."""
        admission = self.calls.admit(method, request, context)
        refusal = admission.deferred
        if refusal is None:
            serve = lambda: run(fn, request, context)  # noqa: E731
        else:  # over this replica's budget for a table it does not run: the owner decides
            serve = lambda: run_blocking(self.calls.elsewhere_or_refuse, request, refusal)  # noqa: E731
        try:
            return await here_or_owner_async(self.forwarder, method, serve, request, context)
        except DomainError as exc:
            admission.refused(exc)
            raise

    async def CreateTable(self, request, context):
        self.calls.admit("CreateTable", request, context)  # always created here: it owns it
        return await run_blocking(self.calls.create_table, request, context)

    async def JoinSeat(self, request, context):
        return await self._call("JoinSeat", self.calls.join_seat, request, context)

    async def Act(self, request, context):
        """Answered as soon as the action is written; the worker goes on with the engine steps
        after it (claim options, the next draw), which wake the streams for both
        (:mod:`services.gateway.tables.answer_early`)."""
        return await self._call("Act", self.calls.act, request, context, _answering_early)

    async def GetTableState(self, request, context):
        return await self._call("GetTableState", self.calls.get_table_state, request, context)

    async def Leave(self, request, context):
        return await self._call("Leave", self.calls.leave, request, context)

    async def GetHint(self, request, context):
        return await self._call("GetHint", self.calls.get_hint, request, context)

    async def PlayDoubleCard(self, request, context):
        return await self._call("PlayDoubleCard", self.calls.play_double_card, request, context)

    async def ListTables(self, request, context):  # operator only (server.py's callers)
        return await run_blocking(self.calls.console.list_tables, request, context)

    async def EndTable(self, request, context):  # operator only (server.py's callers)
        return await run_blocking(self.calls.console.end_table, request, context)

    async def InspectTable(self, request, context):  # operator only (server.py's callers)
        return await run_blocking(self.calls.console.inspect_table, request, context)

    async def SuspendSeat(self, request, context):  # matchmaking only (server.py's callers)
        return await run_blocking(console.suspend_seat, self.manager, request, context)

    async def ReadyForNextHand(self, request, context):
        return await self._call(
            "ReadyForNextHand", self.calls.ready_for_next_hand, request, context
        )

    async def GetReplay(self, request, context):
        self.calls.admit("GetReplay", request, context)  # any replica: it reads the store
        return await run_blocking(self.calls.get_replay, request, context)

    async def Subscribe(self, request, context):
        self.calls.admit("Subscribe", request, context)
        writer = _Writer(
            context, request.table_id, request.after_sequence, self.manager.settings, self.writes
        )
        stuck = Stuck(self.forwarder)
        lease_ms = self.manager.settings.lease_ms
        if request.heartbeats:  # started once the stream's token passed (here or at its owner)
            writer.beats = lambda: Heartbeats(writer, lease_ms)
        try:
            while True:
                try:
                    await self._local_stream(request, writer)
                    return
                except Unavailable as exc:
                    owner = self.forwarder.owner(exc, context)
                    if owner is None:
                        raise
                if await self._relayed_stream(owner, request, writer, context, stuck):
                    return
                # its owner went silent or away: the stream goes on where the table runs now
        finally:
            if writer.heartbeats is not None:
                await writer.heartbeats.stop()

    async def _local_stream(self, request, writer: _Writer) -> None:
        table, viewer = await run_blocking(
            self.manager.open_stream, request.table_id, request.seat_token, writer.sent
        )
        writer.opened()
        live_from = table.head  # events after this one were appended while the stream ran
        async for seen in self.manager.subscribe_async(table, viewer, writer.sent, run_blocking):
            # on the loop, unless a with_view stream's view waits for a step: in a worker
            messages = self.calls.stream_messages(request, table, viewer, seen, wait=False)
            if messages is None:
                messages = await run_blocking(
                    self.calls.stream_messages, request, table, viewer, seen
                )
            for first, last, response in messages:
                behind = table.head - first  # appended after the message's first event
                if first > live_from and behind > writer.max_lag:
                    raise writer.slow(f"is {behind} events behind the table")
                await writer.write(last, response)

    async def _relayed_stream(
        self, owner: str, request, writer: _Writer, context, stuck: Stuck
    ) -> bool:
        """The owner's stream from the last event sent, each event written on (flow control
        and the slow-reader limits hold as for a local stream): True when it ended, False to
        re-attach — its lease moved (:class:`RelayWatch` cancelled it) or its owner could not
        be reached (for as long as :class:`Stuck` allows)."""
        epoch = await run_blocking(self.watch.attach, request.table_id)
        if epoch is None:  # between its owner's lease running out and a takeover
            if not stuck.may_wait(writer.sent):
                raise stuck.give_up(request.table_id)
            await asyncio.sleep(AGAIN_PAUSE_S)
            return False
        call = self.forwarder.stream(owner, request, writer.sent, context)
        loop = asyncio.get_running_loop()
        relay = self.watch.watch(
            request.table_id, epoch, lambda: loop.call_soon_threadsafe(call.cancel)
        )
        try:
            async for response in call:
                writer.opened()  # the owner took the token (its first message: a heartbeat)
                if not response.HasField("heartbeat"):  # the owner's: this stream has its own
                    await writer.write(last_sequence(response), response)
            return True
        except asyncio.CancelledError:
            if not relay.stale:  # the client went away
                raise
            return False
        except grpc.aio.AioRpcError as exc:
            if relay.stale:
                return False
            if exc.code() is grpc.StatusCode.UNAVAILABLE and stuck.may_wait(writer.sent):
                await asyncio.sleep(AGAIN_PAUSE_S)  # gone or unreachable: look again
                return False
            await relay_error(context, exc)
            return True
        finally:
            self.watch.done(relay)
            call.cancel()


def _answering_early(act, request, context):
    """Run the servicer's ``act(request, context, answer)`` answering early."""
    return run_answering_early(act, act_response, request, context)


class _Writer:
    """One Subscribe's writes: each under the slow-reader timeout (kept by :class:`WriteWatch`),
    and the last sequence sent."""

    def __init__(self, context, table_id: str, after: int, settings, watch: WriteWatch) -> None:
        self.context = context
        self.table_id = table_id
        self.sent = after
        self.timeout = settings.stream_write_timeout_ms / 1000
        self.max_lag = settings.stream_max_lag
        self.watch = watch
        task = asyncio.current_task()
        assert task is not None  # made inside the stream's coroutine
        self.task = task
        self.stalled = False  # set by the watch as it cancels a write that waited too long
        self.lock: asyncio.Lock | None = None  # with heartbeats: one write at a time
        self.last_write = 0.0  # loop time the last write ended (heartbeats only)
        self.beats: Callable[[], Heartbeats] | None = None  # starts them (a stream asking)
        self.heartbeats: Heartbeats | None = None

    def opened(self) -> None:
        """The stream's token was accepted: its heartbeats start (once)."""
        if self.beats is not None and self.heartbeats is None:
            self.heartbeats = self.beats()

    async def write(self, seq: int, message: pb.SubscribeResponse) -> None:
        self.watch.writing(self)
        try:
            if self.lock is None:
                await self.context.write(message)
            else:
                async with self.lock:
                    await self.context.write(message)
                    self.last_write = asyncio.get_running_loop().time()
        except asyncio.CancelledError:
            if not self.stalled:
                raise
            self.task.uncancel()  # the watch's cancel ends in the error below, not a cancel
            raise self.slow(f"read nothing for {self.timeout:g} s") from None
        finally:
            self.watch.written(self)
        self.sent = seq

    def slow(self, why: str) -> ResourceExhausted:
        return ResourceExhausted(
            f"the stream of table {self.table_id} {why} (its client is not reading); resume "
            f"with Subscribe after_sequence = the last event received ({self.sent} or later)",
            reason="SLOW_CONSUMER",
            last_sequence=self.sent,
        )


class Heartbeats:
    """A stream's heartbeats: one at once, then one whenever the stream sent nothing for a third
    of the lease, written by a task of its own between the stream's writes (never during one: a
    write under way, or stalled, is the stream's sign of life, and the slow-reader watch ends a
    stalled one). A heartbeat moves no sequence number."""

    def __init__(self, writer: _Writer, lease_ms: int) -> None:
        self.writer = writer
        writer.lock = asyncio.Lock()
        self.every = lease_ms / 3000
        self.message = heartbeat(lease_ms)
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        writer = self.writer
        assert writer.lock is not None
        loop = asyncio.get_running_loop()
        async with writer.lock:  # the first at once: the client learns the lease
            await writer.context.write(self.message)
            writer.last_write = loop.time()
        while True:
            due = writer.last_write + self.every
            if due > loop.time():
                await asyncio.sleep(due - loop.time())
                continue
            if writer.lock.locked():  # a write under way: the stream is not idle
                await asyncio.sleep(self.every / 4)
                continue
            async with writer.lock:
                await writer.context.write(self.message)
                writer.last_write = loop.time()

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task


class WriteWatch:
    """The slow-reader timeout of every open stream's writes, kept by one timer on the event
    loop instead of one per write (which cost about a twentieth of the gateway's CPU per
    action): a write notes when it started; every quarter of the timeout, while writes are
    under way, each write that has waited longer than the timeout is cancelled, and its stream
    ends RESOURCE_EXHAUSTED ``SLOW_CONSUMER``. A stalled write therefore ends between 1 and 1.25
    timeouts after it began."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout = timeout_s
        self._since: dict[_Writer, float] = {}
        self._sweep_at: asyncio.TimerHandle | None = None

    def writing(self, writer: _Writer) -> None:
        loop = asyncio.get_running_loop()
        self._since[writer] = loop.time()
        if self._sweep_at is None:
            self._sweep_at = loop.call_later(self.timeout / 4, self._sweep, loop)

    def written(self, writer: _Writer) -> None:
        self._since.pop(writer, None)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self._sweep_at = None
        now = loop.time()
        for writer, since in list(self._since.items()):
            if now - since >= writer.timeout:
                del self._since[writer]
                writer.stalled = True
                writer.task.cancel()
        if self._since:  # writes under way: look again
            self._sweep_at = loop.call_later(self.timeout / 4, self._sweep, loop)
