"""Any replica serves any client: a call for a table another gateway replica runs is sent on to
that replica (its address from the NOT_OWNER answer, :func:`.tables.leases.not_owner`) and its
answer — response, stream or error, code, message and details alike — is the caller's.

So a client behind one DNS name never has to find the owner: ``Act``, ``JoinSeat``, ``Leave``,
``GetTableState`` and ``GetHint`` are forwarded with the same request (same request id: the
owner's idempotency holds), and ``Subscribe`` is relayed event by event from the owner's stream.
A relayed call carries ``x-mahjong-forwarded`` (the sending replica's id) and is never forwarded
again: a replica that is not the owner either answers NOT_OWNER, so no call loops between
replicas. The internal token, when the caller sent it, goes along (JoinSeat checks it). When
the owner cannot be reached (it died; its lease has not expired yet) the caller gets UNAVAILABLE
and retries; once the lease expires a replica takes the table over and serves it itself.
"""

from __future__ import annotations

import grpc
from mahjong.gateway.v1 import gateway_pb2_grpc

from shared.addresses import CLIENT_KEEPALIVE_OPTIONS
from shared.errors import Unavailable
from shared.server import INTERNAL_TOKEN_HEADER

FORWARDED_HEADER = "x-mahjong-forwarded"
FORWARD_TIMEOUT_S = 30.0  # a forwarded unary call without a deadline of its own


class Forwarder:
    """Channels to the other replicas (one per address, kept), used on the event loop."""

    def __init__(self, replica_id: str, own_address: str) -> None:
        self.replica_id = replica_id
        self.own_address = own_address
        self._stubs: dict[str, gateway_pb2_grpc.GatewayServiceStub] = {}
        self._channels: list[grpc.aio.Channel] = []

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
            channel = grpc.aio.insecure_channel(address, options=CLIENT_KEEPALIVE_OPTIONS)
            self._channels.append(channel)
            stub = self._stubs[address] = gateway_pb2_grpc.GatewayServiceStub(channel)
        return stub

    def metadata(self, context) -> tuple[tuple[str, str], ...]:
        sent = tuple(
            (k, v) for k, v in (context.invocation_metadata() or ()) if k == INTERNAL_TOKEN_HEADER
        )
        return (*sent, (FORWARDED_HEADER, self.replica_id))

    @staticmethod
    def timeout(context) -> float:
        left = context.time_remaining()
        return FORWARD_TIMEOUT_S if left is None else max(0.0, left)

    async def unary(self, method: str, address: str, request, context):
        """``method`` on the owner; its error is this call's, unchanged."""
        call = getattr(self.stub(address), method)
        try:
            return await call(
                request, metadata=self.metadata(context), timeout=self.timeout(context)
            )
        except grpc.aio.AioRpcError as exc:
            await relay_error(context, exc)

    def stream(self, address: str, request, context):
        """The owner's Subscribe for ``request`` (the caller iterates and cancels it)."""
        return self.stub(address).Subscribe(request, metadata=self.metadata(context))

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()


def forwarded(context) -> bool:
    return any(k == FORWARDED_HEADER for k, _ in (context.invocation_metadata() or ()))


async def relay_error(context, exc: grpc.aio.AioRpcError) -> None:
    """End this call with the owner's status: code, message and details (ErrorInfo, RetryInfo)."""
    trailing = tuple(
        (k, v) for k, v in (exc.trailing_metadata() or ()) if k == "grpc-status-details-bin"
    )
    await context.abort(exc.code(), exc.details() or "", trailing)
