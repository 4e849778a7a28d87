"""A viewer's stream of a table's events (Subscribe): the events after the viewer's last
sequence number — from memory, or from the store when older than the two hands held — then live
ones as they are appended, each cut down to what the viewer may see (events.views), until the
table finishes or halts. A replica that loses the table ends its streams NOT_OWNER once every
event it held was sent, so the client resumes from its last number where the table is now. A
stream checks its viewer before each batch (``check``): a spectator's ends once its token is
revoked. A seat's stream goes on as a spectator's once the seat's player went bankrupt (破产):
``seat_bankrupt`` is the last event it sees as the seat.

Two ways to wait for the next event, one way to find it (:func:`_next_batch`): :func:`stream`
blocks its thread on the table's condition (the threaded server, the web port's threads);
:func:`stream_async` is a coroutine on the server's event loop that waits on the table's
``wakeup`` and reads the store in a worker thread, so an open stream holds no thread."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

from infra.store import Store
from services.gateway.domain.events.kinds import SeatBankrupt, TableEvent
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.events.views import project
from services.gateway.tables.live import LiveTable
from services.gateway.tables.log import read_table_log
from shared.errors import Unavailable


class _Viewer:
    """Whose view a stream shows: a seat (None: a spectator's), which becomes a spectator's
    after the seat's ``seat_bankrupt`` (its player left; a bot's tiles are not theirs)."""

    __slots__ = ("seat",)

    def __init__(self, seat: int | None) -> None:
        self.seat = seat


Seen = list[tuple[LoggedEvent, TableEvent]]
"""A batch of a stream: (the logged event, the viewer's copy), in order, never empty."""


def _projected(batch: list[LoggedEvent], viewer: _Viewer) -> Seen:
    seen: Seen = []
    for e in batch:
        copy = project(e.event, viewer.seat)
        if copy is not None:
            seen.append((e, copy))
        ev = e.event
        if isinstance(ev, SeatBankrupt) and ev.seat == viewer.seat:
            viewer.seat = None
    return seen


def _after_settled(table: LiveTable, index: int) -> list[LoggedEvent] | None:
    with table.lock:
        return table.after(index)


def stream(
    store: Store,
    table: LiveTable,
    viewer: int | None,
    after: int,
    active: Callable[[], bool],
    not_owner: Callable[[], Unavailable],
    check: Callable[[], None] = lambda: None,
    quiet_s: float = 0.0,
) -> Iterator[Seen | None]:
    """The viewer's events after ``after`` while ``active()``, a batch at a time (what was
    appended since the last batch: a step's events together): a thread waits. ``check()`` runs
    before each batch (it raises to end the stream: a revoked token). With ``quiet_s``, None is
    yielded whenever nothing was for that long (the threaded server's heartbeats)."""
    index = after
    watching = _Viewer(viewer)
    last = time.monotonic()
    while active():
        quiet = False
        with table.cond:
            while index >= table.head and active():
                if not table.live:
                    return
                if not table.owned:  # every event held was sent: go to the new owner
                    raise not_owner()
                wait = 0.25
                if quiet_s:
                    wait = min(wait, last + quiet_s - time.monotonic())
                    if wait <= 0:
                        quiet = True
                        break
                table.cond.wait(wait)
            batch = None if quiet else table.after(index)
        if quiet:
            last = time.monotonic()
            yield None
            continue
        if batch is None:  # older than what is held: from the store
            batch = read_table_log(store, table.id, index, table.window[0] - index)
        if batch:
            check()
            index = batch[-1].seq
            seen = _projected(batch, watching)
            if seen:
                last = time.monotonic()
                yield seen


async def stream_async(
    store: Store,
    table: LiveTable,
    viewer: int | None,
    after: int,
    not_owner: Callable[[], Unavailable],
    run_blocking: Callable[..., Awaitable],
    check: Callable[[], None] = lambda: None,
) -> AsyncIterator[Seen]:
    """The same batches, for a coroutine: it waits on the table's wake-up (on its event loop) and
    reads older events from the store through ``run_blocking`` (in a worker thread). It ends when
    the table is over, raises ``not_owner()`` when the table moved; a client gone cancels it.
    ``check()`` (from memory: it runs on the loop) comes before each batch."""
    index = after
    watching = _Viewer(viewer)
    while True:
        woken = table.wakeup.waiter()  # before looking: an event appended after is not missed
        batch = table.after(index)
        if batch is None:
            base = table.window[0]
            batch = await run_blocking(read_table_log, store, table.id, index, base - index)
        if batch:
            check()
            index = batch[-1].seq
            seen = _projected(batch, watching)
            if seen:
                yield seen
            continue
        if not table.live:
            # under the lock, the step that ended the table has appended its last events
            batch = await run_blocking(_after_settled, table, index)
            if batch is None:  # older than what is held: the store, at the loop's top
                continue
            if not batch:
                return
            index = batch[-1].seq
            seen = _projected(batch, watching)
            if seen:
                yield seen
            continue
        if not table.owned:
            raise not_owner()
        await woken.wait()  # an append, the table's end or its loss sets it
