"""The gRPC side of the allocator port: ``GatewayService.CreateTable`` with deadlines and retries.

Idempotent by request id, so a retry after a lost answer (or a second replica doing the same
work) gets the same table. A refusal of the request itself (INVALID_ARGUMENT and the like)
becomes :class:`~services.matchmaking.domain.tables.allocator.TableRefused`: the domain fails what
wanted the table and never asks again. Any other failure becomes :class:`shared.errors.Unavailable`;
the domain then keeps the table pending and tries again on its next tick.
"""

from __future__ import annotations

import time

import grpc
import structlog
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc

from infra.convert.common import ruleset_to_ref, seat_to_proto
from infra.interceptor import internal_metadata
from infra.tls import TLSFiles, dial
from services.matchmaking.domain.tables.allocator import TableAllocation, TableRefused, TableRequest
from shared.errors import Unavailable

log = structlog.get_logger("mahjong.matchmaking.gateway_client")

_RETRYABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}
# The gateway's answer to what the request asks: the same request would be refused again.
_REFUSED = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.ALREADY_EXISTS,
}


def create_table_request(request: TableRequest) -> gateway_pb2.CreateTableRequest:
    return gateway_pb2.CreateTableRequest(
        request_id=request.request_id,
        ruleset=ruleset_to_ref(request.ruleset, request.ruleset_options),
        stake=request.stake,
        seats=[
            gateway_pb2.SeatAssignment(
                player_id=s.player_id, display_name=s.display_name, bot=s.bot
            )
            for s in request.seats
        ],
        max_hands=request.max_hands,
        tag=request.tag,
        first_dealer=(
            common_pb2.SEAT_UNSPECIFIED
            if request.first_dealer is None
            else seat_to_proto(request.first_dealer)
        ),
        end_by_unix_ms=request.end_by_unix_ms,
        fee_per_hand=request.fee_per_hand,
    )


class GatewayAllocator:
    """Creates tables on the gateway at ``address`` (a host:port, or a ``dns:///`` name of a
    headless Service, balanced round-robin): its mutual-TLS internal port, with matchmaking's
    certificate ``tls`` (None: plaintext, tests of that path), so the gateway knows the tables
    are matchmaking's; calls also carry the internal token, when there is one."""

    def __init__(
        self,
        address: str,
        *,
        timeout: float = 5.0,
        attempts: int = 3,
        backoff: float = 0.2,
        internal_token: str = "",
        tls: TLSFiles | None = None,
    ) -> None:
        self.address = address
        self._metadata = internal_metadata(internal_token)
        self.timeout = timeout
        self.attempts = attempts
        self.backoff = backoff
        self._channel = dial(
            address, "gateway", tls, options=[("grpc.lb_policy_name", "round_robin")]
        )
        self._stub = gateway_pb2_grpc.GatewayServiceStub(self._channel)

    def create_table(self, request: TableRequest) -> TableAllocation:
        message = create_table_request(request)
        last: grpc.RpcError | None = None
        for attempt in range(self.attempts):
            try:
                resp = self._stub.CreateTable(
                    message, timeout=self.timeout, metadata=self._metadata
                )
            except grpc.RpcError as exc:
                last = exc
                if exc.code() not in _RETRYABLE:
                    break
                time.sleep(self.backoff * (attempt + 1))
                continue
            tokens = tuple(resp.seat_tokens) + ("",) * (len(request.seats) - len(resp.seat_tokens))
            return TableAllocation(resp.table_id, tokens, resp.gateway_address or self.address)
        code = last.code().name if last else "UNKNOWN"
        details = last.details() if last else ""
        if last is not None and last.code() in _REFUSED:
            log.error(
                "create_table_refused", request_id=request.request_id, code=code, error=details
            )
            raise TableRefused(
                f"the gateway refused the table: {code} {details}",
                request_id=request.request_id,
                gateway_code=code,
            )
        log.warning("create_table_failed", request_id=request.request_id, code=code, error=details)
        raise Unavailable(
            f"gateway {self.address} did not create table {request.request_id}: {code} {details}",
            request_id=request.request_id,
        )

    def suspend_seat(self, table_id: str, player_id: str) -> None:
        """Tell the gateway that runs ``table_id`` that ``player_id`` is suspended (its
        SuspendSeat: the seat to 托管, then a bot). Another replica answers NOT_OWNER
        (UNAVAILABLE): tried again, each try on the next replica of the round robin;
        :class:`~shared.errors.Unavailable` when no try reached the owner."""
        request = gateway_pb2.SuspendSeatRequest(table_id=table_id, player_id=player_id)
        last: grpc.RpcError | None = None
        for attempt in range(max(self.attempts, 6)):
            try:
                self._stub.SuspendSeat(request, timeout=self.timeout, metadata=self._metadata)
                return
            except grpc.RpcError as exc:
                last = exc
                if exc.code() not in _RETRYABLE:
                    break
                time.sleep(self.backoff * min(attempt + 1, 3))
        code = last.code().name if last else "UNKNOWN"
        raise Unavailable(
            f"the gateway was not told of the suspension at {table_id}: {code} "
            f"{last.details() if last else ''}",
            table_id=table_id,
        )

    def close(self) -> None:
        self._channel.close()
