"""A table's event log in the store: namespace ``gateway-log/<table id>``, numbered from 1 (the
per-table sequence numbers clients see), one record per event (:mod:`..domain.events.codec`)."""

from __future__ import annotations

from services.gateway.domain.events import codec
from services.gateway.domain.events.kinds import TableEvent
from services.gateway.domain.events.log import LoggedEvent
from shared.store import Store
from shared.store.base import Fence

LOG_PREFIX = "gateway-log/"


def append_event(
    store: Store,
    table_id: str,
    t_ms: int,
    event: TableEvent,
    *,
    fence: Fence | None = None,
    expected_seq: int | None = None,
) -> int:
    """Append one event; its sequence number. ``fence``: the writer's lease on the table,
    checked in the same transaction; ``expected_seq``: the last number the writer holds (a
    log that moved on is not this writer's any more)."""
    return store.append(
        LOG_PREFIX + table_id, codec.encode(t_ms, event), expected_seq=expected_seq, fence=fence
    )


def read_table_log(
    store: Store, table_id: str, after: int = 0, limit: int | None = None
) -> list[LoggedEvent]:
    """A table's events after ``after``, at most ``limit``: replays, exports, checks, late
    subscribers and takeovers."""
    out = []
    for seq, raw in store.read_log(LOG_PREFIX + table_id, after, limit):
        t, ev = codec.decode(raw)
        out.append(LoggedEvent(seq, t, ev))
    return out
