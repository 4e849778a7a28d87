"""The store interface every stateful service uses (walls, tables and their event logs,
players, ledgers, rooms, tournaments).

Two primitives cover them all:

* **records**: ``namespace/key → bytes`` with a version that rises on every write. ``update``
  is an atomic read-modify-write (one transaction; concurrent callers are serialised), so a
  wall draw or a balance change can never be lost or applied twice.
* **logs**: append-only sequences per log name, numbered from 1 (table event logs, ledgers).

Backends (one file each): :mod:`shared.store.memory` for unit tests, :mod:`shared.store.sqlite`
for the embedded default, :mod:`shared.store.postgres` for a cluster. Values are opaque bytes;
services choose their own encoding.

Errors are :class:`StoreError` subclasses, never domain errors (a handler that remembers a
domain refusal must not remember an outage). Each carries the gRPC ``code`` and ``reason`` the
server answers with when one escapes a handler (:mod:`shared.server`): a store that cannot be
reached is ``UNAVAILABLE`` (retry; the write was either applied whole or not at all).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

R = TypeVar("R")


class StoreError(Exception):
    """Base class of store errors. ``code``/``reason``: the gRPC status a server answers with
    when the error escapes a handler (INTERNAL for those a service is expected to handle)."""

    code = "INTERNAL"
    reason = "STORE_ERROR"

    @property
    def message(self) -> str:
        return str(self)


class AlreadyExists(StoreError):
    """``create`` on a key that exists."""


class Conflict(StoreError):
    """A write whose ``expected_version`` no longer matches."""


class StoreUnavailable(StoreError):
    """The store cannot be reached (connection lost, pool exhausted, server down) or stayed
    contended past the retries. A write that raises this was applied whole or not at all,
    never in part; callers retry with the same request id."""

    code = "UNAVAILABLE"
    reason = "STORE_UNAVAILABLE"


@dataclass(frozen=True, slots=True)
class Record:
    value: bytes
    version: int


class Store(abc.ABC):
    """Namespaced versioned records plus append-only logs."""

    @abc.abstractmethod
    def get(self, namespace: str, key: str) -> Record | None:
        """The record, or None when absent."""

    @abc.abstractmethod
    def create(self, namespace: str, key: str, value: bytes) -> Record:
        """Insert a new record (version 1); :class:`AlreadyExists` when the key is taken."""

    @abc.abstractmethod
    def put(
        self, namespace: str, key: str, value: bytes, *, expected_version: int | None = None
    ) -> Record:
        """Write a record. With ``expected_version`` the write succeeds only if the stored
        version still equals it (0 = must not exist); else :class:`Conflict`."""

    @abc.abstractmethod
    def update(
        self, namespace: str, key: str, fn: Callable[[bytes | None], tuple[bytes | None, R]]
    ) -> R:
        """Atomic read-modify-write. ``fn`` gets the current value (None if absent) and returns
        ``(new_value, result)``; ``new_value`` None leaves the record unchanged. If ``fn`` raises,
        nothing is written and the exception propagates. Returns ``result``."""

    @abc.abstractmethod
    def delete(self, namespace: str, key: str) -> bool:
        """Remove a record; True if it existed."""

    @abc.abstractmethod
    def scan(self, namespace: str, prefix: str = "") -> Iterator[tuple[str, Record]]:
        """Records of a namespace whose key starts with ``prefix``, in key order."""

    @abc.abstractmethod
    def append(self, log: str, entry: bytes) -> int:
        """Append to a log; returns the entry's sequence number (1, 2, …)."""

    @abc.abstractmethod
    def read_log(
        self, log: str, after: int = 0, limit: int | None = None
    ) -> list[tuple[int, bytes]]:
        """Entries with sequence number > ``after``, in order, at most ``limit``."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
