"""services.wall.storage.repository: walls in the store (memory, SQLite and PostgreSQL), atomic
draws from threads and from processes, one small row per draw, idempotent NewHand, NOT_FOUND, no
state change on a refused operation, and a record of an unknown version refused."""

from __future__ import annotations

import threading

import pytest

from services.wall.domain.record import HandWall
from services.wall.storage.repository import LOG_PREFIX, NAMESPACE, WallRepository
from services.wall.storage.rows import CorruptWall, WallOp
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument, NotFound
from tests.support import wall_workers
from tests.support.concurrency import run_processes


@pytest.fixture
def repo(store):
    return WallRepository(store)


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


def rows(repo, hand_id):
    return [WallOp.from_bytes(raw) for _, raw in repo.store.read_log(LOG_PREFIX + hand_id)]


def test_a_refused_operation_writes_nothing(repo):
    hand = repo.new_hand(0)
    with pytest.raises(FailedPrecondition):
        repo.draw(hand.hand_id, 0)  # not dealt
    with pytest.raises(FailedPrecondition):
        repo.swap(hand.hand_id, 0, [0] * 5)
    assert rows(repo, hand.hand_id) == []
    repo.deal(hand.hand_id)
    repo.deal(hand.hand_id)  # a repeated deal is a read
    assert [r.kind for r in rows(repo, hand.hand_id)] == ["deal"]
    assert repo.store.get(NAMESPACE, hand.hand_id).version == 1  # the header is never rewritten


def test_each_draw_is_one_small_row_with_its_request_id(repo):
    hand = repo.new_hand(2)
    repo.deal(hand.hand_id)
    event, _ = repo.draw(hand.hand_id, 2, "rq-1")
    again, _ = repo.draw(hand.hand_id, 2, "rq-1")  # a retry: the same tile, no new row
    assert again == event
    repl, _ = repo.draw_replacement(hand.hand_id, 3)
    repo.reveal(hand.hand_id)
    repo.reveal(hand.hand_id)
    log = repo.store.read_log(LOG_PREFIX + hand.hand_id)
    assert [WallOp.from_bytes(raw) for _, raw in log] == [
        WallOp("deal"),
        WallOp("draw", 2, event.tiles, (), "rq-1"),
        WallOp("replacement", 3, repl.tiles),
        WallOp("reveal"),
    ]
    assert max(len(raw) for _, raw in log) < 60
    assert repo.store.get(NAMESPACE, hand.hand_id).version == 1


def test_another_replica_sees_every_row(backend):
    """Two repositories on one database (two replicas) take turns on a hand: each catches up
    with the other's rows first, so they hand out the wall's tiles in order, never twice."""
    a, b = WallRepository(backend.open()), WallRepository(backend.open())
    hand = a.new_hand(1, seed=bytes(32))
    b.deal(hand.hand_id)
    got = [(a, b)[i % 2].draw(hand.hand_id, i % 4, f"r{i}")[0] for i in range(20)]
    assert [e.sequence for e in got] == list(range(5, 25))
    solo = HandWall.create("x", bytes(32), 1)
    solo.deal()
    assert [e.tiles for e in got] == [solo.draw(i % 4).tiles for i in range(20)]
    assert a.draw(hand.hand_id, 3, "r7")[0] == got[7]  # b's request id, retried on a
    assert a.get(hand.hand_id).events == b.get(hand.hand_id).events


def test_processes_drawing_from_one_hand_never_get_the_same_tile(shared_backend):
    """4 processes draw live and replacement tiles from one hand until it is exhausted."""
    repo = WallRepository(shared_backend.open())
    hand = repo.new_hand(0)
    hands, _, _ = repo.deal(hand.hand_id)
    results = run_processes(
        wall_workers.draw_until_exhausted, shared_backend.url, 4, extra=(hand.hand_id,)
    )
    got = [k for _, tiles in results for k in tiles]
    assert len(got) == 91
    assert sorted(got + [k for h in hands for k in h]) == T.canonical_set()
    final = repo.get(hand.hand_id)
    assert [e.sequence for e in final.events] == list(range(1, 96))
    assert len(rows(repo, hand.hand_id)) == 92


def test_a_record_of_another_version_is_refused(repo):
    """Only the header of version 2 is stored (version 1, the whole hand in its record, came
    before 0.1): anything else is a corrupt wall, not a hand to serve."""
    repo.store.create(NAMESPACE, "h_" + "0" * 24, b'{"v":1,"hand_id":"h_000"}')
    with pytest.raises(CorruptWall, match="unknown version 1"):
        repo.get("h_" + "0" * 24)


def test_returned_hands_are_snapshots(repo):
    hand = repo.new_hand(0)
    _, dealt, _ = repo.deal(hand.hand_id)
    before = dealt.wall.live_drawn
    repo.draw(hand.hand_id, 0)
    assert dealt.wall.live_drawn == before and len(dealt.events) == 4
    assert hand.events == []


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
