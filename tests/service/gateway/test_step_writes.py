"""A table's step is one write (TableManager.step): its events, its request's result and its
outbox rows go to the store in one fenced transaction, and a numbered wall call is made only
once everything emitted before it is in the log (tables/logged_first.py)."""

from __future__ import annotations

import time

from services.gateway.domain.session import Ports
from services.gateway.tables.log import LOG_PREFIX, read_table_log
from services.gateway.tables.records import OUTBOX
from shared.store.memory import MemoryStore
from tests.support.sessions import inprocess_ports
from tests.support.stacks import table_manager, table_spec


class CountingStore(MemoryStore):
    """A memory store counting the transactions that write a table's log."""

    def __init__(self) -> None:
        super().__init__()
        self.log_writes = 0

    def append(self, log, entry, **kw):
        if log.startswith(LOG_PREFIX):
            self.log_writes += 1
        return super().append(log, entry, **kw)

    def append_many(self, log, entries, **kw):
        if log.startswith(LOG_PREFIX):
            self.log_writes += 1
        return super().append_many(log, entries, **kw)


class WatchedWall:
    """The in-process wall, noting on every numbered call how far the table's log had come
    and how far its engine had (the events emitted)."""

    def __init__(self, wall, store, manager_box) -> None:
        self.wall, self.store, self.box = wall, store, manager_box
        self.calls: list[tuple[str, int, int]] = []

    def __getattr__(self, name):
        return getattr(self.wall, name)

    def _note(self, kind: str) -> None:
        manager = self.box[0]
        (table,) = manager.tables.values()
        logged = len(self.store.read_log(LOG_PREFIX + table.id))
        self.calls.append((kind, logged, table.last_seq))

    def draw(self, hand_id, seat, number):
        self._note("draw")
        return self.wall.draw(hand_id, seat, number)

    def draw_replacement(self, hand_id, seat, number):
        self._note("replacement")
        return self.wall.draw_replacement(hand_id, seat, number)

    def swap(self, hand_id, seat, buried, number):
        self._note("swap")
        return self.wall.swap(hand_id, seat, buried, number)


def test_a_bot_table_writes_its_steps_whole_and_its_log_before_each_draw():
    store = CountingStore()
    base = inprocess_ports()
    box: list = []
    wall = WatchedWall(base.wall, store, box)
    ports = Ports(wall, base.rules, base.scoring)
    manager = table_manager(store, ports, seed=5, report_to_matchmaking=True)
    box.append(manager)
    try:
        t, _ = manager.create_table(table_spec(max_hands=2, report_hands=True))
        deadline = time.monotonic() + 60
        while manager.tables[t].live and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not manager.tables[t].live, "the bot table did not finish"
        log = read_table_log(store, t)
        assert [e.seq for e in log] == list(range(1, len(log) + 1))
        assert [e.kind for e in log].count("hand_result") == 2
        # Many events per write: one transaction per step, not per event.
        assert store.log_writes * 2 < len(log), (store.log_writes, len(log))
        # Every numbered wall call came with nothing emitted left unwritten.
        assert wall.calls and all(logged == emitted for _, logged, emitted in wall.calls)
        # The outbox rows went in with their hands (written by the step, under its fence).
        reports = [k for k, _ in store.scan(OUTBOX, "")]
        assert len(reports) == 3  # two hands and the table's end
    finally:
        manager.close()
