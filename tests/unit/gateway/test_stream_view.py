"""A ``with_view`` stream's view (TableViews.stream_view): GetTableState's view of the stream's
viewer, taken on the event loop only when no step holds the table (else None: the caller waits
for the lock in a worker)."""

from __future__ import annotations

import threading
import time

from infra.store.memory import MemoryStore
from services.gateway.domain.session import Seat
from tests.support.sessions import inprocess_ports
from tests.support.stacks import table_manager, table_spec


def test_a_stream_view_is_the_views_and_never_waits_on_the_loop():
    manager = table_manager(
        MemoryStore(), inprocess_ports(), seed=3, bot_delay_ms=0, discard_ms=60_000
    )
    try:
        seats = [Seat(player_id="p")] + [Seat(bot=True)] * 3
        t, tokens = manager.create_table(table_spec(seats=seats))
        deadline = time.monotonic() + 30
        while not manager.view(t, tokens[0], None).get("prompt"):
            assert time.monotonic() < deadline, "the person was never prompted"
            time.sleep(0.02)
        table, viewer = manager.open_stream(t, tokens[0], 0)
        assert manager.stream_view(table, viewer, wait=False) == manager.view(t, tokens[0], None)

        held, release = threading.Event(), threading.Event()

        def step() -> None:  # a step running in a worker: the table's lock held
            with table.lock:
                held.set()
                release.wait(10)

        worker = threading.Thread(target=step)
        worker.start()
        held.wait(10)
        try:
            assert manager.stream_view(table, viewer, wait=False) is None
        finally:
            release.set()
            worker.join()
        assert manager.stream_view(table, viewer) == manager.view(t, tokens[0], None)
    finally:
        manager.close()
