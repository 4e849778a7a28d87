"""What a viewer sees of a table: GetTableState (:meth:`TableViews.view`) and Subscribe (its
events after a sequence number, then live ones: :mod:`.streams`, on a thread or on the event
loop).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from infra.store import Store
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.session import TableSession, presence
from services.gateway.domain.tokens import SeatToken
from services.gateway.tables import spectators
from services.gateway.tables.access import TableAccess
from services.gateway.tables.leases import TableLeases
from services.gateway.tables.live import LiveTable
from services.gateway.tables.streams import Seen, stream, stream_async
from shared.errors import InvalidArgument


class TableViews:
    """Views and streams of the tables ``access`` finds; older events from ``store``; a
    stream of a table this replica let go ends NOT_OWNER (``leases``)."""

    def __init__(self, store: Store, access: TableAccess, leases: TableLeases) -> None:
        self.store = store
        self.access = access
        self.leases = leases

    def view(self, table_id: str, token: str, seat_claim: int | None) -> dict[str, Any]:
        table = self.access.table(table_id)
        with table.lock:
            return self._view_of(table, self.access.viewer(table, token, seat_claim))

    def stream_view(
        self, table: LiveTable, viewer: SeatToken, wait: bool = True
    ) -> dict[str, Any] | None:
        """The view of a ``with_view`` stream's viewer (its token checked as the stream opened,
        a spectator's again before each batch), as :meth:`view` gives it. Without ``wait``
        (on the event loop) None when a step holds the table's lock: the caller waits for it in
        a worker instead."""
        if not table.lock.acquire(blocking=wait):
            return None
        try:
            return self._view_of(table, self.access.watching(table, viewer.seat))
        finally:
            table.lock.release()

    def _view_of(self, table: LiveTable, viewer: int | None) -> dict[str, Any]:
        session = self.access.session(table)
        v = session.seat_view(viewer)
        v["last_sequence"] = table.last_seen(viewer, table.head)
        v["config"] = session.config
        return v

    def open_stream(self, table_id: str, token: str, after: int) -> tuple[LiveTable, SeatToken]:
        """The table and the viewer (its token, verified) of a Subscribe after sequence
        ``after``, checked."""
        if after < 0:
            raise InvalidArgument("after_sequence is negative", field="after_sequence")
        table = self.access.table(table_id)
        with table.lock:
            viewer = self.access.holder(table, token, None)
            last = table.last_seen(self.access.watching(table, viewer.seat), table.head)
            if after > last:
                raise InvalidArgument(
                    f"after_sequence {after} is beyond the last event you were shown {last}",
                    field="after_sequence",
                )
        return table, viewer

    def subscribe(
        self, table_id: str, token: str, after: int, active: Callable[[], bool]
    ) -> Iterator[tuple[LoggedEvent, K.TableEvent]]:
        """The viewer's events after ``after``, then live ones until the table finishes, one
        at a time (:meth:`subscribe_batches`' events; the token and ``after`` are checked at
        the call, not at the first event)."""
        batches = self.subscribe_batches(table_id, token, after, active)
        return (event for batch in batches for event in batch)

    def subscribe_batches(
        self, table_id: str, token: str, after: int, active: Callable[[], bool]
    ) -> Iterator[Seen]:
        """The viewer's events after ``after``, then live ones until the table finishes, a
        batch at a time (a step's events together; a thread waits for them: the threaded
        server)."""
        table, viewer = self.open_stream(table_id, token, after)
        return (b for b in self.stream_batches(table, viewer, after, active) if b is not None)

    def stream_batches(
        self,
        table: LiveTable,
        viewer: SeatToken,
        after: int,
        active: Callable[[], bool],
        quiet_s: float = 0.0,
    ) -> Iterator[Seen | None]:
        """The same batches for a stream :meth:`open_stream` checked (None after ``quiet_s``
        without one, when given: :func:`.streams.stream`)."""
        batches = stream(
            self.store,
            table,
            self.access.watching(table, viewer.seat),
            after,
            active,
            functools.partial(self.leases.not_owner, table.id),
            self._still_watching(table, viewer),
            quiet_s,
        )
        return batches if viewer.seat is None else _seat_stream(table, viewer.seat, batches)

    def subscribe_async(
        self,
        table: LiveTable,
        viewer: SeatToken,
        after: int,
        run_blocking: Callable[..., Awaitable],
    ) -> AsyncIterator[Seen]:
        """The same batches for a coroutine on the server's event loop (no thread held while it
        waits), for a stream :meth:`open_stream` checked."""
        batches = stream_async(
            self.store,
            table,
            self.access.watching(table, viewer.seat),
            after,
            functools.partial(self.leases.not_owner, table.id),
            run_blocking,
            self._still_watching(table, viewer),
        )
        return batches if viewer.seat is None else _seat_stream_async(table, viewer.seat, batches)

    @staticmethod
    def _still_watching(table: LiveTable, viewer: SeatToken) -> Callable[[], None]:
        """Checked before each batch of a stream's events: a spectator's stream ends
        UNAUTHENTICATED once its token is revoked (a seat's never does)."""
        spectator_id = viewer.spectator_id

        def check() -> None:
            if viewer.seat is None and not spectators.still_admitted(table, spectator_id):
                raise spectators.revoked(spectator_id)

        return check


# --- 掉线: a seat's open streams (:mod:`services.gateway.domain.session.presence`) ----------
def _tell(table: LiveTable, seat: int, what: Callable[[TableSession, int], None]) -> None:
    """Tell the table's session that a stream of ``seat`` opened or ended, as a step of the
    table (its scheduler runs it under the table's lock)."""
    session = table.session
    if session is not None and session.presence.watching:
        session.scheduler.call_later(0, lambda: what(session, seat))


def _seat_stream(
    table: LiveTable, seat: int, batches: Iterator[Seen | None]
) -> Iterator[Seen | None]:
    """``batches`` of a seat's stream, the seat connected while it runs."""
    _tell(table, seat, presence.stream_opened)
    try:
        yield from batches
    finally:
        _tell(table, seat, presence.stream_closed)


async def _seat_stream_async(
    table: LiveTable, seat: int, batches: AsyncIterator[Seen]
) -> AsyncIterator[Seen]:
    """The same, for a stream on the event loop (a client gone cancels it: ``finally``)."""
    _tell(table, seat, presence.stream_opened)
    try:
        async for batch in batches:
            yield batch
    finally:
        _tell(table, seat, presence.stream_closed)
