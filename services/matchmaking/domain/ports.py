"""What the matchmaking domain needs from the world, declared here so the domain names no store,
no server and no gRPC:

* Each concept reaches its records through its own repository, declared in its package and
  implemented over the store in :mod:`services.matchmaking.storage` (one file each):
  :class:`.players.repository.PlayerRepository` and ``PresenceRepository``,
  :class:`.queues.repository.QueueRepository`, :class:`.rooms.repository.RoomRepository`,
  :class:`.tables.repository.TableRepository`,
  :class:`.tournaments.repository.TournamentRepository` and the 加倍卡 holds'
  :class:`.economy.repository.HoldRepository`.
* The ledger's repository is its own: :class:`.economy.books.LedgerStore` (one implementation
  per backend), reached from the service's store by :func:`.economy.books.books_of`; the
  ledger's functions take that store, typed :class:`Records` below (the namespaced versioned
  records any :class:`infra.store.base.Store` is, which the repositories' implementations are
  written over).
* The gateway, which creates tables:
  :class:`.tables.allocator.TableAllocator`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

R = TypeVar("R")


class StoredRecord(Protocol):
    """A record as read: its value and version (the version rises on every write)."""

    @property
    def value(self) -> bytes: ...

    @property
    def version(self) -> int: ...


class Records(Protocol):
    """Namespaced versioned records. ``create`` refuses a key that is taken (the store's
    ``AlreadyExists``); ``update`` is an atomic read-modify-write whose ``fn`` may run more than
    once (keep it pure): it gets the value (None when absent) and returns (new value or None to
    leave it, result)."""

    def get(self, namespace: str, key: str) -> StoredRecord | None: ...

    def create(self, namespace: str, key: str, value: bytes) -> StoredRecord: ...

    def put(self, namespace: str, key: str, value: bytes) -> StoredRecord: ...

    def update(
        self, namespace: str, key: str, fn: Callable[[bytes | None], tuple[bytes | None, R]]
    ) -> R: ...

    def delete(self, namespace: str, key: str) -> bool: ...

    def scan(self, namespace: str, prefix: str = "") -> Iterator[tuple[str, StoredRecord]]: ...


class Metrics(Protocol):
    """What the domain counts, passed to the parts that count it."""

    def tables_created(self, kind: str, count: int = 1) -> None:
        """Tables created on a gateway, by kind (quick, room, tournament)."""

    def quick_table(self, bots: int, waits: Sequence[tuple[int, float]]) -> None:
        """A quick-match table formed: its bot seats, and each ticket's (stake, wait)."""

    def hand_recorded(self, new: bool) -> None: ...

    def report_refused(self, reason: str) -> None: ...

    def silver_short(self, amount: int) -> None:
        """Silver a hand's losers could not pay (破产): the winners' gains were cut by it."""

    def items_bought(self, asset: str, count: int) -> None: ...

    def seat_bankrupt(self) -> None: ...

    def round_done(self) -> None: ...

    def tournament_step_failed(self, step: str) -> None: ...

    def tournaments_stalled(self, count: int) -> None: ...

    def books(self, house_net: int, bot_net_max: int, bot_net_alerts: int) -> None:
        """Today's reconciliation gauges."""
