"""RelayWatch.taken_over (issue 32): once this replica takes a table over, its relays of that
table from the former owner are cancelled at once, not at the watch's next look (a third of
the lease later), and the lease is read afresh, not from the look's cache."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from services.gateway.forwarding import RelayWatch


class Leases:
    """A LeaseWatch double: the running lease's epoch per table, cached until forgotten."""

    def __init__(self) -> None:
        self.epochs = {"t": 1}
        self.cached: dict[str, int] = {}
        self.forgotten: list[str] = []

    def running(self, table_id: str):
        epoch = self.cached.setdefault(table_id, self.epochs[table_id])
        return SimpleNamespace(epoch=epoch)

    def forget(self, table_id: str) -> None:
        self.forgotten.append(table_id)
        self.cached.pop(table_id, None)

    def moved(self, table_id: str, epoch: int) -> bool:
        return self.running(table_id).epoch != epoch


def test_a_takeover_here_cancels_the_relays_of_its_table_at_once():
    leases = Leases()
    watch = RelayWatch(leases, every_s=60)  # the next look would be a minute away
    cancelled = threading.Event()
    relay = watch.watch("t", watch.attach("t"), cancelled.set)
    time.sleep(0.05)
    assert not cancelled.is_set()
    leases.epochs["t"] = 2  # taken over here; the cache still holds epoch 1
    began = time.monotonic()
    watch.taken_over("t")
    assert cancelled.wait(5), "the relay was left on the former owner"
    assert time.monotonic() - began < 1.0
    assert relay.stale and leases.forgotten == ["t"]


def test_a_takeover_of_another_table_cancels_nothing():
    leases = Leases()
    leases.epochs["u"] = 7
    watch = RelayWatch(leases, every_s=60)
    cancelled = threading.Event()
    relay = watch.watch("t", watch.attach("t"), cancelled.set)
    watch.taken_over("u")
    time.sleep(0.3)
    assert not cancelled.is_set() and not relay.stale
