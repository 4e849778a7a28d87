"""A table's event log in the store: namespace ``gateway-log/<table id>``, numbered from 1 (the
per-table sequence numbers clients see), one record per event (:mod:`..domain.events.codec`)."""

from __future__ import annotations

from services.gateway.domain.events import codec
from services.gateway.domain.events.kinds import TableEvent
from services.gateway.domain.events.log import LoggedEvent
from shared.store import Store

LOG_PREFIX = "gateway-log/"


def append_event(store: Store, table_id: str, t_ms: int, event: TableEvent) -> int:
    """Append one event; its sequence number."""
    return store.append(LOG_PREFIX + table_id, codec.encode(t_ms, event))


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
