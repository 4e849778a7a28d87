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
as the player's own. The internal token, when the caller sent it, goes along. When
the owner cannot be reached (it died; its lease has not expired yet) the caller gets UNAVAILABLE
and retries; once the lease expires a replica takes the table over and serves it itself.

:class:`Forwarder` serves the asyncio server (on its event loop), :class:`SyncForwarder` the
threaded one and the web port (Connect, gRPC-Web), whose calls run in threads: there the
owner's error is raised again as the same domain error (code, message, reason, details), so
every transport answers it as the owner did.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc

from services.gateway.tables.records import ERROR_CLASSES
from shared.addresses import CLIENT_KEEPALIVE_OPTIONS
from shared.errors import DomainError, Unavailable
from shared.server import INTERNAL_TOKEN_HEADER
from shared.tls import TLSFiles, channel_credentials, dial, name_override

FORWARDED_HEADER = "x-mahjong-forwarded"
FORWARD_TIMEOUT_S = 30.0  # a forwarded unary call without a deadline of its own


class _Forwarding:
    """Which calls go where, and what they carry; channels to the other replicas, one per
    address, kept."""

    def __init__(self, replica_id: str, own_address: str, tls: TLSFiles | None = None) -> None:
        self.replica_id = replica_id
        self.own_address = own_address
        self.tls = tls  # this replica's certificate: the owner's is verified as "gateway"
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
    def timeout(context) -> float:
        left = context.time_remaining()
        # None (asyncio) or 0/infinite (the threaded server) when the call has no deadline
        return left if left is not None and 0 < left < FORWARD_TIMEOUT_S else FORWARD_TIMEOUT_S


class Forwarder(_Forwarding):
    """For the asyncio server: used on its event loop."""

    def _channel(self, address: str) -> grpc.aio.Channel:
        if self.tls is None:
            return grpc.aio.insecure_channel(address, options=CLIENT_KEEPALIVE_OPTIONS)
        options = [*CLIENT_KEEPALIVE_OPTIONS, *name_override("gateway")]
        return grpc.aio.secure_channel(address, channel_credentials(self.tls), options=options)

    async def unary(self, method: str, address: str, request, context):
        """``method`` on the owner; its error is this call's, unchanged."""
        call = getattr(self.stub(address), method)
        try:
            return await call(
                request, metadata=self.metadata(context), timeout=self.timeout(context)
            )
        except grpc.aio.AioRpcError as exc:
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

    def unary(self, method: str, address: str, request, context):
        call = getattr(self.stub(address), method)
        try:
            return call(request, metadata=self.metadata(context), timeout=self.timeout(context))
        except grpc.RpcError as exc:
            raise error_of(exc) from None

    def stream(self, address: str, request, after: int, context) -> Iterator:
        """The owner's Subscribe from ``after`` on, response by response (cancelled when the
        caller stops)."""
        call = self.stub(address).Subscribe(
            resumed(request, after), metadata=self.metadata(context)
        )
        try:
            yield from call
        except grpc.RpcError as exc:
            raise error_of(exc) from None
        finally:
            call.cancel()


def error_of(exc: grpc.RpcError) -> DomainError:
    """The owner's refusal as the domain error it was raised as there: same code, message,
    reason and details (so :func:`shared.server.rich_status` sends the same status again)."""
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
