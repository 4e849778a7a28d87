"""Store transactions per wall operation: a draw on a hand the replica holds is one append
(no read first), on every backend and by PostgreSQL's own count; a replica that missed
another's draws catches up from the refused append's rows, handing out the wall's tiles in
order and a retried request id's own tile."""

from __future__ import annotations

import time
from collections import Counter

import psycopg

from infra.store import open_store
from services.wall.domain.record import HandWall
from services.wall.storage.repository import WallRepository
from tests.support.stores import CountingStore


def solo_draws(seed: bytes, dealer: int, n: int) -> list[tuple[int, ...]]:
    """The tiles ``n`` live draws (seats in turn) hand out from a hand alone."""
    hand = HandWall.create("solo", seed, dealer)
    hand.deal()
    return [hand.draw(i % 4).tiles for i in range(n)]


def test_a_draw_on_a_held_hand_is_one_append(backend):
    store = CountingStore(backend.open())
    repo = WallRepository(store)
    hand = repo.new_hand(1, seed=bytes(32))
    store.taken()
    repo.deal(hand.hand_id)
    assert store.taken() == Counter(append=1)
    got = [repo.draw(hand.hand_id, i % 4, f"r{i}")[0] for i in range(30)]
    assert store.taken() == Counter(append=30)
    assert [e.tiles for e in got] == solo_draws(bytes(32), 1, 30)
    # A retry is answered from the hand as it is in the store: one read, nothing written.
    again, now = repo.draw(hand.hand_id, 3, "r7")
    assert again == got[7] and now.wall.live_drawn == 53 + 30
    assert store.taken() == Counter(read_log=1)
    repo.draw_replacement(hand.hand_id, 0, "x")
    repo.reveal(hand.hand_id)
    assert store.taken() == Counter(append=2)


def test_replicas_taking_turns_catch_up_from_the_refused_append(backend):
    """Two repositories on one store (two replicas) draw in turn from one hand: each append
    on a hand the other has drawn from since is refused, its Conflict brings the rows
    missed, and the second append goes in: two transactions, no read, the wall's tiles in
    order, never one twice."""
    a_store, b_store = CountingStore(backend.open()), CountingStore(backend.open())
    a, b = WallRepository(a_store), WallRepository(b_store)
    hand = a.new_hand(1, seed=bytes(32))
    a_store.taken()
    b.deal(hand.hand_id)  # b loads the hand (header, rows), then appends
    assert b_store.taken() == Counter(get=1, read_log=1, append=1)
    first, _ = a.draw(hand.hand_id, 0, "r0")  # a's hand is not dealt: refused, read, drawn
    assert a_store.taken() == Counter(read_log=1, append=1)
    got = [first]
    for i in range(1, 21):
        repo, store = ((a, a_store), (b, b_store))[i % 2]
        conflicts = store.conflicts
        got.append(repo.draw(hand.hand_id, i % 4, f"r{i}")[0])
        assert store.taken() == Counter(append=2) and store.conflicts == conflicts + 1
    assert [e.sequence for e in got] == list(range(5, 26))
    assert [e.tiles for e in got] == solo_draws(bytes(32), 1, 21)
    # a's last draw is not in b's hand: b's new tile is refused, the row brought back holds
    # the request id, and b answers with a's tile after reading the hand.
    assert b.draw(hand.hand_id, 0, "r20")[0] == got[20]
    assert b_store.taken() == Counter(append=1, read_log=1)
    assert a.draw(hand.hand_id, 3, "r7")[0] == got[7]  # b's, held by a: read, the same tile
    assert a_store.taken() == Counter(read_log=1)
    assert a.get(hand.hand_id).events == b.get(hand.hand_id).events
    assert len(b_store.store.read_log("wall/" + hand.hand_id)) == 22  # deal + 21 draws


def committed(server: str, database: str, timeout: float = 20.0) -> int:
    """PostgreSQL's count of transactions committed in ``database``, once no connection to it
    is left (a backend hands its counts over as it exits) and the count holds still; read
    from the server's own database, so the reading adds none."""
    deadline = time.monotonic() + timeout
    last = None
    with psycopg.connect(server, autocommit=True) as c:
        while time.monotonic() < deadline:
            (busy,) = c.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)
            ).fetchone()
            (count,) = c.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", (database,)
            ).fetchone()
            if not busy and count == last:
                return count
            last = None if busy else count
            time.sleep(0.2)
    raise AssertionError(f"connections to {database} still open after {timeout}s")


def test_postgresql_commits_one_transaction_per_draw(postgres_database, postgres_url):
    """By PostgreSQL's own count: a hand with 50 draws commits 40 transactions more than one
    with 10 (a read then an append per draw would be 80)."""

    def commits_for(draws: int) -> int:
        before = committed(postgres_database.server, postgres_database.name)
        store = open_store(postgres_url)
        repo = WallRepository(store)
        hand = repo.new_hand(0)
        repo.deal(hand.hand_id)
        for i in range(draws):
            repo.draw(hand.hand_id, i % 4, f"r{i}")
        store.close()
        return committed(postgres_database.server, postgres_database.name) - before

    few, many = commits_for(10), commits_for(50)
    # Autovacuum's visits to the database may add a few commits of their own.
    assert 40 <= many - few < 48, (few, many)
