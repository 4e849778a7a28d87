"""The port to the gateway: create a table for four seats (GatewayService.CreateTable).

The domain depends only on :class:`TableAllocator`; ``gateway_client.GatewayAllocator`` implements
it over gRPC (idempotent by request id, with deadlines); unit tests use an in-memory fake.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class SeatRequest:
    player_id: str
    display_name: str
    bot: bool = False


@dataclass(frozen=True, slots=True)
class TableRequest:
    request_id: str  # idempotency key: the same id always yields the same table
    ruleset: str
    stake: int
    seats: tuple[SeatRequest, ...]  # exactly 4, index = seat
    max_hands: int = 0  # 0 = until the players leave
    tag: str = ""
    first_dealer: int | None = None  # None = random
    ruleset_options: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TableAllocation:
    table_id: str
    seat_tokens: tuple[str, ...]  # by seat; "" for bot seats
    gateway_address: str
    # True when the request's table existed already (another replica, or an earlier try,
    # created it): nothing was created now, so nothing is counted as created.
    reused: bool = False


class TableAllocator(Protocol):
    def create_table(self, request: TableRequest) -> TableAllocation:
        """Create (or find, by request id) the table; raises shared.errors.Unavailable when no
        gateway answers."""
        ...
