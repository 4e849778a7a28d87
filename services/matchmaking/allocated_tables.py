"""The tables matchmaking allocated (分桌记录), and the check every gateway report passes.

The ledger moves silver only for tables matchmaking itself created on a gateway — a quick-match,
room or tournament table — and only with the players it seated there. Reports for any other
table (one created directly on a gateway, e.g. a casual ``mahjong play`` table, or a forged one)
are refused and change nothing.

* :class:`RecordingAllocator` wraps the gateway port: before asking for a table it notes the
  request as *pending* (its tag and seats), and once the gateway answers it records
  ``table id -> tag, player ids by seat`` (namespace ``mm_tables``).
* The request id sent to the gateway is *sealed*: the domain's logical id plus an HMAC of it
  under matchmaking's secret. The gateway's CreateTable is idempotent by request id and returns
  the existing table (with its seat tokens) to whoever repeats an id; a guessable id
  ("tournament-T-r1-t0") would let anyone pre-create that table with seats and stake of their
  choosing, or fetch its seat tokens. A sealed id is still deterministic, so retries and other
  replicas get the same table.
* :func:`check_report` is what RecordHand and TableFinished call first: NotFound for a table
  matchmaking never allocated, FailedPrecondition for a tag or seating that differs from the
  allocation, Unavailable while a matching allocation is still pending (matchmaking stopped
  between the gateway's answer and recording it: the gateway retries, the next tick records it).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass, replace

from shared.errors import FailedPrecondition, NotFound, Unavailable
from shared.store.base import Store

from . import records
from .allocator import TableAllocation, TableAllocator, TableRequest

TABLES = "mm_tables"
PENDING = "mm_tables_pending"
_SEAL_CONTEXT = b"mahjong/matchmaking/create-table/"


@dataclass(frozen=True, slots=True)
class AllocatedTable:
    table_id: str
    tag: str
    player_ids: tuple[str, ...]  # by seat, bots too
    request_id: str


def sealed_request_id(secret: bytes, request_id: str) -> str:
    """``request_id`` plus a keyed digest: deterministic for matchmaking, unguessable to others."""
    digest = hmac.new(secret, _SEAL_CONTEXT + request_id.encode(), hashlib.sha256).hexdigest()
    return f"{request_id}-{digest[:32]}"


def _seats(request: TableRequest) -> list[str]:
    return [s.player_id for s in request.seats]


def record(store: Store, table: AllocatedTable) -> None:
    body = {"tag": table.tag, "player_ids": list(table.player_ids), "request_id": table.request_id}
    store.put(TABLES, table.table_id, records.dump(body))


def find(store: Store, table_id: str) -> AllocatedTable | None:
    rec = store.get(TABLES, table_id) if table_id else None
    if rec is None:
        return None
    data = records.load(rec.value)
    return AllocatedTable(table_id, data["tag"], tuple(data["player_ids"]), data["request_id"])


class RecordingAllocator:
    """A :class:`TableAllocator` that seals request ids and records every table it gets."""

    def __init__(self, store: Store, allocator: TableAllocator, secret: bytes) -> None:
        self.store = store
        self.inner = allocator
        self._secret = secret

    def create_table(self, request: TableRequest) -> TableAllocation:
        sealed = replace(request, request_id=sealed_request_id(self._secret, request.request_id))
        pending = {"tag": request.tag, "player_ids": _seats(request)}
        self.store.put(PENDING, sealed.request_id, records.dump(pending))
        alloc = self.inner.create_table(sealed)
        record(
            self.store,
            AllocatedTable(alloc.table_id, request.tag, tuple(_seats(request)), sealed.request_id),
        )
        self.store.delete(PENDING, sealed.request_id)
        return alloc

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def _pending_match(store: Store, tag: str, player_ids: Sequence[str] | None) -> bool:
    for _, rec in store.scan(PENDING):
        data = records.load(rec.value)
        if data["tag"] == tag and (player_ids is None or data["player_ids"] == list(player_ids)):
            return True
    return False


def check_report(
    store: Store, table_id: str, tag: str, player_ids: Sequence[str] | None = None
) -> AllocatedTable:
    """The allocation a gateway report is about, or the refusal that keeps it out of the ledger.

    ``player_ids`` (by seat) is checked for RecordHand; TableFinished carries none."""
    table = find(store, table_id)
    if table is None:
        if _pending_match(store, tag, player_ids):
            raise Unavailable(
                f"table {table_id} ({tag}) is being allocated; retry shortly",
                reason="TABLE_ALLOCATION_PENDING",
                table_id=table_id,
            )
        raise NotFound(
            f"table {table_id} was not allocated by matchmaking; only its quick-match, room and "
            "tournament tables are recorded in the ledger",
            reason="TABLE_NOT_ALLOCATED",
            table_id=table_id,
        )
    if tag != table.tag:
        raise FailedPrecondition(
            f"table {table_id} was allocated with tag {table.tag!r}, not {tag!r}",
            reason="TABLE_TAG_MISMATCH",
            table_id=table_id,
        )
    if player_ids is not None and tuple(player_ids) != table.player_ids:
        raise FailedPrecondition(
            f"table {table_id} seats {list(table.player_ids)} by seat, not {list(player_ids)}",
            reason="TABLE_SEATING_MISMATCH",
            table_id=table_id,
        )
    return table
