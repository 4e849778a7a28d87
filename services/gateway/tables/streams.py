"""A viewer's stream of a table's events (Subscribe): the events after the viewer's last
sequence number — from memory, or from the store when older than the two hands held — then live
ones as they are appended, each cut down to what the viewer may see (events.views), until the
table finishes or halts. A replica that loses the table ends its streams NOT_OWNER once every
event it held was sent, so the client resumes from its last number where the table is now."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from services.gateway.domain.events.kinds import TableEvent
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.events.views import project
from services.gateway.domain.session import FINISHED, HALTED
from services.gateway.tables.live import LiveTable
from services.gateway.tables.log import read_table_log
from shared.errors import Unavailable
from shared.store import Store


def stream(
    store: Store,
    table: LiveTable,
    viewer: int | None,
    after: int,
    active: Callable[[], bool],
    not_owner: Callable[[], Unavailable],
) -> Iterator[tuple[LoggedEvent, TableEvent]]:
    """(the logged event, the viewer's copy) after ``after`` while ``active()``."""
    index = after
    while active():
        with table.cond:
            while index >= table.head and active():
                session = table.session
                if session is not None and session.phase in (FINISHED, HALTED):
                    return
                if not table.owned:  # every event held was sent: go to the new owner
                    raise not_owner()
                table.cond.wait(0.25)
            base = table.base
            batch = table.events[index - base :] if index >= base else []
        if index < base:  # older than what is held: from the store
            batch = read_table_log(store, table.id, index, base - index)
        if not batch:
            continue
        index = batch[-1].seq
        for e in batch:
            seen = project(e.event, viewer)
            if seen is not None:
                yield e, seen
