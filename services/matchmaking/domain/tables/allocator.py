"""The port to the gateway: create a table for four seats (GatewayService.CreateTable).

The domain depends only on :class:`TableAllocator`; ``gateway_client.GatewayAllocator`` implements
it over gRPC (idempotent by request id, with deadlines); unit tests use an in-memory fake.
A gateway that cannot be reached is retried on later ticks; one that refuses the request
(:class:`TableRefused`) is not: the room, match or tournament fails, with the reason shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from shared.errors import FailedPrecondition


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
    # A tournament round's deadline (Unix ms, 0 = none): no new hand after it (RULES.md).
    end_by_unix_ms: int = 0
    # The room service fee (台费, RULES.md §9a): silver per hand from each human seat to the
    # house, fixed for the table's life when it is created.
    fee_per_hand: int = 0


@dataclass(frozen=True, slots=True)
class TableAllocation:
    table_id: str
    seat_tokens: tuple[str, ...]  # by seat; "" for bot seats
    gateway_address: str
    # True when the request's table existed already (another replica, or an earlier try,
    # created it): nothing was created now, so nothing is counted as created.
    reused: bool = False


class TableRefused(FailedPrecondition):
    """The gateway refused the table for what it asks (its settings): asking again would be
    refused again, so the room, match or tournament that wanted it fails, with ``message``
    (the gateway's reason) for its players to see, and is never retried."""

    reason = "TABLE_REFUSED"


class TableAllocator(Protocol):
    def create_table(self, request: TableRequest) -> TableAllocation:
        """Create (or find, by request id) the table; raises shared.errors.Unavailable when no
        gateway answers (tried again later), :class:`TableRefused` when the gateway refuses
        the request itself (never tried again)."""
        ...
