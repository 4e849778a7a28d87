"""A table's event log in the store: namespace ``gateway-log/<table id>``, numbered from 1 (the
per-table sequence numbers clients see), one record per event (:mod:`..domain.events.codec`),
a step's events appended in one transaction."""

from __future__ import annotations

from infra.store import Store
from infra.store.base import Fence
from services.gateway.domain.events import codec
from services.gateway.domain.events.kinds import TableEvent
from services.gateway.domain.events.log import LoggedEvent

LOG_PREFIX = "gateway-log/"


def append_events(
    store: Store,
    table_id: str,
    events: list[tuple[int, TableEvent]],
    *,
    fence: Fence,
    expected_seq: int,
    records: list[tuple[str, str, bytes]] | None = None,
) -> int:
    """Append one step's events ``(t_ms, event)`` and the records that go with them in one
    fenced transaction, after ``expected_seq``; the last event's sequence number."""
    return store.append_many(
        LOG_PREFIX + table_id,
        [codec.encode(t, ev) for t, ev in events],
        expected_seq=expected_seq,
        fence=fence,
        records=records or (),
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
