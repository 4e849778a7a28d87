"""The store contract (infra.store.base.Store), one suite run against every backend: memory,
SQLite (a file, so WAL and the cross-connection lock are exercised) and PostgreSQL (a schema
of the test's own; skipped when the server is unreachable, failed under CI=true), from several
threads and several processes; then what only one backend has (URLs, the PostgreSQL schema,
its pool and what a lost connection does)."""

from __future__ import annotations

import sqlite3
import threading
import time

import psycopg
import pytest

from infra.store import (
    AlreadyExists,
    Conflict,
    Record,
    StoreUnavailable,
    open_store,
    redact_url,
)
from infra.store.base import Fence, Fenced, InvalidKey, LeaseHeld, StoreError
from infra.store.memory import MemoryStore
from infra.store.postgres import STORE_SCHEMA
from infra.store.schema import Schema
from infra.store.sqlite import SqliteStore
from tests.support import store_workers
from tests.support.concurrency import run_processes, run_threads, run_threads_each

# --- the contract, on every backend -----------------------------------------------------------


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
    assert store.update("ns", "absent", lambda old: (None, old)) is None
    assert store.get("ns", "absent") is None


def test_update_that_raises_writes_nothing(store):
    store.put("ns", "k", b"before")

    def boom(old):
        raise ValueError("no")

    with pytest.raises(ValueError):
        store.update("ns", "k", boom)
    with pytest.raises(ValueError):
        store.update("ns", "absent", boom)
    assert store.get("ns", "k") == Record(b"before", 1)
    assert store.get("ns", "absent") is None
    store.update("ns", "k", lambda old: (b"after", None))  # the store still works
    assert store.get("ns", "k").value == b"after"


def test_values_are_bytes_of_any_content(store):
    raw = bytes(range(256)) * 40
    store.put("ns", "blob", raw)
    assert store.get("ns", "blob").value == raw
    store.put("ns", "empty", b"")
    assert store.get("ns", "empty") == Record(b"", 1)
    assert store.append("blobs", raw) == 1 and store.read_log("blobs") == [(1, raw)]


def test_delete_and_scan(store):
    for key in ("b2", "a1", "b1", "c", "b_x", "b%y", "B"):
        store.put("ns", key, key.encode())
    store.put("other", "b3", b"x")
    assert [k for k, _ in store.scan("ns")] == ["B", "a1", "b%y", "b1", "b2", "b_x", "c"]
    assert [(k, r.value) for k, r in store.scan("ns", "b1")] == [("b1", b"b1")]
    assert [k for k, _ in store.scan("ns", "b_")] == ["b_x"]  # no wildcards in a prefix
    assert [k for k, _ in store.scan("ns", "b%")] == ["b%y"]
    assert store.delete("ns", "b1") is True
    assert store.delete("ns", "b1") is False
    assert [k for k, _ in store.scan("ns", "b")] == ["b%y", "b2", "b_x"]
    assert list(store.scan("empty")) == []


def test_names_with_a_nul_character_are_refused_alike(store):
    """PostgreSQL text cannot hold NUL: every backend refuses such a name on a write (nothing
    written) and finds nothing under it on a read, instead of failing INTERNAL."""
    bad = "room\x00code"
    for write in (
        lambda: store.create("ns", bad, b"x"),
        lambda: store.put(bad, "k", b"x"),
        lambda: store.update("ns", bad, lambda old: (b"x", None)),
        lambda: store.append(bad, b"x"),
        lambda: store.acquire_lease(bad, "a", 1000),
        lambda: store.acquire_lease("t", bad, 1000),
    ):
        with pytest.raises(InvalidKey) as err:
            write()
        assert err.value.code == "INVALID_ARGUMENT"
    assert store.get("ns", bad) is None and list(store.scan(bad)) == []
    assert store.read_log(bad) == [] and store.get_lease(bad) is None
    assert store.delete("ns", bad) is False and store.delete_log(bad) == 0
    assert store.scan_leases(bad) == [] and store.namespaces(bad) == []
    with pytest.raises(Fenced):
        store.append("log", b"x", fence=Fence(bad, 1))
    assert store.namespaces() == [] and store.scan_leases() == []


def test_namespaces_by_prefix(store):
    for ns in ("mm_ledger/b", "mm_ledger/a", "mm_ledger_hands", "wall"):
        store.put(ns, "k", b"")
    store.put("mm_ledger/a", "k2", b"")
    assert store.namespaces("mm_ledger/") == ["mm_ledger/a", "mm_ledger/b"]
    assert store.namespaces() == ["mm_ledger/a", "mm_ledger/b", "mm_ledger_hands", "wall"]
    store.delete("mm_ledger/b", "k")
    assert store.namespaces("mm_ledger/") == ["mm_ledger/a"]
    assert store.namespaces("mm_ledger_") == ["mm_ledger_hands"]  # no wildcards


def test_keys_in_code_point_order(store):
    keys = ["é", "z", "Z", "a/2", "a/10", "中", "a"]
    for key in keys:
        store.put("ns", key, b"")
    assert [k for k, _ in store.scan("ns")] == sorted(keys)


def test_logs(store):
    assert store.read_log("t") == []
    assert [store.append("t", f"e{i}".encode()) for i in range(1, 6)] == [1, 2, 3, 4, 5]
    assert store.append("u", b"x") == 1  # logs are independent
    assert store.read_log("t", after=3) == [(4, b"e4"), (5, b"e5")]
    assert store.read_log("t", after=1, limit=2) == [(2, b"e2"), (3, b"e3")]
    assert store.read_log("t", after=5) == []
    assert len(store.read_log("t")) == 5


def test_conditional_append_and_delete_log(store):
    assert store.append("t", b"a", expected_seq=0) == 1
    assert store.append("t", b"b", expected_seq=1) == 2
    for stale in (0, 1, 3):
        with pytest.raises(Conflict, match="log t"):
            store.append("t", b"x", expected_seq=stale)
    assert store.read_log("t") == [(1, b"a"), (2, b"b")]
    with pytest.raises(Conflict):
        store.append("new", b"x", expected_seq=4)  # an absent log is at 0
    assert store.read_log("new") == []
    store.append("u", b"kept")
    assert store.delete_log("t") == 2 and store.delete_log("t") == 0
    assert store.read_log("t") == [] and store.read_log("u") == [(1, b"kept")]
    with pytest.raises(Conflict):
        store.append("t", b"x", expected_seq=2)  # deleted: at 0 again
    assert store.append("t", b"again") == 1


def test_a_refused_append_brings_the_entries_the_writer_missed(store):
    """A Conflict of ``append(expected_seq=…)`` carries the entries after ``expected_seq``
    (read in the refusing transaction), so the writer catches up without a read."""
    for entry in (b"a", b"b", b"c"):
        store.append("t", entry)
    for stale, missed in ((0, [(1, b"a"), (2, b"b"), (3, b"c")]), (2, [(3, b"c")]), (5, [])):
        with pytest.raises(Conflict) as refused:
            store.append("t", b"x", expected_seq=stale)
        assert refused.value.entries == missed
    assert store.append("t", b"d", expected_seq=3) == 4
    with pytest.raises(Conflict) as refused:
        store.put("ns", "k", b"v", expected_version=3)
    assert refused.value.entries == []


def test_append_many_numbers_its_entries_in_one_write_or_none(store):
    """A step's events go in at once: numbered on in order, the last number back; refused
    whole (Conflict with what the writer missed) when the log moved on."""
    assert store.append_many("t", [b"a", b"b", b"c"], expected_seq=0) == 3
    assert store.append("t", b"d") == 4
    assert store.append_many("t", [b"e"], expected_seq=4) == 5
    assert store.append_many("t", (b"f", b"g")) == 7  # unconditional: after whatever is there
    with pytest.raises(Conflict) as refused:
        store.append_many("t", [b"x", b"y"], expected_seq=5)
    assert refused.value.entries == [(6, b"f"), (7, b"g")]
    with pytest.raises(Conflict):
        store.append_many("new", [b"x"], expected_seq=2)
    assert store.read_log("new") == []
    assert store.read_log("t") == [(i, e.encode()) for i, e in enumerate("abcdefg", 1)]
    with pytest.raises(ValueError, match="at least one entry"):
        store.append_many("t", [])
    assert len(store.read_log("t")) == 7


def test_append_many_writes_its_records_with_its_entries_or_not_at_all(store):
    """The transactional outbox: records go in with the entries, versions rising as a put's,
    and nothing of them when the append is refused (Conflict or Fenced)."""
    store.put("outbox", "h1", b"old")
    records = [("outbox", "h1", b"first"), ("outbox", "h2", b"x"), ("outbox", "h1", b"new")]
    assert store.append_many("t", [b"a", b"b"], expected_seq=0, records=records) == 2
    assert store.get("outbox", "h1") == Record(b"new", 2)  # a key twice: the last value
    assert store.get("outbox", "h2") == Record(b"x", 1)
    with pytest.raises(Conflict):
        store.append_many("t", [b"c"], expected_seq=1, records=[("outbox", "h3", b"y")])
    lease = store.acquire_lease("owner", "a", 60_000)
    store.release_lease(lease)
    with pytest.raises(Fenced):
        store.append_many("t", [b"c"], fence=lease.fence, records=[("outbox", "h3", b"y")])
    assert store.get("outbox", "h3") is None and store.read_log("t") == [(1, b"a"), (2, b"b")]
    with pytest.raises(InvalidKey):
        store.append_many("t", [b"c"], records=[("outbox", "bad\x00key", b"y")])
    assert len(store.read_log("t")) == 2


def test_concurrent_append_many_never_interleave(store):
    """4 threads each write 25 batches of 3 conditionally, retrying on Conflict: 300 entries
    numbered 1-300, each batch's three side by side and in order."""

    def worker(i):
        for j in range(25):
            while True:
                last = len(store.read_log("log"))
                batch = [f"{i}-{j}-{k}".encode() for k in range(3)]
                try:
                    store.append_many("log", batch, expected_seq=last)
                    break
                except Conflict:
                    continue

    run_threads(worker, 4, with_index=True)
    log = store.read_log("log")
    assert [seq for seq, _ in log] == list(range(1, 301))
    entries = [e.decode() for _, e in log]
    for start in range(0, 300, 3):
        owner = entries[start].rsplit("-", 1)[0]
        assert entries[start : start + 3] == [f"{owner}-{k}" for k in range(3)]


def test_concurrent_conditional_appends_have_one_winner_per_number(store):
    """8 threads each read the log's end and append conditionally, retrying on Conflict,
    20 entries each: 160 entries numbered 1-160, none lost."""

    def worker(i):
        for j in range(20):
            while True:
                last = len(store.read_log("log"))
                try:
                    store.append("log", f"{i}-{j}".encode(), expected_seq=last)
                    break
                except Conflict:
                    continue

    run_threads(worker, 8, with_index=True)
    log = store.read_log("log")
    assert [seq for seq, _ in log] == list(range(1, 161))
    assert sorted(e for _, e in log) == sorted(
        f"{i}-{j}".encode() for i in range(8) for j in range(20)
    )


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

    run_threads(worker, 8)
    assert store.get("ns", "counter").value == b"400"
    assert sorted(seen) == list(range(1, 401))


def test_concurrent_first_updates_of_an_absent_key_are_not_lost(store):
    """Insert-if-absent under a race: 8 threads each add 1 to a key nobody created."""

    def worker():
        store.update("ns", "fresh", store_workers._incr)

    for _ in range(5):
        store.delete("ns", "fresh")
        run_threads(worker, 8)
        assert store.get("ns", "fresh") == Record(b"8", 8)


def test_concurrent_creates_have_one_winner(store):
    wins: list[int] = []

    def worker(i):
        try:
            store.create("ns", "once", str(i).encode())
            wins.append(i)
        except AlreadyExists:
            pass

    run_threads(worker, 8, with_index=True)
    assert len(wins) == 1 and store.get("ns", "once").value == str(wins[0]).encode()


def test_concurrent_appends_get_distinct_sequence_numbers(store):
    numbers: list[int] = []
    lock = threading.Lock()

    def worker(i):
        for j in range(25):
            n = store.append("log", f"{i}-{j}".encode())
            with lock:
                numbers.append(n)

    run_threads(worker, 4, with_index=True)
    assert sorted(numbers) == list(range(1, 101))
    assert [seq for seq, _ in store.read_log("log")] == list(range(1, 101))


def test_stores_on_one_database_see_and_serialise_each_other(backend):
    """Two stores on one database (as two replicas would be) see each other's writes and
    serialise their updates."""
    a, b = backend.open(), backend.open()
    a.put("ns", "k", b"0")
    assert b.get("ns", "k").value == b"0"

    def incr(old):
        return str(int(old) + 1).encode(), None

    def worker(i):
        for _ in range(30):
            (a, b)[i % 2].update("ns", "k", incr)

    run_threads(worker, 4, with_index=True)
    assert a.get("ns", "k").value == b"120" and b.get("ns", "k").value == b"120"


def test_processes_lose_no_update_and_number_the_log_without_gaps(shared_backend):
    """4 processes at once, each 40 increments of one counter and 40 appends to one log:
    the counter ends at 160 with every value seen once; the log is numbered 1-160."""
    shared_backend.open()  # the schema exists before the race (its creation is tested apart)
    results = run_processes(store_workers.updates_and_appends, shared_backend.url, 4, extra=(40,))
    seen = sorted(n for _, s, _ in results for n in s)
    numbers = sorted(n for _, _, ns in results for n in ns)
    assert seen == list(range(1, 161))
    assert numbers == list(range(1, 161))
    store = shared_backend.open()
    assert store.get("ns", "counter").value == b"160"
    log = store.read_log("log")
    assert [seq for seq, _ in log] == list(range(1, 161))
    for name, _, ns in results:  # each process's entries are where it was told they went
        mine = {seq: entry for seq, entry in log if entry.startswith(f"{name}-".encode())}
        assert sorted(mine) == sorted(ns)


def test_store_is_a_context_manager(shared_backend):
    with open_store(shared_backend.url) as s:
        s.put("ns", "k", b"v")
    with open_store(shared_backend.url) as s:
        assert s.get("ns", "k").value == b"v"  # persisted


# --- URLs and what one backend alone has ------------------------------------------------------


def test_open_store_urls(tmp_path):
    assert isinstance(open_store("memory://"), MemoryStore)
    s = open_store(f"sqlite:///{tmp_path}/a/b.db")
    assert isinstance(s, SqliteStore) and (tmp_path / "a" / "b.db").exists()
    s.close()
    open_store("sqlite://:memory:").close()
    with pytest.raises(ValueError, match="unknown store URL 'redis://x'"):
        open_store("redis://x")
    with pytest.raises(ValueError, match="unknown store URL 'mysql://u:\\*\\*\\*@h/db'"):
        open_store("mysql://u:secret@h/db")
    with pytest.raises(ValueError, match="names no file"):
        open_store("sqlite://")


def test_a_sqlite_write_waiting_on_another_connection_stalls_no_read(tmp_path):
    """Another connection holds the file's write lock: this store's write waits it out
    (busy_timeout), and meanwhile every read, the ledger's read transaction included, answers
    at once; the write lands once the lock is let go."""
    path = tmp_path / "s.db"
    store = SqliteStore(path, busy_timeout_ms=5_000)
    store.put("ns", "k", b"v")
    store.append("log", b"e1")
    store.acquire_lease("t", "me", 60_000)
    blocker = sqlite3.connect(path)
    blocker.execute("BEGIN EXCLUSIVE")
    wrote: list[object] = []
    writer = threading.Thread(target=lambda: wrote.append(store.put("ns", "k2", b"w")))
    writer.start()
    try:
        time.sleep(0.3)  # the write is waiting on the lock, holding the writing connection
        assert writer.is_alive()
        start = time.monotonic()
        assert store.get("ns", "k").value == b"v"
        assert [k for k, _ in store.scan("ns")] == ["k"]
        assert store.namespaces() == ["ns"]
        assert store.read_log("log") == [(1, b"e1")]
        assert store.get_lease("t").owner == "me" and store.scan_leases()
        assert store.clock_ms() > 0
        (count,) = store.transaction(
            lambda db: db.execute("SELECT COUNT(*) FROM records").fetchone(), read_only=True
        )
        assert count == 1
        elapsed = time.monotonic() - start
    finally:
        blocker.rollback()
        blocker.close()
        writer.join(10)
    assert elapsed < 1.0, f"reads waited {elapsed:.2f} s behind the waiting write"
    assert wrote and store.get("ns", "k2").value == b"w"
    store.close()


def test_a_sqlite_read_inside_a_write_transaction_sees_its_writes(tmp_path):
    store = SqliteStore(tmp_path / "s.db")

    def tx(db):
        db.execute(
            "INSERT INTO records (namespace, key, value, version) VALUES ('ns', 'k', x'76', 1)"
        )
        return store.get("ns", "k")

    assert store.transaction(tx).value == b"v"
    store.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_a_sqlite_transaction_that_ends_itself_then_raises_keeps_its_error(tmp_path, read_only):
    """``fn`` ends the transaction and then raises: the caller gets ``fn``'s error (not a
    failed ROLLBACK's), and the store goes on."""
    store = SqliteStore(tmp_path / "s.db")

    def fn(db):
        db.execute("COMMIT")
        raise ZeroDivisionError("fn's own error")

    with pytest.raises(ZeroDivisionError, match="fn's own error"):
        store.transaction(fn, read_only=read_only)
    store.put("ns", "k", b"v")
    assert store.get("ns", "k").value == b"v"
    store.close()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:s3cret@db:5432/mj", "postgresql://u:***@db:5432/mj"),
        ("postgresql://u:p@ss@db/mj", "postgresql://u:***@db/mj"),
        (
            "postgres://u@db/mj?password=s3cret&sslmode=require",
            "postgres://u@db/mj?password=***&sslmode=require",
        ),
        ("postgresql://u@db/mj", "postgresql://u@db/mj"),
        ("sqlite:///.data/wall.db", "sqlite:///.data/wall.db"),
        ("memory://", "memory://"),
    ],
)
def test_redact_url_hides_the_password(url, shown):
    assert redact_url(url) == shown
    assert "s3cret" not in redact_url(url)


def test_unreachable_postgres_is_unavailable_with_the_password_hidden():
    with pytest.raises(StoreUnavailable) as err:
        open_store("postgresql://u:s3cret@127.0.0.1:1/none?connect_timeout=1")
    assert "s3cret" not in str(err.value) and "u:***@127.0.0.1:1" in str(err.value)
    assert err.value.code == "UNAVAILABLE"


def test_postgres_schema_is_versioned_and_migrated_once(postgres_url):
    with open_store(postgres_url) as a:
        assert a.schema_version() == STORE_SCHEMA.version == 2
        assert a.migrate("store", STORE_SCHEMA) == 2  # at its version: nothing ran
        with pytest.raises(StoreError, match="newer than this program knows"):
            a.migrate("store", Schema(version=1, create=STORE_SCHEMA.create))
        assert a.migrate("extra", ("CREATE TABLE extra_t (x int)",)) == 0
        assert a.migrate("extra", ("CREATE TABLE extra_t (x int)",)) == 1  # not run twice
        assert a.schema_version("extra") == 1


def test_a_new_postgres_database_is_created_at_the_current_version_at_once(postgres_url):
    """One script makes the current schema (no replay of earlier versions), and a database
    the current release made keeps its data when a service starts on it again."""
    with open_store(postgres_url) as s:
        s.put("ns", "k", b"kept")
        assert s.acquire_lease("t", "a", 1000).epoch == 1
    with open_store(postgres_url) as s:
        assert s.schema_version() == 2 and s.get("ns", "k") == Record(b"kept", 1)


def test_a_schema_without_an_upgrade_step_from_its_version_is_refused(postgres_url):
    with open_store(postgres_url) as s:
        s.migrate("extra", Schema(version=1, create="CREATE TABLE extra_t (x int)"))
        two = Schema(version=2, create="CREATE TABLE extra_t (x int, y int)")
        with pytest.raises(StoreError, match="no step from version 1"):
            s.migrate("extra", two)
        upgrade = Schema(two.version, two.create, {1: "ALTER TABLE extra_t ADD COLUMN y int"})
        assert s.migrate("extra", upgrade) == 1
        assert s.schema_version("extra") == 2


def test_sqlite_schema_is_versioned_and_a_file_without_a_version_row_keeps_its_data(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # a file as the first release left it: no version row
        db.executescript(
            "CREATE TABLE records (namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT "
            "NULL, version INTEGER NOT NULL, PRIMARY KEY (namespace, key)) WITHOUT ROWID;"
            "INSERT INTO records VALUES ('ns', 'k', X'6f6c64', 1);"
        )
    s = SqliteStore(path)
    try:
        assert s.schema_version() == 2 and s.get("ns", "k") == Record(b"old", 1)
        assert s.acquire_lease("t", "a", 1000).epoch == 1
        with pytest.raises(StoreError, match="newer than this program knows"):
            s.migrate("store", Schema(version=1, create=""))
    finally:
        s.close()


def test_services_starting_at_once_on_an_empty_database_all_start(postgres_url):
    """6 processes open the store together on an empty schema: each creates or finds the
    schema (the advisory lock orders them) and none fails."""
    results = run_processes(store_workers.open_only, postgres_url, 6)
    assert sorted(r[1] for r in results) == ["ok"] * 6
    with open_store(postgres_url) as s:
        assert [k for k, _ in s.scan("opened")] == [f"p{i}" for i in range(6)]


def test_postgres_pool_size_bounds_the_connections(postgres_url):
    with open_store(postgres_url, pool_size=3) as s:
        pids: set[int] = set()
        lock, barrier = threading.Lock(), threading.Barrier(6)

        def worker():
            barrier.wait()
            for _ in range(20):
                pid = s.transaction(lambda c: c.info.backend_pid)
                with lock:
                    pids.add(pid)

        run_threads(worker, 6)
        assert 1 <= len(pids) <= 3
    with pytest.raises(ValueError, match="pool size 0"):
        open_store(postgres_url, pool_size=0)


def _terminate(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_a_lost_connection_is_unavailable_and_writes_nothing(postgres_url):
    """The connection dies in the middle of update: StoreUnavailable, the record as before
    (never half-applied); the store then works again on a fresh connection."""
    with open_store(postgres_url, pool_size=1) as s:
        s.put("ns", "k", b"before")
        s.append("log", b"one")
        pid = s.transaction(lambda c: c.info.backend_pid)

        def cut_off(old):
            _terminate(postgres_url, pid)
            return b"after", None

        with pytest.raises(StoreUnavailable, match="lost the connection") as err:
            s.update("ns", "k", cut_off)
        assert err.value.code == "UNAVAILABLE"
        assert s.get("ns", "k") == Record(b"before", 1)

        def append_then_cut(conn):
            conn.execute("INSERT INTO store_logs (log, seq, entry) VALUES ('log', 2, 'x')")
            _terminate(postgres_url, conn.info.backend_pid)
            conn.execute("SELECT 1")

        with pytest.raises(StoreUnavailable):
            s.transaction(append_then_cut)
        assert s.read_log("log") == [(1, b"one")]
        assert s.append("log", b"two") == 2  # the store works again

        pid = s.transaction(lambda c: c.info.backend_pid)
        _terminate(postgres_url, pid)
        assert s.get("ns", "k").value == b"before"  # a read is tried again on a fresh one


def test_deadlocks_are_retried(postgres_url):
    """Two transactions that lock two rows in opposite orders deadlock; PostgreSQL aborts one
    (40P01) and the store runs it again: both end applied."""
    with open_store(postgres_url, pool_size=4) as s:
        s.put("ns", "a", b"0")
        s.put("ns", "b", b"0")
        barrier = threading.Barrier(2)
        attempts = {"x": 0, "y": 0}

        def locker(name, first, second):
            def tx(conn):
                attempts[name] += 1
                conn.execute(
                    "UPDATE store_records SET version = version + 1 WHERE key = %s", (first,)
                )
                if attempts[name] == 1:
                    barrier.wait(10)
                conn.execute(
                    "UPDATE store_records SET version = version + 1 WHERE key = %s", (second,)
                )

            return lambda: s.transaction(tx)

        run_threads_each([locker("x", "a", "b"), locker("y", "b", "a")])
        assert attempts["x"] + attempts["y"] == 3  # one of them ran twice
        assert s.get("ns", "a").version == 3 and s.get("ns", "b").version == 3


# --- leases and fenced writes, on every backend ------------------------------------------------


def test_lease_epochs_rise_on_every_change_of_owner(store):
    a = store.acquire_lease("t/1", "replica-a", 60_000)
    assert (a.name, a.owner, a.epoch, a.expired) == ("t/1", "replica-a", 1, False)
    assert a.expires_ms >= store.clock_ms() + 59_000
    again = store.acquire_lease("t/1", "replica-a", 120_000)  # its owner: same epoch, extended
    assert again.epoch == 1 and again.expires_ms > a.expires_ms
    with pytest.raises(LeaseHeld) as err:
        store.acquire_lease("t/1", "replica-b", 60_000)
    assert err.value.holder.owner == "replica-a" and err.value.holder.epoch == 1
    assert err.value.code == "UNAVAILABLE"
    assert store.release_lease(again) is True
    released = store.get_lease("t/1")
    assert (released.owner, released.epoch, released.expired, released.held) == ("", 1, True, False)
    b = store.acquire_lease("t/1", "replica-b", 60_000)  # at once after a release
    assert b.epoch == 2
    assert store.release_lease(again) is False  # no longer a's
    a2 = store.acquire_lease("t/1", "replica-b", 60_000)
    assert a2.epoch == 2  # b again: no change of owner
    assert store.acquire_lease("t/2", "replica-b", 60_000).epoch == 1  # leases are separate


def test_an_expired_lease_is_taken_over_by_the_store_clock(store):
    a = store.acquire_lease("t", "a", 40)
    time.sleep(0.08)
    seen = store.get_lease("t")
    assert seen.expired and not seen.held and seen.epoch == 1
    assert store.renew_lease(a, 40).epoch == 1  # nobody took over: still renewable
    time.sleep(0.08)
    b = store.acquire_lease("t", "b", 60_000)
    assert b.epoch == 2 and store.get_lease("t").held
    with pytest.raises(Fenced) as err:
        store.renew_lease(a, 60_000)
    assert err.value.current.epoch == 2 and err.value.current.owner == "b"
    assert store.renew_lease(b, 90_000).expires_ms > b.expires_ms


def test_released_lease_cannot_be_renewed(store):
    a = store.acquire_lease("t", "a", 60_000)
    assert store.release_lease(a)
    with pytest.raises(Fenced, match="released"):
        store.renew_lease(a, 60_000)
    assert store.acquire_lease("t", "a", 60_000).epoch == 2  # a new tenure, even for a


def test_scan_leases_by_prefix_with_expiry(store):
    store.acquire_lease("table/b", "r1", 60_000)
    store.acquire_lease("table/a", "r1", 30)
    store.acquire_lease("other", "r1", 60_000)
    time.sleep(0.06)
    assert [(x.name, x.expired) for x in store.scan_leases("table/")] == [
        ("table/a", True),
        ("table/b", False),
    ]
    assert len(store.scan_leases()) == 3 and store.get_lease("nope") is None


@pytest.mark.parametrize(
    ("name", "owner", "ttl"), [("", "a", 10), ("t", "", 10), ("t", "a", 0), ("t", "a", -5)]
)
def test_bad_lease_arguments_change_nothing(store, name, owner, ttl):
    with pytest.raises(ValueError):
        store.acquire_lease(name, owner, ttl)
    assert store.scan_leases() == []


WRITES = {
    "create": lambda s, f: s.create("ns", "new", b"x", fence=f),
    "put": lambda s, f: s.put("ns", "k", b"x", fence=f),
    "put_expected": lambda s, f: s.put("ns", "k", b"x", expected_version=1, fence=f),
    "update": lambda s, f: s.update("ns", "k", lambda old: (old + b"x", None), fence=f),
    "delete": lambda s, f: s.delete("ns", "k", fence=f),
    "append": lambda s, f: s.append("log", b"x", fence=f),
    "append_many": lambda s, f: s.append_many("log", [b"x", b"y"], fence=f),
    "delete_log": lambda s, f: s.delete_log("log", fence=f),
}


def _state(store):
    return list(store.scan("ns")), store.read_log("log")


@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_paused_owner_can_never_write(store, write):
    """a's lease expires while it is paused; b takes the table over. Every kind of write a
    then makes under its old epoch is refused by the store, and changes nothing; b's go in."""
    store.put("ns", "k", b"v")
    a = store.acquire_lease("table", "a", 30)
    WRITES[write](store, a.fence)  # while a owns it: accepted
    store.delete("ns", "new")
    store.put("ns", "k", b"v", expected_version=None)
    store.delete("ns", "k")
    store.create("ns", "k", b"v")  # back at version 1 for put_expected
    time.sleep(0.06)
    b = store.acquire_lease("table", "b", 60_000)
    before = _state(store)
    with pytest.raises(Fenced) as err:
        WRITES[write](store, a.fence)
    assert err.value.fence == a.fence and err.value.current.epoch == b.epoch
    assert err.value.reason == "FENCED"
    assert _state(store) == before
    WRITES[write](store, b.fence)  # the new owner writes


@pytest.mark.parametrize("write", sorted(WRITES))
def test_writes_under_a_released_or_unknown_lease_are_refused(store, write):
    store.create("ns", "k", b"v")
    a = store.acquire_lease("table", "a", 60_000)
    store.release_lease(a)
    before = _state(store)
    with pytest.raises(Fenced):
        WRITES[write](store, a.fence)
    with pytest.raises(Fenced, match="no such lease"):
        WRITES[write](store, Fence("never-acquired", 1))
    assert _state(store) == before


@pytest.mark.parametrize("start", [0, 3])
def test_fenced_conditional_appends(store, start):
    """The table log's write: conditional on the log's end and fenced at once. A stale
    epoch is Fenced whatever the number; a current one at the wrong number is Conflict."""
    for i in range(start):
        store.append("table", f"e{i}".encode())
    a = store.acquire_lease("owner", "a", 20)
    assert store.append("table", b"a1", expected_seq=start, fence=a.fence) == start + 1
    with pytest.raises(Conflict):
        store.append("table", b"a2", expected_seq=start, fence=a.fence)
    time.sleep(0.05)
    b = store.acquire_lease("owner", "b", 60_000)
    for expected in (start + 1, start):
        with pytest.raises(Fenced):
            store.append("table", b"stale", expected_seq=expected, fence=a.fence)
    assert store.append("table", b"b1", expected_seq=start + 1, fence=b.fence) == start + 2
    assert [e for _, e in store.read_log("table")][start:] == [b"a1", b"b1"]


def test_an_owner_whose_lease_expired_unclaimed_still_writes(store):
    """Safety comes from the epoch: until someone else acquires the lease, its owner's epoch
    is still the current one."""
    a = store.acquire_lease("table", "a", 20)
    time.sleep(0.05)
    assert store.append("log", b"late", fence=a.fence) == 1


def test_a_fenced_update_does_not_call_fn_when_stale(store):
    a = store.acquire_lease("table", "a", 20)
    time.sleep(0.05)
    store.acquire_lease("table", "b", 60_000)
    calls = []
    with pytest.raises(Fenced):
        store.update("ns", "k", lambda old: (calls.append(old) or b"x", None), fence=a.fence)
    assert calls == [] and store.get("ns", "k") is None


def _check_takeovers(results, log) -> None:
    """Exactly one owner per epoch; the log's entries in epoch order (no write of an older
    epoch after a newer one) and each written by that epoch's owner."""
    owners: dict[int, set[str]] = {}
    for name, got, _ in results:
        for epoch in got:
            owners.setdefault(epoch, set()).add(name)
    assert all(len(names) == 1 for names in owners.values()), owners
    assert len(owners) >= 4  # the lease really changed hands
    assert sorted(owners) == list(range(1, max(owners) + 1))  # every epoch had its owner
    written = [entry.decode().split(":") for _, entry in log]
    epochs = [int(e) for e, _ in written]
    assert epochs == sorted(epochs)
    assert all(owners[int(e)] == {name} for e, name in written)


def test_takeovers_from_threads_give_one_owner_per_epoch(store):
    results = []
    lock = threading.Lock()

    def worker(i):
        got, fenced = store_workers.takeover_rounds(store, f"t{i}", 40, i)
        with lock:
            results.append((f"t{i}", got, fenced))

    run_threads(worker, 4, with_index=True)
    _check_takeovers(results, store.read_log("table-log"))


def test_takeovers_from_processes_give_one_owner_per_epoch(shared_backend):
    shared_backend.open()
    results = run_processes(store_workers.takeovers, shared_backend.url, 4, extra=(40,))
    _check_takeovers(results, shared_backend.open().read_log("table-log"))
