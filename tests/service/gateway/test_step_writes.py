"""A table's step is one write (StepWriter.step): its events, its request's result and its
outbox rows go to the store in one fenced transaction at its end, and every wall call that
hands out tiles carries the table's lease epoch, by which the wall fences a former owner
(tables/fenced_wall.py)."""

from __future__ import annotations

import time

from infra.store.memory import MemoryStore
from services.gateway.domain.session import Ports
from services.gateway.tables import LEASE_PREFIX
from services.gateway.tables.log import LOG_PREFIX, read_table_log
from services.gateway.tables.records import ANSWERS, OUTBOX, HandAnswerRecord
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
    """The in-process wall, noting the epoch each call that hands out tiles came with."""

    def __init__(self, wall) -> None:
        self.wall = wall
        self.epochs: list[tuple[str, int]] = []

    def __getattr__(self, name):
        return getattr(self.wall, name)

    def draw(self, hand_id, seat, number, *, epoch=0):
        self.epochs.append(("draw", epoch))
        return self.wall.draw(hand_id, seat, number, epoch=epoch)

    def draw_replacement(self, hand_id, seat, number, *, epoch=0):
        self.epochs.append(("replacement", epoch))
        return self.wall.draw_replacement(hand_id, seat, number, epoch=epoch)

    def reveal(self, hand_id, number=0, *, epoch=0):
        self.epochs.append(("reveal", epoch))
        return self.wall.reveal(hand_id, number, epoch=epoch)


def test_a_bot_table_writes_its_steps_whole_and_fences_its_wall_calls():
    store = CountingStore()
    base = inprocess_ports()
    wall = WatchedWall(base.wall)
    ports = Ports(wall, base.rules, base.scoring)
    manager = table_manager(store, ports, seed=5, report_to_matchmaking=True)
    try:
        t, _ = manager.create_table(table_spec(max_hands=2, report_hands=True))
        deadline = time.monotonic() + 60
        while manager.tables[t].live and time.monotonic() < deadline:
            # as an outbox sender would: matchmaking's answer to each hand (none bankrupt),
            # which the table waits for before its next deal
            for key, _ in list(store.scan(OUTBOX)):
                if store.get(ANSWERS, key) is None:
                    store.put(ANSWERS, key, HandAnswerRecord().encode())
            time.sleep(0.02)
        assert not manager.tables[t].live, "the bot table did not finish"
        log = read_table_log(store, t)
        assert [e.seq for e in log] == list(range(1, len(log) + 1))
        assert [e.kind for e in log].count("hand_result") == 2
        # Many events per write: one transaction per step, not per event nor per draw.
        assert store.log_writes * 2 < len(log), (store.log_writes, len(log))
        draws = sum(1 for e in log if e.kind == "tile_drawn")
        assert store.log_writes < len(log) - draws, (store.log_writes, draws, len(log))
        # Every call handing out tiles or ending a hand carried the table's lease epoch.
        epoch = store.get_lease(LEASE_PREFIX + t).epoch
        assert epoch >= 1 and [k for k, _ in wall.epochs].count("reveal") == 2
        assert {e for _, e in wall.epochs} == {epoch}
        # The outbox rows went in with their hands (written by the step, under its fence).
        reports = [k for k, _ in store.scan(OUTBOX, "")]
        assert len(reports) == 3  # two hands and the table's end
    finally:
        manager.close()
