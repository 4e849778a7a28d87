"""What the matchmaking domain needs from the world, declared here so the domain names no store,
no server and no gRPC:

* :class:`Records` — namespaces of versioned records: the part of the service's store every
  concept keeps its records in (players, sessions, presence, queues, rooms, tables,
  tournaments). Any :class:`shared.store.base.Store` is one; the domain only reads and writes
  records through these six calls, so a test may pass any object that has them.
* The ledger's repository is its own:
  :class:`.economy.books.LedgerStore` (one implementation per
  backend, in :mod:`services.matchmaking.storage`).
* The gateway, which creates tables:
  :class:`.tables.allocator.TableAllocator`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
