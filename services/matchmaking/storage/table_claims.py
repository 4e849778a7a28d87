"""Creating a table once across the replicas sharing a store: :class:`RecordingAllocator` wraps
the gateway's :class:`~services.matchmaking.domain.tables.allocator.TableAllocator`, seals the
request id, takes a creation claim (a store lease, kept by :class:`ClaimKeeper` while the
gateway works) and records the table it gets
(:func:`services.matchmaking.domain.tables.allocated.record`), so reports about any other table
are refused."""

from __future__ import annotations

import threading
import uuid
from dataclasses import replace

from infra.store.base import Fenced, Lease, LeaseHeld, Store, StoreError
from services.matchmaking.domain import records
from services.matchmaking.domain.tables.allocated import (
    CLAIM_PREFIX,
    CLAIM_TTL_MS,
    AllocatedTable,
    record,
    sealed_request_id,
    seat_ids,
)
from services.matchmaking.domain.tables.allocator import (
    TableAllocation,
    TableAllocator,
    TableRefused,
    TableRequest,
)
from services.matchmaking.storage.table_records import BY_REQUEST, PENDING, TableRecords
from shared.errors import Unavailable


def allocation_of(raw: bytes) -> TableAllocation:
    """The allocation a ``mm_tables_by_request`` record keeps (a retried request's)."""
    data = records.load(raw)
    return TableAllocation(
        data["table_id"], tuple(data["seat_tokens"]), data["gateway_address"], reused=True
    )


class RecordingAllocator:
    """A :class:`TableAllocator` that seals request ids, creates each table once across the
    replicas sharing the store, and records every table it gets."""

    def __init__(
        self,
        store: Store,
        allocator: TableAllocator,
        secret: bytes,
        owner: str = "",
        claim_ms: int = CLAIM_TTL_MS,
    ) -> None:
        self.store = store
        self.tables = TableRecords(store)
        self.inner = allocator
        self._secret = secret
        self.owner = owner or "mm-" + uuid.uuid4().hex[:12]
        self.claim_ms = claim_ms  # a creation claim's lease, renewed while the gateway works

    def create_table(self, request: TableRequest) -> TableAllocation:
        sealed = replace(request, request_id=sealed_request_id(self._secret, request.request_id))
        try:
            # One claimant per call: two threads of one replica exclude each other too.
            claimant = f"{self.owner}/{uuid.uuid4().hex[:8]}"
            claim = self.store.acquire_lease(
                CLAIM_PREFIX + sealed.request_id, claimant, self.claim_ms
            )
        except LeaseHeld as exc:
            raise Unavailable(
                f"table {request.request_id} is being created by another replica; retry",
                reason="TABLE_BEING_CREATED",
            ) from exc
        keeper = ClaimKeeper(self.store, claim, self.claim_ms)
        try:
            known = self.store.get(BY_REQUEST, sealed.request_id)  # read under the claim
            if known is not None:
                return allocation_of(known.value)
            pending = {"tag": request.tag, "player_ids": seat_ids(request)}
            self.store.put(PENDING, sealed.request_id, records.dump(pending))
            with keeper:  # the gateway may take a while (retries): the claim is kept meanwhile
                try:
                    alloc = self.inner.create_table(sealed)
                except TableRefused:  # never asked again: nothing is pending
                    self.store.delete(PENDING, sealed.request_id)
                    raise
            record(
                self.tables,
                AllocatedTable(
                    alloc.table_id,
                    request.tag,
                    tuple(seat_ids(request)),
                    sealed.request_id,
                    request.ruleset,
                    request.stake,
                    tuple(sorted(request.ruleset_options.items())),
                    fee_per_hand=request.fee_per_hand,
                ),
            )
            body = {
                "table_id": alloc.table_id,
                "seat_tokens": list(alloc.seat_tokens),
                "gateway_address": alloc.gateway_address,
            }
            self.store.put(BY_REQUEST, sealed.request_id, records.dump(body))
            self.store.delete(PENDING, sealed.request_id)
            return replace(alloc, reused=False)
        finally:
            self.store.release_lease(keeper.lease)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


class ClaimKeeper:
    """Renews a creation claim (``lease``, of ``ttl_ms``) every third of its term while the
    block runs, in a thread of its own: the claim lasts as long as its holder works on it, and
    one lease after the holder died. A renewal the store refuses (the holder was paused past
    the claim and another replica took it) ends the renewals; the work goes on, idempotent."""

    def __init__(self, store: Store, lease: Lease, ttl_ms: int) -> None:
        self.store, self.lease, self.ttl_ms = store, lease, ttl_ms
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ClaimKeeper:
        self._done.clear()
        self._thread = threading.Thread(target=self._renew, name="mm-create-claim", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def _renew(self) -> None:
        while not self._done.wait(self.ttl_ms / 3000):
            try:
                self.lease = self.store.renew_lease(self.lease, self.ttl_ms)
            except Fenced:
                return  # taken over: whoever holds it now records the same table
            except StoreError:
                continue  # the store is away: try again (the claim may lapse meanwhile)
