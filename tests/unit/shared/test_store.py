"""The store contract (shared.store.base.Store), run against every backend: memory and SQLite
(a file, so that WAL and the cross-connection lock are exercised)."""

from __future__ import annotations

import threading

import pytest

from shared.store import AlreadyExists, Conflict, Record, open_store
from shared.store.memory import MemoryStore
from shared.store.sqlite import SqliteStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    s = open_store("memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/s.db")
    yield s
    s.close()


def test_open_store_urls(tmp_path):
    assert isinstance(open_store("memory://"), MemoryStore)
    s = open_store(f"sqlite:///{tmp_path}/a/b.db")
    assert isinstance(s, SqliteStore) and (tmp_path / "a" / "b.db").exists()
    s.close()
    open_store("sqlite://:memory:").close()
    with pytest.raises(ValueError, match="unknown store URL 'redis://x'"):
        open_store("redis://x")
    with pytest.raises(ValueError, match="names no file"):
        open_store("sqlite://")


def test_get_create_and_versions(store):
    assert store.get("ns", "k") is None
    assert store.create("ns", "k", b"v1") == Record(b"v1", 1)
    with pytest.raises(AlreadyExists):
        store.create("ns", "k", b"other")
    assert store.get("ns", "k") == Record(b"v1", 1)
    assert store.get("other", "k") is None  # namespaces are separate


def test_put_with_and_without_expected_version(store):
    assert store.put("ns", "k", b"a").version == 1
    assert store.put("ns", "k", b"b").version == 2
    assert store.put("ns", "k", b"c", expected_version=2) == Record(b"c", 3)
    with pytest.raises(Conflict, match="version 3, not 2"):
        store.put("ns", "k", b"d", expected_version=2)
    assert store.get("ns", "k") == Record(b"c", 3)
    assert store.put("ns", "new", b"x", expected_version=0).version == 1
    with pytest.raises(Conflict):
        store.put("ns", "new", b"y", expected_version=0)


def test_update_is_read_modify_write(store):
    assert store.update("ns", "n", lambda old: (b"1", old)) is None
    assert store.update("ns", "n", lambda old: (str(int(old) + 1).encode(), "ok")) == "ok"
    assert store.get("ns", "n") == Record(b"2", 2)
    assert store.update("ns", "n", lambda old: (None, old)) == b"2"  # None: no write
    assert store.get("ns", "n").version == 2


def test_update_that_raises_writes_nothing(store):
    store.put("ns", "k", b"before")

    def boom(old):
        raise ValueError("no")

    with pytest.raises(ValueError):
        store.update("ns", "k", boom)
    assert store.get("ns", "k") == Record(b"before", 1)
    store.update("ns", "k", lambda old: (b"after", None))  # the store still works
    assert store.get("ns", "k").value == b"after"


def test_delete_and_scan(store):
    for key in ("b2", "a1", "b1", "c"):
        store.put("ns", key, key.encode())
    store.put("other", "b3", b"x")
    assert [k for k, _ in store.scan("ns")] == ["a1", "b1", "b2", "c"]
    assert [(k, r.value) for k, r in store.scan("ns", "b")] == [("b1", b"b1"), ("b2", b"b2")]
    assert store.delete("ns", "b1") is True
    assert store.delete("ns", "b1") is False
    assert [k for k, _ in store.scan("ns", "b")] == ["b2"]
    assert list(store.scan("empty")) == []


def test_logs(store):
    assert store.read_log("t") == []
    assert [store.append("t", f"e{i}".encode()) for i in range(1, 6)] == [1, 2, 3, 4, 5]
    assert store.append("u", b"x") == 1  # logs are independent
    assert store.read_log("t", after=3) == [(4, b"e4"), (5, b"e5")]
    assert store.read_log("t", after=1, limit=2) == [(2, b"e2"), (3, b"e3")]
    assert store.read_log("t", after=5) == []
    assert len(store.read_log("t")) == 5


def test_concurrent_updates_are_never_lost(store):
    """8 threads × 50 increments through update: the counter ends at exactly 400 and every
    increment saw a distinct value."""
    store.put("ns", "counter", b"0")
    seen: list[int] = []
    lock = threading.Lock()

    def incr(old):
        n = int(old) + 1
        return str(n).encode(), n

    def worker():
        for _ in range(50):
            n = store.update("ns", "counter", incr)
            with lock:
                seen.append(n)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get("ns", "counter").value == b"400"
    assert sorted(seen) == list(range(1, 401))


def test_concurrent_appends_get_distinct_sequence_numbers(store):
    numbers: list[int] = []
    lock = threading.Lock()

    def worker(i):
        for j in range(25):
            n = store.append("log", f"{i}-{j}".encode())
            with lock:
                numbers.append(n)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(numbers) == list(range(1, 101))
    assert len(store.read_log("log")) == 100


def test_sqlite_is_shared_between_connections(tmp_path):
    """Two stores on one file (as two replicas would be) see each other's writes and
    serialise their updates."""
    url = f"sqlite:///{tmp_path}/shared.db"
    a, b = open_store(url), open_store(url)
    try:
        a.put("ns", "k", b"0")
        assert b.get("ns", "k").value == b"0"

        def incr(old):
            return str(int(old) + 1).encode(), None

        def worker(s):
            for _ in range(30):
                s.update("ns", "k", incr)

        threads = [threading.Thread(target=worker, args=(s,)) for s in (a, b, a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert a.get("ns", "k").value == b"120"
    finally:
        a.close()
        b.close()


def test_store_is_a_context_manager(tmp_path):
    with open_store(f"sqlite:///{tmp_path}/c.db") as s:
        s.put("ns", "k", b"v")
    with open_store(f"sqlite:///{tmp_path}/c.db") as s:
        assert s.get("ns", "k").value == b"v"  # persisted
