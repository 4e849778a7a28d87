"""Any replica serves any client: a call for a table another gateway replica runs is sent on to
that replica (its address from the NOT_OWNER answer, :func:`.tables.leases.not_owner`) and its
answer — response, stream or error, code, message and details alike — is the caller's.

So a client behind one DNS name never has to find the owner: ``Act``, ``JoinSeat``, ``Leave``,
``GetTableState`` and ``GetHint`` are forwarded with the same request (same request id: the
owner's idempotency holds), and ``Subscribe`` is relayed event by event from the owner's stream.
A relayed call carries ``x-mahjong-forwarded`` (the sending replica's id) and is never forwarded
again: a replica that is not the owner either answers NOT_OWNER, so no call loops between
replicas. Replicas call each other's public port over TLS, each verifying the other's
certificate as the gateway's; a relayed call carries no caller identity, so the owner treats it
as the player's own. The internal token, when the caller sent it, goes along.

An owner that answers nothing (paused by a long GC or a frozen VM, or cut off with its
connections half-open) must not hold its tables past its lease (gray failure):

* a forwarded call's try lasts at most half the lease (:attr:`_Forwarding.try_s`); a try that
  times out or finds the owner unreachable or gone (UNAVAILABLE) is not the caller's answer:
  the replica looks for the table again (:class:`OwnerSilent`), and once the lease has expired
  it takes the table over itself, fenced, and answers there: within the lease and one try,
  inside the caller's own deadline (idempotent: the same request id every try);
* a relayed stream is watched (:class:`RelayWatch`): when the table's lease is no longer the
  one it attached under (expired, released, taken over), the relay is cancelled and the stream
  re-attached where the table runs now, after the last event it sent.

Whether a call is served here or forwarded, and when it is looked for again, is decided once,
for both server models, by :func:`route` (a generator of the next move: serve here, forward to
an owner, pause); :func:`here_or_owner` runs it in a thread and :func:`here_or_owner_async` on
the event loop. :class:`Forwarder` serves the asyncio server (on its event loop),
:class:`SyncForwarder` the threaded one and the web port (Connect, gRPC-Web), whose calls run in
threads: there the owner's error is raised again as the same domain error (code, message,
reason, details), so every transport answers it as the owner did.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any

import grpc
import structlog
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc

from infra.addresses import CLIENT_KEEPALIVE_OPTIONS
from infra.interceptor import INTERNAL_TOKEN_HEADER
from infra.tls import TLSFiles, channel_credentials, dial, name_override
from infra.tracing_grpc import aio_interceptors
from services.gateway.tables.leases import LeaseWatch
from shared.errors import ERROR_CLASSES, DomainError, Unavailable

log_ = structlog.get_logger("mahjong.gateway.forwarding")

FORWARDED_HEADER = "x-mahjong-forwarded"
FORWARD_TIMEOUT_S = 30.0  # a forwarded unary call without a deadline of its own
MIN_TRY_S = 0.2  # the shortest try on the owner, however short the lease
AGAIN_PAUSE_S = 0.1  # before looking again after an owner that could not be reached
# answers that are not the owner's verdict: the owner is gone, moving or silent (CANCELLED: it
# ended the call as it stopped; this caller's own cancellation never reaches a try's answer)
RETRIED = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
)


class OwnerSilent(Exception):
    """A forwarded try got no answer of the owner's (its deadline passed, or the owner could not
    be reached or no longer runs the table): look for the table again after ``pause`` seconds
    (taking it over once its lease has expired)."""

    def __init__(self, pause: float) -> None:
        super().__init__(f"the owner did not answer; again in {pause:g} s")
        self.pause = pause


class _Forwarding:
    """Which calls go where, and what they carry; channels to the other replicas, one per
    address, kept; how long one try on the owner lasts (``lease_ms``: the tables' lease)."""

    def __init__(
        self,
        replica_id: str,
        own_address: str,
        tls: TLSFiles | None = None,
        lease_ms: int = 30_000,
    ) -> None:
        self.replica_id = replica_id
        self.own_address = own_address
        self.tls = tls  # this replica's certificate: the owner's is verified as "gateway"
        # Half the lease: a silent owner is tried twice at most before its lease runs out.
        self.try_s = max(MIN_TRY_S, lease_ms / 2000)
        self._stubs: dict[str, gateway_pb2_grpc.GatewayServiceStub] = {}

    def owner(self, exc: Exception, context) -> str | None:
        """Where to send a call refused with ``exc``: the owner's address when ``exc`` is
        NOT_OWNER naming one that is not this replica and the call was not forwarded already."""
        if not isinstance(exc, Unavailable) or exc.reason != "NOT_OWNER":
            return None
        address = exc.details.get("owner_address", "")
        if not address or address == self.own_address or forwarded(context):
            return None
        return address

    def moving(self, exc: Exception, context, give_up: float) -> bool:
        """Whether a call refused with ``exc`` here is looked for again: NOT_OWNER naming no
        owner (the table is between owners: released by one that drained, or claimed by
        another at the same moment), the call not forwarded to this replica, and time left."""
        return (
            isinstance(exc, Unavailable)
            and exc.reason == "NOT_OWNER"
            and not exc.details.get("owner_address")
            and not forwarded(context)
            and time.monotonic() + AGAIN_PAUSE_S < give_up
        )

    def stub(self, address: str) -> gateway_pb2_grpc.GatewayServiceStub:
        stub = self._stubs.get(address)
        if stub is None:
            channel = self._channel(address)
            stub = self._stubs[address] = gateway_pb2_grpc.GatewayServiceStub(channel)
        return stub

    def _channel(self, address: str):
        raise NotImplementedError

    def metadata(self, context) -> tuple[tuple[str, str], ...]:
        sent = tuple(
            (k, v) for k, v in (context.invocation_metadata() or ()) if k == INTERNAL_TOKEN_HEADER
        )
        return (*sent, (FORWARDED_HEADER, self.replica_id))

    @staticmethod
    def give_up(context) -> float:
        """When (time.monotonic) to stop trying: the caller's deadline, or
        :data:`FORWARD_TIMEOUT_S` from now for a call without one."""
        left = context.time_remaining()
        # None (asyncio) or 0/infinite (the threaded server) when the call has no deadline
        ok = left is not None and 0 < left < FORWARD_TIMEOUT_S
        return time.monotonic() + (left if ok else FORWARD_TIMEOUT_S)

    def try_timeout(self, give_up: float) -> float:
        return max(0.0, min(self.try_s, give_up - time.monotonic()))

    @staticmethod
    def again(code: grpc.StatusCode, give_up: float) -> OwnerSilent | None:
        """Whether a try that ended ``code`` is tried again (:class:`OwnerSilent`) or is the
        caller's answer (None): the owner's own verdicts are, and so is the last try's."""
        if code not in RETRIED or time.monotonic() + AGAIN_PAUSE_S >= give_up:
            return None
        return OwnerSilent(0.0 if code is grpc.StatusCode.DEADLINE_EXCEEDED else AGAIN_PAUSE_S)


class Forwarder(_Forwarding):
    """For the asyncio server: used on its event loop."""

    def _channel(self, address: str) -> grpc.aio.Channel:
        traced = aio_interceptors()  # None when tracing is off
        if self.tls is None:
            return grpc.aio.insecure_channel(
                address, options=CLIENT_KEEPALIVE_OPTIONS, interceptors=traced
            )
        options = [*CLIENT_KEEPALIVE_OPTIONS, *name_override("gateway")]
        return grpc.aio.secure_channel(
            address, channel_credentials(self.tls), options=options, interceptors=traced
        )

    async def unary(self, method: str, address: str, request, context, give_up: float):
        """One try of ``method`` on the owner; its error is this call's, unchanged, unless it
        is :class:`OwnerSilent` (``give_up``: :meth:`give_up`)."""
        call = getattr(self.stub(address), method)
        try:
            return await call(
                request, metadata=self.metadata(context), timeout=self.try_timeout(give_up)
            )
        except grpc.aio.AioRpcError as exc:
            silent = self.again(exc.code(), give_up)
            if silent is not None:
                raise silent from None
            await relay_error(context, exc)

    def stream(self, address: str, request, after: int, context):
        """The owner's Subscribe for ``request`` from ``after`` on (the caller iterates and
        cancels it)."""
        return self.stub(address).Subscribe(
            resumed(request, after), metadata=self.metadata(context)
        )


class SyncForwarder(_Forwarding):
    """For calls that run in threads (the threaded server, the web port)."""

    def _channel(self, address: str) -> grpc.Channel:
        return dial(address, "gateway", self.tls, CLIENT_KEEPALIVE_OPTIONS)

    def unary(self, method: str, address: str, request, context, give_up: float):
        call = getattr(self.stub(address), method)
        try:
            return call(request, metadata=self.metadata(context), timeout=self.try_timeout(give_up))
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.Call) else grpc.StatusCode.UNAVAILABLE
            silent = self.again(code, give_up)
            if silent is not None:
                raise silent from None
            raise error_of(exc) from None

    def stream(self, address: str, request, after: int, context):
        """The owner's Subscribe for ``request`` from ``after`` on (the caller iterates and
        cancels it)."""
        return self.stub(address).Subscribe(
            resumed(request, after), metadata=self.metadata(context)
        )


HERE = "here"  # :func:`route`'s move: serve the call on this replica


@dataclass(frozen=True)
class Forward:
    """:func:`route`'s move: send the call to the replica at ``owner`` (one try, until
    ``give_up`` at the latest)."""

    owner: str
    give_up: float


@dataclass(frozen=True)
class Pause:
    """:func:`route`'s move: wait ``seconds``, then go on."""

    seconds: float


Move = str | Forward | Pause
Route = Generator[Move, Any, Any]


def route(forwarding: _Forwarding, context) -> Route:
    """The one forward-or-serve path of a unary call, for both server models: serve it here; a
    table another replica runs (NOT_OWNER naming it): forward it there; a table between owners
    (NOT_OWNER naming none) or an owner that did not answer (:class:`OwnerSilent`): look for
    it again after a pause (taken over here once its lease expired), until the caller's
    deadline. A generator of the moves: its driver makes each one and sends back its result
    (the call's answer: the route returns it) or throws in its error (raised again unless it
    is one of those)."""
    give_up = forwarding.give_up(context)
    while True:
        try:
            return (yield HERE)
        except Unavailable as exc:
            owner = forwarding.owner(exc, context)
            if owner is None:
                if not forwarding.moving(exc, context, give_up):
                    raise
                yield Pause(AGAIN_PAUSE_S)
                continue
        try:
            return (yield Forward(owner, give_up))
        except OwnerSilent as silent:
            yield Pause(silent.pause)


def here_or_owner(
    forwarder: SyncForwarder, method: str, serve: Callable[[], Any], request, context
):
    """:func:`route` in a thread (the threaded server, the web port): ``serve()`` answers
    here, ``method`` is the RPC forwarded."""
    moves = route(forwarder, context)
    move = next(moves)
    while True:
        try:
            if move is HERE:
                result = serve()
            elif isinstance(move, Forward):
                result = forwarder.unary(method, move.owner, request, context, move.give_up)
            else:
                assert isinstance(move, Pause)
                time.sleep(move.seconds)
                result = None
        except Exception as exc:
            move = moves.throw(exc)
            continue
        try:
            move = moves.send(result)
        except StopIteration as done:
            return done.value


async def here_or_owner_async(
    forwarder: Forwarder, method: str, serve: Callable[[], Awaitable[Any]], request, context
):
    """:func:`route` on the event loop (the asyncio server): ``serve()`` answers here (in a
    worker thread), ``method`` is the RPC forwarded."""
    moves = route(forwarder, context)
    move = next(moves)
    while True:
        try:
            if move is HERE:
                result = await serve()
            elif isinstance(move, Forward):
                result = await forwarder.unary(method, move.owner, request, context, move.give_up)
            else:
                assert isinstance(move, Pause)
                await asyncio.sleep(move.seconds)
                result = None
        except Exception as exc:
            move = moves.throw(exc)
            continue
        try:
            move = moves.send(result)
        except StopIteration as done:
            return done.value


class Stuck:
    """How long a stream goes on looking for its table's owner without delivering anything:
    twice the lease and a second (its owner's lease runs out, another replica takes over),
    counted from the last progress; past it the client gets UNAVAILABLE and retries itself."""

    def __init__(self, forwarding: _Forwarding) -> None:
        self.limit_s = 4 * forwarding.try_s + 1.0
        self._sent: int | None = None
        self._since = 0.0

    def may_wait(self, sent: int) -> bool:
        """Whether to look again, the stream having sent up to event ``sent``."""
        now = time.monotonic()
        if sent != self._sent:
            self._sent, self._since = sent, now
        return now - self._since < self.limit_s

    def give_up(self, table_id: str) -> Unavailable:
        return Unavailable(
            f"no gateway replica could be reached that runs table {table_id} for "
            f"{self.limit_s:g} s; resume the stream (Subscribe after_sequence = the last event "
            "received) in a moment",
            reason="NOT_OWNER",
            table_id=table_id,
        )


@dataclass(eq=False)
class Relay:
    """One relayed stream under watch: its table, the epoch of the lease it attached under,
    how to cancel it; ``stale`` once the watch cancelled it for a lease that moved."""

    table_id: str
    epoch: int
    cancel: Callable[[], None]
    stale: bool = False


class RelayWatch:
    """This replica's relayed streams, each with the lease it attached under. One thread looks
    every ``every_s`` (a third of the lease) and cancels each relay whose table's lease moved
    (``moved(table_id, epoch)``: :meth:`LeaseWatch.moved`, one store read per table however
    many streams relay it): an owner that went silent is noticed within its lease and that
    look, though its connection may stay open and deliver nothing."""

    def __init__(self, leases: LeaseWatch, every_s: float) -> None:
        self.leases = leases
        self.every_s = every_s
        self._relays: set[Relay] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    def attach(self, table_id: str) -> int | None:
        """The epoch of the table's running lease, to relay under (None: no owner holds it)."""
        lease = self.leases.running(table_id)
        return lease.epoch if lease is not None else None

    def watch(self, table_id: str, epoch: int, cancel: Callable[[], None]) -> Relay:
        relay = Relay(table_id, epoch, cancel)
        with self._lock:
            self._relays.add(relay)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="gateway-relay-watch", daemon=True
                )
                self._thread.start()
        return relay

    def taken_over(self, table_id: str) -> None:
        """This replica just took ``table_id`` over (the manager's on_event): the relays of it
        from the former owner are cancelled at once, not at the next look, so a client whose
        stream moved here from a paused owner gets the new owner's events without waiting."""
        self.leases.forget(table_id)
        self._wake.set()

    def done(self, relay: Relay) -> None:
        with self._lock:
            self._relays.discard(relay)

    def look(self) -> int:
        """Cancel every relay whose lease moved; how many."""
        with self._lock:
            relays = list(self._relays)
        cancelled = 0
        for relay in relays:
            try:
                moved = self.leases.moved(relay.table_id, relay.epoch)
            except Exception as exc:  # the store is down: no verdict, look again later
                log_.warning("relay_watch_failed", table=relay.table_id, error=repr(exc))
                continue
            if moved and not relay.stale:
                relay.stale = True
                relay.cancel()
                cancelled += 1
        return cancelled

    def _run(self) -> None:
        while True:
            self._wake.wait(self.every_s)
            self._wake.clear()
            self.look()


def error_of(exc: grpc.RpcError) -> DomainError:
    """The owner's refusal as the domain error it was raised as there: same code, message,
    reason and details (so :func:`infra.status.rich_status` sends the same status again)."""
    code = exc.code().name if isinstance(exc, grpc.Call) else "UNAVAILABLE"
    message = exc.details() if isinstance(exc, grpc.Call) else str(exc)
    reason, details = "", {}
    status = rpc_status.from_call(exc) if isinstance(exc, grpc.Call) else None
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            reason, details = info.reason, dict(info.metadata)
    cls = ERROR_CLASSES.get(code, DomainError)
    err = cls(message or "", reason=reason or None, **details)
    if cls is DomainError:
        err.code = code
    return err


def resumed(request: gateway_pb2.SubscribeRequest, after: int) -> gateway_pb2.SubscribeRequest:
    """``request`` again from the last event the caller was sent (a stream relayed after the
    table moved goes on where it was)."""
    again = gateway_pb2.SubscribeRequest()
    again.CopyFrom(request)
    again.after_sequence = after
    return again


def forwarded(context) -> bool:
    return any(k == FORWARDED_HEADER for k, _ in (context.invocation_metadata() or ()))


async def relay_error(context, exc: grpc.aio.AioRpcError) -> None:
    """End this call with the owner's status: code, message and details (ErrorInfo, RetryInfo)."""
    trailing = tuple(
        (k, v) for k, v in (exc.trailing_metadata() or ()) if k == "grpc-status-details-bin"
    )
    await context.abort(exc.code(), exc.details() or "", trailing)
