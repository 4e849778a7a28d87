"""services.wall.repository: walls in the store (memory and SQLite), atomic draws,
idempotent NewHand, NOT_FOUND, and no state change on a refused operation."""

from __future__ import annotations

import threading

import pytest

from services.wall.repository import NAMESPACE, WallRepository
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument, NotFound
from shared.store import open_store


@pytest.fixture(params=["memory", "sqlite"])
def repo(request, tmp_path):
    store = open_store("memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/w.db")
    yield WallRepository(store)
    store.close()


def test_new_hands_get_fresh_seeds_and_unguessable_ids(repo):
    a, b = repo.new_hand(0), repo.new_hand(0)
    assert a.hand_id != b.hand_id and a.hand_id.startswith("h_") and len(a.hand_id) == 26
    assert a.seed != b.seed and a.wall.tiles != b.wall.tiles
    assert repo.get(a.hand_id) == a


def test_fixed_seed_gives_the_same_wall(repo):
    a = repo.new_hand(1, seed=bytes(32))
    b = repo.new_hand(1, seed=bytes(32))
    assert a.hand_id != b.hand_id
    assert a.wall.tiles == b.wall.tiles and a.dice == b.dice


def test_new_hand_with_a_request_id_is_idempotent(repo):
    a = repo.new_hand(2, request_id="table-7/hand-3")
    assert repo.new_hand(2, request_id="table-7/hand-3").hand_id == a.hand_id
    assert repo.new_hand(2, request_id="table-7/hand-4").hand_id != a.hand_id
    with pytest.raises(InvalidArgument, match=r"already started hand .* with dealer 2, not 3"):
        repo.new_hand(3, request_id="table-7/hand-3")


def test_concurrent_new_hands_with_one_request_id_make_one_hand(repo):
    ids: list[str] = []
    lock = threading.Lock()

    def worker():
        hand = repo.new_hand(1, request_id="t/9")
        with lock:
            ids.append(hand.hand_id)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 1
    assert [k for k, _ in repo.store.scan(NAMESPACE)] == ids[:1]


def test_unknown_and_malformed_hand_ids(repo):
    with pytest.raises(NotFound, match="no hand 'h_nope'"):
        repo.draw("h_nope", 0)
    with pytest.raises(NotFound):
        repo.get("h_nope")
    with pytest.raises(InvalidArgument, match="hand_id is empty"):
        repo.deal("")
    with pytest.raises(InvalidArgument, match="at most 128"):
        repo.get("x" * 129)


def test_deal_draw_and_reveal_persist(repo):
    hand = repo.new_hand(0)
    hands, _, fresh = repo.deal(hand.hand_id)
    assert fresh
    event, after = repo.draw(hand.hand_id, 0)
    stored = repo.get(hand.hand_id)
    assert stored.wall.live_drawn == 54 and stored.events[-1] == event == after.events[-1]
    _repl, _ = repo.draw_replacement(hand.hand_id, 0)
    assert repo.get(hand.hand_id).wall.replacements_drawn == 1
    again, _, fresh = repo.deal(hand.hand_id)
    assert again == hands and not fresh
    repo.reveal(hand.hand_id)
    with pytest.raises(FailedPrecondition, match="revealed"):
        repo.draw(hand.hand_id, 1)
    assert repo.get(hand.hand_id).revealed


def test_a_refused_operation_writes_nothing(repo):
    hand = repo.new_hand(0)
    version = repo.store.get(NAMESPACE, hand.hand_id).version
    with pytest.raises(FailedPrecondition):
        repo.draw(hand.hand_id, 0)  # not dealt
    with pytest.raises(FailedPrecondition):
        repo.swap(hand.hand_id, 0, [0] * 5)
    assert repo.store.get(NAMESPACE, hand.hand_id).version == version
    repo.deal(hand.hand_id)
    repo.deal(hand.hand_id)  # a repeated deal is a read
    assert repo.store.get(NAMESPACE, hand.hand_id).version == version + 1


def test_swap_through_the_repository(repo):
    hand = repo.new_hand(0, swap_count=5)
    hands, _, _ = repo.deal(hand.hand_id)
    buried = [k for k in hands[1] if not T.is_flower(k)][:5]
    event, _ = repo.swap(hand.hand_id, 1, buried)
    assert len(event.tiles) == 5
    assert repo.get(hand.hand_id).swapped == {1}


def test_concurrent_draws_never_hand_out_a_tile_twice(repo):
    """8 threads draw live and replacement tiles from one hand until it is empty: every
    position is taken once and the tiles are exactly the 144 of the set."""
    hand = repo.new_hand(3)
    hands, _, _ = repo.deal(hand.hand_id)
    got: list[int] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        while True:
            try:
                if i % 2:
                    event, _ = repo.draw(hand.hand_id, i % 4)
                else:
                    event, _ = repo.draw_replacement(hand.hand_id, i % 4)
            except FailedPrecondition:
                return
            with lock:
                got.extend(event.tiles)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 91
    assert sorted(got + [k for h in hands for k in h]) == T.canonical_set()
    final = repo.get(hand.hand_id)
    assert final.wall.remaining == 0
    assert [e.sequence for e in final.events] == list(range(1, 4 + 91 + 1))
