"""The store interface every stateful service uses (walls, tables and their event logs,
players, ledgers, rooms, tournaments).

Two primitives cover them all:

* **records**: ``namespace/key → bytes`` with a version that rises on every write. ``update``
  is an atomic read-modify-write (one transaction; concurrent callers are serialised), so a
  wall draw or a balance change can never be lost or applied twice.
* **logs**: append-only sequences per log name, numbered from 1 (table event logs, ledgers);
  ``append_many`` writes several entries in one transaction (a table's events of one step).
* **leases with fencing** (ownership of a shard, e.g. a gateway's table): ``acquire_lease``
  gives a :class:`Lease` with an **epoch** that rises on every change of owner; expiry is
  judged by the store's own clock (never the caller's). Every write (``create``, ``put``,
  ``update``, ``delete``, ``append``, ``append_many``) takes an optional :class:`Fence`
  (lease name + epoch) that the store checks in the same transaction as the write: once
  another owner has taken the lease (or its owner released it), a write under the old epoch
  is refused with :class:`Fenced` and changes nothing. The store refuses, not the owner's
  good will, so a paused or partitioned former owner can never write (as Temporal's shard
  range ids).

Backends (one file each): :mod:`infra.store.memory` for unit tests, :mod:`infra.store.sqlite`
for the embedded default, :mod:`infra.store.postgres` for a cluster. Values are opaque bytes;
services choose their own encoding.

Errors are :class:`StoreError` subclasses, never domain errors (a handler that remembers a
domain refusal must not remember an outage). Each carries the gRPC ``code`` and ``reason`` the
server answers with when one escapes a handler (:mod:`infra.server`): a store that cannot be
reached is ``UNAVAILABLE`` (retry; the write was either applied whole or not at all).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Sequence
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
    """A write whose ``expected_version`` (or an append whose ``expected_seq``) no longer
    matches. ``entries``: for an append, the log's entries after ``expected_seq`` as the
    refusing transaction saw them, in order (what the writer missed, without a second
    transaction to read it; possibly not the very newest, whose writer committed meanwhile);
    empty otherwise."""

    def __init__(self, message: str, entries: list[tuple[int, bytes]] | None = None) -> None:
        super().__init__(message)
        self.entries: list[tuple[int, bytes]] = entries or []


class InvalidKey(StoreError):
    """A namespace, key, log or lease name (or owner) holding a NUL character, which no backend
    stores (PostgreSQL text cannot hold one): refused on every backend alike, nothing written.
    Reads of such a name find nothing."""

    code = "INVALID_ARGUMENT"
    reason = "INVALID_KEY"


def check_names(*names: str) -> None:
    """:class:`InvalidKey` if a name a write would store holds a NUL character."""
    for name in names:
        if "\x00" in name:
            raise InvalidKey(f"a store name cannot hold a NUL character: {name!r}")


def check_entries(entries: Sequence[bytes]) -> list[bytes]:
    """The entries of an ``append_many``, as bytes; ``ValueError`` for none."""
    if not entries:
        raise ValueError("append_many needs at least one entry")
    return [bytes(e) for e in entries]


def last_values(records: Sequence[tuple[str, str, bytes]]) -> dict[tuple[str, str], bytes]:
    """The records an ``append_many`` writes: ``(namespace, key) -> value``, the last value of a
    key given twice, names checked (:class:`InvalidKey`)."""
    out: dict[tuple[str, str], bytes] = {}
    for namespace, key, value in records:
        check_names(namespace, key)
        out[(namespace, key)] = bytes(value)
    return out


def has_nul(*names: str) -> bool:
    return any("\x00" in name for name in names)


class LeaseHeld(StoreError):
    """``acquire_lease`` while another owner's lease is still running. ``holder``: that lease
    (its owner, epoch and expiry by the store's clock)."""

    code = "UNAVAILABLE"
    reason = "LEASE_HELD"

    def __init__(self, holder: Lease) -> None:
        super().__init__(
            f"lease {holder.name!r} is held by {holder.owner!r} (epoch {holder.epoch}) until "
            f"{holder.expires_ms} ms (store clock)"
        )
        self.holder = holder


class Fenced(StoreError):
    """A write or renewal under an epoch that is no longer the lease's: another owner took it
    over, or its owner released it. Nothing was written. ``current``: the lease as it is now
    (None when there is no such lease)."""

    code = "UNAVAILABLE"
    reason = "FENCED"

    def __init__(self, fence: Fence, current: Lease | None) -> None:
        now = (
            "no such lease"
            if current is None
            else f"it is at epoch {current.epoch}, "
            + (f"held by {current.owner!r}" if current.owner else "released")
        )
        super().__init__(f"fenced: lease {fence.lease!r} epoch {fence.epoch} is stale ({now})")
        self.fence = fence
        self.current = current


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


@dataclass(frozen=True, slots=True)
class Fence:
    """What a fenced write asserts: lease ``lease`` is still at ``epoch`` and not released."""

    lease: str
    epoch: int


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease as the store holds it. ``owner`` is "" once released; ``expires_ms`` is by the
    store's clock (ms since the Unix epoch); ``expired`` is whether it had expired by that
    clock when read (False for a lease just acquired or renewed)."""

    name: str
    owner: str
    epoch: int
    expires_ms: int
    expired: bool = False

    @property
    def fence(self) -> Fence:
        return Fence(self.name, self.epoch)

    @property
    def held(self) -> bool:
        """Whether an owner holds it now (not released, not expired)."""
        return bool(self.owner) and not self.expired


def next_lease(current: Lease | None, name: str, owner: str, ttl_ms: int, now_ms: int) -> Lease:
    """The lease ``acquire_lease`` writes, or :class:`LeaseHeld`: the same epoch for the owner
    that holds it (a renewal, even just after expiry: nobody took over meanwhile), the next
    epoch for a new owner of a free, expired or released lease (epochs start at 1). One rule
    for every backend; each calls it inside its transaction with its own clock."""
    check_lease_args(name, owner, ttl_ms)
    if current is None:
        return Lease(name, owner, 1, now_ms + ttl_ms)
    if current.owner == owner:
        return Lease(name, owner, current.epoch, now_ms + ttl_ms)
    if current.owner and current.expires_ms > now_ms:
        raise LeaseHeld(Lease(name, current.owner, current.epoch, current.expires_ms))
    return Lease(name, owner, current.epoch + 1, now_ms + ttl_ms)


def renewed_lease(current: Lease | None, lease: Lease, ttl_ms: int, now_ms: int) -> Lease:
    """The lease ``renew_lease`` writes, or :class:`Fenced` when ``lease`` is no longer the
    current one (another epoch, or released)."""
    check_lease_args(lease.name, lease.owner, ttl_ms)
    if current is None or current.epoch != lease.epoch or current.owner != lease.owner:
        raise Fenced(lease.fence, current)
    return Lease(lease.name, lease.owner, lease.epoch, now_ms + ttl_ms)


def check_fence(fence: Fence, current: Lease | None) -> None:
    """:class:`Fenced` unless ``current`` is at the fence's epoch and not released."""
    if current is None or current.epoch != fence.epoch or not current.owner:
        raise Fenced(fence, current)


def check_lease_args(name: str, owner: str, ttl_ms: int) -> None:
    if not name:
        raise ValueError("a lease needs a name")
    if not owner:
        raise ValueError("a lease needs an owner ('' means released)")
    if not 0 < ttl_ms <= MAX_TTL_MS:
        raise ValueError(f"lease ttl {ttl_ms} ms out of range 1-{MAX_TTL_MS}")


MAX_TTL_MS = 7 * 24 * 3600 * 1000


class Store(abc.ABC):
    """Namespaced versioned records plus append-only logs."""

    @abc.abstractmethod
    def get(self, namespace: str, key: str) -> Record | None:
        """The record, or None when absent."""

    # Every write below takes ``fence``: checked in the write's own transaction, a stale one
    # raises Fenced and nothing is written (see the module's docstring).

    @abc.abstractmethod
    def create(
        self, namespace: str, key: str, value: bytes, *, fence: Fence | None = None
    ) -> Record:
        """Insert a new record (version 1); :class:`AlreadyExists` when the key is taken."""

    @abc.abstractmethod
    def put(
        self,
        namespace: str,
        key: str,
        value: bytes,
        *,
        expected_version: int | None = None,
        fence: Fence | None = None,
    ) -> Record:
        """Write a record. With ``expected_version`` the write succeeds only if the stored
        version still equals it (0 = must not exist); else :class:`Conflict`."""

    @abc.abstractmethod
    def update(
        self,
        namespace: str,
        key: str,
        fn: Callable[[bytes | None], tuple[bytes | None, R]],
        *,
        fence: Fence | None = None,
    ) -> R:
        """Atomic read-modify-write. ``fn`` gets the current value (None if absent) and returns
        ``(new_value, result)``; ``new_value`` None leaves the record unchanged. If ``fn`` raises,
        nothing is written and the exception propagates. Returns ``result``. ``fn`` may run more
        than once (a backend retries a transaction that lost a race): keep it pure."""

    @abc.abstractmethod
    def delete(self, namespace: str, key: str, *, fence: Fence | None = None) -> bool:
        """Remove a record; True if it existed."""

    @abc.abstractmethod
    def scan(self, namespace: str, prefix: str = "") -> Iterator[tuple[str, Record]]:
        """Records of a namespace whose key starts with ``prefix``, in key order."""

    @abc.abstractmethod
    def namespaces(self, prefix: str = "") -> list[str]:
        """The namespaces holding at least one record whose name starts with ``prefix``, in
        order (for one-off migrations of data kept under one namespace per key)."""

    def append(
        self,
        log: str,
        entry: bytes,
        *,
        expected_seq: int | None = None,
        fence: Fence | None = None,
    ) -> int:
        """Append to a log; returns the entry's sequence number (1, 2, …). With
        ``expected_seq`` the append succeeds only if the log's last number is still that
        (0 = empty): else :class:`Conflict` and nothing is written (optimistic concurrency for
        a writer that computed the entry from the log as it read it); the Conflict's
        ``entries`` are the log's entries after ``expected_seq``, read in the same
        transaction, so a writer that missed some catches up without reading the log."""
        check_names(log)
        return self._append(log, [bytes(entry)], expected_seq, fence, {})

    def append_many(
        self,
        log: str,
        entries: Sequence[bytes],
        *,
        expected_seq: int | None = None,
        fence: Fence | None = None,
        records: Sequence[tuple[str, str, bytes]] = (),
    ) -> int:
        """Append ``entries`` to a log in one transaction, numbered on from its last entry in
        order; returns the last one's number (the first is that minus ``len(entries)`` plus
        one). ``records``: ``(namespace, key, value)`` written as :meth:`put` would, in the same
        transaction (a key given twice: the last value), so a writer's log and the records that
        go with it (an outbox row, a request's result) are stored together or not at all.
        ``expected_seq`` and ``fence`` as for :meth:`append`, checked once for the whole batch.
        ``ValueError`` for no entries (nothing to number)."""
        batch, written = check_entries(entries), last_values(records)
        check_names(log)
        return self._append(log, batch, expected_seq, fence, written)

    @abc.abstractmethod
    def _append(
        self,
        log: str,
        entries: list[bytes],
        expected_seq: int | None,
        fence: Fence | None,
        records: dict[tuple[str, str], bytes],
    ) -> int:
        """What a backend implements of :meth:`append` and :meth:`append_many`: ``entries``
        (at least one) and ``records`` in one transaction, every name checked already; the last
        entry's number."""

    @abc.abstractmethod
    def delete_log(self, log: str, *, fence: Fence | None = None) -> int:
        """Remove a log and its numbering (a later append starts at 1 again); returns how many
        entries it had."""

    @abc.abstractmethod
    def read_log(
        self, log: str, after: int = 0, limit: int | None = None
    ) -> list[tuple[int, bytes]]:
        """Entries with sequence number > ``after``, in order, at most ``limit``."""

    # --- leases ---------------------------------------------------------------------------
    @abc.abstractmethod
    def acquire_lease(self, name: str, owner: str, ttl_ms: int) -> Lease:
        """Take lease ``name`` for ``owner`` until ``ttl_ms`` from now (store clock). Succeeds
        when the lease is free, expired, released or already ``owner``'s (then it is extended
        at the same epoch); the epoch rises by one on every change of owner. Else
        :class:`LeaseHeld`. ``ValueError`` for an empty name or owner or a ttl outside
        1 ms-7 days."""

    @abc.abstractmethod
    def renew_lease(self, lease: Lease, ttl_ms: int) -> Lease:
        """Extend ``lease`` to ``ttl_ms`` from now if it is still the current one (same epoch and
        owner, not released; an expired lease nobody took over may be renewed); else
        :class:`Fenced`."""

    @abc.abstractmethod
    def release_lease(self, lease: Lease) -> bool:
        """Give ``lease`` up at once (a draining owner hands over without waiting for expiry):
        the next ``acquire_lease`` by anyone succeeds with the next epoch, and writes fenced with
        this epoch are refused from now on. False (nothing changed) when it was no longer the
        current lease."""

    @abc.abstractmethod
    def get_lease(self, name: str) -> Lease | None:
        """The lease as it is now (``expired`` by the store's clock), or None."""

    @abc.abstractmethod
    def scan_leases(self, prefix: str = "") -> list[Lease]:
        """Every lease whose name starts with ``prefix``, in name order (to find expired ones
        to take over)."""

    @abc.abstractmethod
    def clock_ms(self) -> int:
        """The store's clock (ms since the Unix epoch): the one lease expiry is judged by."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
