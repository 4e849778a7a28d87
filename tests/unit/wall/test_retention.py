"""Retention: walls older than the retention period are deleted with their request ids; the
sweeper runs prune on its own thread and stops on close."""

from __future__ import annotations

import pytest

from infra.store import open_store
from services.wall.storage.repository import NAMESPACE, REQUESTS, WallRepository
from services.wall.storage.retention import Sweeper
from shared.errors import NotFound


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def repo():
    clock = FakeClock()
    return WallRepository(open_store("memory://"), clock=clock), clock


def test_prune_deletes_only_old_walls_and_their_request_ids(repo):
    repo, clock = repo
    old = repo.new_hand(0, request_id="t/1")
    repo.deal(old.hand_id)
    repo.reveal(old.hand_id)
    clock.now += 3600
    young = repo.new_hand(1, request_id="t/2")
    clock.now += 1800
    assert repo.prune(max_age_seconds=4000) == 1
    with pytest.raises(NotFound):
        repo.get(old.hand_id)
    assert repo.store.get(REQUESTS, "t/1") is None
    assert repo.get(young.hand_id).created == young.created
    assert repo.store.get(REQUESTS, "t/2") is not None
    assert repo.prune(max_age_seconds=4000) == 0
    clock.now += 10_000
    assert repo.prune(max_age_seconds=4000) == 1
    assert list(repo.store.scan(NAMESPACE)) == []


def test_sweeper_prunes_and_stops(repo):
    repo, clock = repo
    repo.new_hand(0)
    clock.now += 7200
    sweeper = Sweeper(repo, retain_seconds=3600, interval=3600).start()
    assert sweeper.sweep_once() == 1
    sweeper.close()  # wakes the waiting thread at once
    assert not sweeper._thread.is_alive()


def test_sweeper_rejects_nonsense_periods(repo):
    repo, _ = repo
    with pytest.raises(ValueError):
        Sweeper(repo, retain_seconds=0, interval=1)
