"""In-memory store backend: one process, no persistence. For unit tests and benchmarks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

from shared.store.base import AlreadyExists, Conflict, Record, Store

R = TypeVar("R")


class MemoryStore(Store):
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._records: dict[tuple[str, str], Record] = {}
        self._logs: dict[str, list[bytes]] = {}

    def get(self, namespace: str, key: str) -> Record | None:
        with self._lock:
            return self._records.get((namespace, key))

    def create(self, namespace: str, key: str, value: bytes) -> Record:
        with self._lock:
            if (namespace, key) in self._records:
                raise AlreadyExists(f"{namespace}/{key} exists")
            rec = Record(bytes(value), 1)
            self._records[(namespace, key)] = rec
            return rec

    def put(
        self, namespace: str, key: str, value: bytes, *, expected_version: int | None = None
    ) -> Record:
        with self._lock:
            old = self._records.get((namespace, key))
            current = old.version if old else 0
            if expected_version is not None and expected_version != current:
                raise Conflict(f"{namespace}/{key} is at version {current}, not {expected_version}")
            rec = Record(bytes(value), current + 1)
            self._records[(namespace, key)] = rec
            return rec

    def update(
        self, namespace: str, key: str, fn: Callable[[bytes | None], tuple[bytes | None, R]]
    ) -> R:
        with self._lock:
            old = self._records.get((namespace, key))
            new, result = fn(old.value if old else None)
            if new is not None:
                self._records[(namespace, key)] = Record(
                    bytes(new), (old.version if old else 0) + 1
                )
            return result

    def delete(self, namespace: str, key: str) -> bool:
        with self._lock:
            return self._records.pop((namespace, key), None) is not None

    def scan(self, namespace: str, prefix: str = "") -> Iterator[tuple[str, Record]]:
        with self._lock:
            items = sorted(
                (k, r)
                for (ns, k), r in self._records.items()
                if ns == namespace and k.startswith(prefix)
            )
        return iter(items)

    def append(self, log: str, entry: bytes) -> int:
        with self._lock:
            entries = self._logs.setdefault(log, [])
            entries.append(bytes(entry))
            return len(entries)

    def read_log(
        self, log: str, after: int = 0, limit: int | None = None
    ) -> list[tuple[int, bytes]]:
        with self._lock:
            entries = self._logs.get(log, [])
            end = len(entries) if limit is None else min(len(entries), after + limit)
            return [(i + 1, entries[i]) for i in range(max(after, 0), end)]
