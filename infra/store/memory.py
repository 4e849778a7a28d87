"""In-memory store backend: one process, no persistence. For unit tests and benchmarks.

One lock serialises every operation, and one clock (``clock_ms``, the system clock unless a
test gives another) judges every lease."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from infra.store.base import (
    AlreadyExists,
    Conflict,
    Fence,
    Lease,
    Record,
    Store,
    check_fence,
    check_names,
    next_lease,
    renewed_lease,
)
from infra.store.metrics import TRACED
from infra.tracing import trace_store

R = TypeVar("R")


def system_clock_ms() -> int:
    return int(time.time() * 1000)


class MemoryStore(Store):
    def __init__(self, clock_ms: Callable[[], int] = system_clock_ms) -> None:
        self._lock = threading.RLock()
        self._records: dict[tuple[str, str], Record] = {}
        self._logs: dict[str, list[bytes]] = {}
        self._leases: dict[str, Lease] = {}
        self._clock_ms = clock_ms

    def _fenced(self, fence: Fence | None) -> None:
        if fence is not None:
            check_fence(fence, self._leases.get(fence.lease))

    def get(self, namespace: str, key: str) -> Record | None:
        with self._lock:
            return self._records.get((namespace, key))

    def create(
        self, namespace: str, key: str, value: bytes, *, fence: Fence | None = None
    ) -> Record:
        check_names(namespace, key)
        with self._lock:
            self._fenced(fence)
            if (namespace, key) in self._records:
                raise AlreadyExists(f"{namespace}/{key} exists")
            rec = Record(bytes(value), 1)
            self._records[(namespace, key)] = rec
            return rec

    def put(
        self,
        namespace: str,
        key: str,
        value: bytes,
        *,
        expected_version: int | None = None,
        fence: Fence | None = None,
    ) -> Record:
        check_names(namespace, key)
        with self._lock:
            self._fenced(fence)
            old = self._records.get((namespace, key))
            current = old.version if old else 0
            if expected_version is not None and expected_version != current:
                raise Conflict(f"{namespace}/{key} is at version {current}, not {expected_version}")
            rec = Record(bytes(value), current + 1)
            self._records[(namespace, key)] = rec
            return rec

    def update(
        self,
        namespace: str,
        key: str,
        fn: Callable[[bytes | None], tuple[bytes | None, R]],
        *,
        fence: Fence | None = None,
    ) -> R:
        check_names(namespace, key)
        with self._lock:
            self._fenced(fence)
            old = self._records.get((namespace, key))
            new, result = fn(old.value if old else None)
            if new is not None:
                self._records[(namespace, key)] = Record(
                    bytes(new), (old.version if old else 0) + 1
                )
            return result

    def delete(self, namespace: str, key: str, *, fence: Fence | None = None) -> bool:
        with self._lock:
            self._fenced(fence)
            return self._records.pop((namespace, key), None) is not None

    def scan(self, namespace: str, prefix: str = "") -> Iterator[tuple[str, Record]]:
        with self._lock:
            items = sorted(
                (k, r)
                for (ns, k), r in self._records.items()
                if ns == namespace and k.startswith(prefix)
            )
        return iter(items)

    def namespaces(self, prefix: str = "") -> list[str]:
        with self._lock:
            return sorted({ns for ns, _ in self._records if ns.startswith(prefix)})

    def _append(
        self,
        log: str,
        entries: list[bytes],
        expected_seq: int | None,
        fence: Fence | None,
        records: dict[tuple[str, str], bytes],
    ) -> int:
        with self._lock:
            self._fenced(fence)
            held = self._logs.get(log)
            last = len(held) if held else 0
            if expected_seq is not None and expected_seq != last:
                missed = [(i + 1, held[i]) for i in range(max(expected_seq, 0), last)]
                raise Conflict(f"log {log} is at {last}, not {expected_seq}", missed)
            if held is None:
                held = self._logs[log] = []
            held.extend(entries)
            for name, value in records.items():
                old = self._records.get(name)
                self._records[name] = Record(value, old.version + 1 if old else 1)
            return last + len(entries)

    def delete_log(self, log: str, *, fence: Fence | None = None) -> int:
        with self._lock:
            self._fenced(fence)
            return len(self._logs.pop(log, ()))

    def read_log(
        self, log: str, after: int = 0, limit: int | None = None
    ) -> list[tuple[int, bytes]]:
        with self._lock:
            entries = self._logs.get(log, [])
            end = len(entries) if limit is None else min(len(entries), after + limit)
            return [(i + 1, entries[i]) for i in range(max(after, 0), end)]

    # --- leases -----------------------------------------------------------------------------
    def clock_ms(self) -> int:
        return self._clock_ms()

    def acquire_lease(self, name: str, owner: str, ttl_ms: int) -> Lease:
        check_names(name, owner)
        with self._lock:
            lease = next_lease(self._leases.get(name), name, owner, ttl_ms, self._clock_ms())
            self._leases[name] = lease
            return lease

    def renew_lease(self, lease: Lease, ttl_ms: int) -> Lease:
        with self._lock:
            renewed = renewed_lease(self._leases.get(lease.name), lease, ttl_ms, self._clock_ms())
            self._leases[lease.name] = renewed
            return renewed

    def release_lease(self, lease: Lease) -> bool:
        with self._lock:
            current = self._leases.get(lease.name)
            if current is None or current.epoch != lease.epoch or current.owner != lease.owner:
                return False
            self._leases[lease.name] = Lease(lease.name, "", lease.epoch, self._clock_ms())
            return True

    def _as_read(self, lease: Lease, now: int) -> Lease:
        expired = not lease.owner or lease.expires_ms <= now
        return Lease(lease.name, lease.owner, lease.epoch, lease.expires_ms, expired)

    def get_lease(self, name: str) -> Lease | None:
        with self._lock:
            lease = self._leases.get(name)
            return None if lease is None else self._as_read(lease, self._clock_ms())

    def scan_leases(self, prefix: str = "") -> list[Lease]:
        with self._lock:
            now = self._clock_ms()
            return [
                self._as_read(lease, now)
                for name, lease in sorted(self._leases.items())
                if name.startswith(prefix)
            ]


trace_store(MemoryStore, "memory", TRACED)  # each operation a span of the call (tracing on)
