"""SQLite store backend: the embedded default. One file, WAL journal, nothing to install.

Every write is its own transaction on the store's one writing connection; ``update`` takes the
write lock first (``BEGIN IMMEDIATE``), so read-modify-write is atomic across threads *and*
across processes sharing the file. A fenced write checks its lease in that same transaction.
Reads run on connections of their own: in WAL mode a reader never waits for a writer, so a
write waiting out another process's lock (``busy_timeout``) stalls no read of this process.
Leases are judged by SQLite's clock (``julianday('now')``: the host's, one clock for every
process sharing the file).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from infra.store.base import (
    AlreadyExists,
    Conflict,
    Fence,
    Lease,
    Record,
    Store,
    StoreUnavailable,
    check_fence,
    check_names,
    next_lease,
    renewed_lease,
)
from infra.store.metrics import TRACED, instrument
from infra.store.schema import STORE_VERSION, Schema, as_schema, scripts_to_run
from infra.tracing import trace_store

R = TypeVar("R")

# The store's own tables as they are now (IF NOT EXISTS: a file of the first release has them
# without a version row), created at once on a new database; upgrade steps: none yet.
STORE_SCHEMA = Schema(
    version=STORE_VERSION,
    create="""
CREATE TABLE IF NOT EXISTS records (
    namespace TEXT NOT NULL,
    key       TEXT NOT NULL,
    value     BLOB NOT NULL,
    version   INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS logs (
    log   TEXT NOT NULL,
    seq   INTEGER NOT NULL,
    entry BLOB NOT NULL,
    PRIMARY KEY (log, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS leases (
    name       TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    epoch      INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
) WITHOUT ROWID;
""",
)
# SQLite's clock in ms since the Unix epoch (julianday works on every SQLite version).
_NOW_MS = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"
# Read connections kept open between reads; more are opened while more threads read at once.
_IDLE_READERS = 8


class SqliteStore(Store):
    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 10_000) -> None:
        self.path = str(path)
        self._busy_timeout_ms = int(busy_timeout_ms)
        # ":memory:" is a database per connection: there, reads share the writing connection.
        self._shared = self.path == ":memory:"
        if not self._shared:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()  # the writing connection's
        self._writing_thread: int | None = None  # the thread inside a write transaction
        self._db = self._connect()
        if not self._shared:
            self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self.migrate("store", STORE_SCHEMA)
        self._readers_lock = threading.Lock()
        self._idle_readers: list[sqlite3.Connection] = []
        self._closed = False

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path,
            isolation_level=None,
            check_same_thread=False,
            timeout=self._busy_timeout_ms / 1000,
        )
        db.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
        return db

    # --- transactions -----------------------------------------------------------------------
    def _tx(self, fn: Callable[[sqlite3.Connection], R]) -> R:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._writing_thread = threading.get_ident()
            try:
                result = fn(self._db)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # not when fn or a failed COMMIT already ended it
                    self._db.execute("ROLLBACK")
                raise
            finally:
                self._writing_thread = None
            return result

    def _read(self, fn: Callable[[sqlite3.Connection], R]) -> R:
        """``fn(connection)`` on a connection to read on: one of the read connections, so the
        read waits for no writer; the writing connection inside a write transaction (which
        sees its own writes) and for ":memory:"."""
        if self._shared or self._writing_thread == threading.get_ident():
            with self._lock:
                return fn(self._db)
        with self._readers_lock:
            if self._closed:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            db = self._idle_readers.pop() if self._idle_readers else None
        if db is None:
            db = self._connect()
        try:
            return fn(db)
        finally:
            with self._readers_lock:
                keep = not self._closed and len(self._idle_readers) < _IDLE_READERS
                if keep:
                    self._idle_readers.append(db)
            if not keep:
                db.close()

    def _read_tx(self, fn: Callable[[sqlite3.Connection], R]) -> R:
        """``fn(connection)`` in a read transaction: one snapshot for all its queries, no lock."""

        def tx(db: sqlite3.Connection) -> R:
            if db is self._db:
                return fn(db)
            db.execute("BEGIN")
            try:
                return fn(db)
            finally:
                if db.in_transaction:
                    db.execute("ROLLBACK")

        return self._read(tx)

    def transaction(self, fn: Callable[[sqlite3.Connection], R], *, read_only: bool = False) -> R:
        """Run ``fn(connection)`` holding the write lock (``BEGIN IMMEDIATE``), committed when it
        returns, rolled back when it raises; ``read_only``: in a read transaction on a read
        connection (one snapshot, waiting for no writer). For modules that keep their own
        tables in this file (the ledger)."""
        return self._read_tx(fn) if read_only else self._tx(fn)

    def migrate(self, component: str, schema: Schema | Sequence[str]) -> int:
        """Bring ``component``'s tables to ``schema``'s version (versions in ``store_schema``,
        :mod:`infra.store.schema`; a list of steps from nothing is a schema too); returns the
        version it was at. Under the write lock, so processes sharing the file migrate once."""
        schema = as_schema(schema)

        def tx(db: sqlite3.Connection) -> int:
            db.execute(
                "CREATE TABLE IF NOT EXISTS store_schema "
                "(component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
            )
            row = db.execute(
                "SELECT version FROM store_schema WHERE component = ?", (component,)
            ).fetchone()
            before = row[0] if row else 0
            for script in scripts_to_run(component, schema, before):
                for statement in script.split(";"):
                    if statement.strip():
                        db.execute(statement)
            if before < schema.version:
                db.execute(
                    "INSERT OR REPLACE INTO store_schema (component, version) VALUES (?, ?)",
                    (component, schema.version),
                )
            return before

        return self._tx(tx)

    def schema_version(self, component: str = "store") -> int:
        def read(db: sqlite3.Connection) -> int:
            try:
                row = db.execute(
                    "SELECT version FROM store_schema WHERE component = ?", (component,)
                ).fetchone()
            except sqlite3.OperationalError:  # no store_schema table yet
                return 0
            return row[0] if row else 0

        return self._read(read)

    @staticmethod
    def _lease(db: sqlite3.Connection, name: str) -> Lease | None:
        row = db.execute(
            "SELECT owner, epoch, expires_ms FROM leases WHERE name = ?", (name,)
        ).fetchone()
        return Lease(name, row[0], row[1], row[2]) if row else None

    def _fenced(self, db: sqlite3.Connection, fence: Fence | None) -> None:
        if fence is not None:
            check_fence(fence, self._lease(db, fence.lease))

    @staticmethod
    def _now(db: sqlite3.Connection) -> int:
        return db.execute(f"SELECT {_NOW_MS}").fetchone()[0]

    @staticmethod
    def _row(db: sqlite3.Connection, namespace: str, key: str) -> Record | None:
        row = db.execute(
            "SELECT value, version FROM records WHERE namespace = ? AND key = ?",
            (namespace, key),
        ).fetchone()
        return Record(bytes(row[0]), row[1]) if row else None

    @staticmethod
    def _write(
        db: sqlite3.Connection, namespace: str, key: str, value: bytes, version: int
    ) -> Record:
        db.execute(
            "INSERT INTO records (namespace, key, value, version) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, "
            "version = excluded.version",
            (namespace, key, bytes(value), version),
        )
        return Record(bytes(value), version)

    # --- records ----------------------------------------------------------------------------
    def get(self, namespace: str, key: str) -> Record | None:
        return self._read(lambda db: self._row(db, namespace, key))

    def create(
        self, namespace: str, key: str, value: bytes, *, fence: Fence | None = None
    ) -> Record:
        check_names(namespace, key)

        def tx(db: sqlite3.Connection) -> Record:
            self._fenced(db, fence)
            if self._row(db, namespace, key) is not None:
                raise AlreadyExists(f"{namespace}/{key} exists")
            return self._write(db, namespace, key, value, 1)

        return self._tx(tx)

    def put(
        self,
        namespace: str,
        key: str,
        value: bytes,
        *,
        expected_version: int | None = None,
        fence: Fence | None = None,
    ) -> Record:
        check_names(namespace, key)

        def tx(db: sqlite3.Connection) -> Record:
            self._fenced(db, fence)
            old = self._row(db, namespace, key)
            current = old.version if old else 0
            if expected_version is not None and expected_version != current:
                raise Conflict(f"{namespace}/{key} is at version {current}, not {expected_version}")
            return self._write(db, namespace, key, value, current + 1)

        return self._tx(tx)

    def update(
        self,
        namespace: str,
        key: str,
        fn: Callable[[bytes | None], tuple[bytes | None, R]],
        *,
        fence: Fence | None = None,
    ) -> R:
        check_names(namespace, key)

        def tx(db: sqlite3.Connection) -> R:
            self._fenced(db, fence)
            old = self._row(db, namespace, key)
            new, result = fn(old.value if old else None)
            if new is not None:
                self._write(db, namespace, key, new, (old.version if old else 0) + 1)
            return result

        return self._tx(tx)

    def delete(self, namespace: str, key: str, *, fence: Fence | None = None) -> bool:
        def tx(db: sqlite3.Connection) -> bool:
            self._fenced(db, fence)
            cur = db.execute(
                "DELETE FROM records WHERE namespace = ? AND key = ?", (namespace, key)
            )
            return cur.rowcount > 0

        return self._tx(tx)

    def scan(self, namespace: str, prefix: str = "") -> Iterator[tuple[str, Record]]:
        rows = self._read(
            lambda db: db.execute(
                "SELECT key, value, version FROM records WHERE namespace = ? "
                "AND substr(key, 1, ?) = ? ORDER BY key",
                (namespace, len(prefix), prefix),
            ).fetchall()
        )
        return iter([(k, Record(bytes(v), ver)) for k, v, ver in rows])

    def namespaces(self, prefix: str = "") -> list[str]:
        rows = self._read(
            lambda db: db.execute(
                "SELECT DISTINCT namespace FROM records WHERE substr(namespace, 1, ?) = ? "
                "ORDER BY namespace",
                (len(prefix), prefix),
            ).fetchall()
        )
        return [ns for (ns,) in rows]

    # --- logs -------------------------------------------------------------------------------
    def _append(
        self,
        log: str,
        entries: list[bytes],
        expected_seq: int | None,
        fence: Fence | None,
        records: dict[tuple[str, str], bytes],
    ) -> int:

        # MAX(seq) + 1 is safe here: the transaction holds the database's one write lock.
        def tx(db: sqlite3.Connection) -> int:
            self._fenced(db, fence)
            (last,) = db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM logs WHERE log = ?", (log,)
            ).fetchone()
            if expected_seq is not None and expected_seq != last:
                missed = db.execute(
                    "SELECT seq, entry FROM logs WHERE log = ? AND seq > ? ORDER BY seq",
                    (log, expected_seq),
                ).fetchall()
                raise Conflict(
                    f"log {log} is at {last}, not {expected_seq}",
                    [(seq, bytes(e)) for seq, e in missed],
                )
            db.executemany(
                "INSERT INTO logs (log, seq, entry) VALUES (?, ?, ?)",
                [(log, last + i, e) for i, e in enumerate(entries, 1)],
            )
            for (namespace, key), value in records.items():
                old = self._row(db, namespace, key)
                self._write(db, namespace, key, value, old.version + 1 if old else 1)
            return last + len(entries)

        return self._tx(tx)

    def delete_log(self, log: str, *, fence: Fence | None = None) -> int:
        def tx(db: sqlite3.Connection) -> int:
            self._fenced(db, fence)
            return db.execute("DELETE FROM logs WHERE log = ?", (log,)).rowcount

        return self._tx(tx)

    def read_log(
        self, log: str, after: int = 0, limit: int | None = None
    ) -> list[tuple[int, bytes]]:
        rows = self._read(
            lambda db: db.execute(
                "SELECT seq, entry FROM logs WHERE log = ? AND seq > ? ORDER BY seq LIMIT ?",
                (log, after, -1 if limit is None else limit),
            ).fetchall()
        )
        return [(seq, bytes(entry)) for seq, entry in rows]

    # --- leases -----------------------------------------------------------------------------
    def clock_ms(self) -> int:
        return self._read(self._now)

    @staticmethod
    def _write_lease(db: sqlite3.Connection, lease: Lease) -> Lease:
        db.execute(
            "INSERT OR REPLACE INTO leases (name, owner, epoch, expires_ms) VALUES (?, ?, ?, ?)",
            (lease.name, lease.owner, lease.epoch, lease.expires_ms),
        )
        return lease

    def acquire_lease(self, name: str, owner: str, ttl_ms: int) -> Lease:
        check_names(name, owner)

        def tx(db: sqlite3.Connection) -> Lease:
            lease = next_lease(self._lease(db, name), name, owner, ttl_ms, self._now(db))
            return self._write_lease(db, lease)

        return self._tx(tx)

    def renew_lease(self, lease: Lease, ttl_ms: int) -> Lease:
        def tx(db: sqlite3.Connection) -> Lease:
            renewed = renewed_lease(self._lease(db, lease.name), lease, ttl_ms, self._now(db))
            return self._write_lease(db, renewed)

        return self._tx(tx)

    def release_lease(self, lease: Lease) -> bool:
        def tx(db: sqlite3.Connection) -> bool:
            cur = db.execute(
                f"UPDATE leases SET owner = '', expires_ms = {_NOW_MS} "
                "WHERE name = ? AND epoch = ? AND owner = ? AND owner != ''",
                (lease.name, lease.epoch, lease.owner),
            )
            return cur.rowcount == 1

        return self._tx(tx)

    def _read_leases(self, where: str, args: tuple) -> list[Lease]:
        rows = self._read(
            lambda db: db.execute(
                f"SELECT name, owner, epoch, expires_ms, owner = '' OR expires_ms <= {_NOW_MS} "
                f"FROM leases WHERE {where} ORDER BY name",
                args,
            ).fetchall()
        )
        return [Lease(n, o, e, x, bool(expired)) for n, o, e, x, expired in rows]

    def get_lease(self, name: str) -> Lease | None:
        found = self._read_leases("name = ?", (name,))
        return found[0] if found else None

    def scan_leases(self, prefix: str = "") -> list[Lease]:
        return self._read_leases("substr(name, 1, ?) = ?", (len(prefix), prefix))

    def close(self) -> None:
        with self._readers_lock:
            self._closed = True
            idle, self._idle_readers = self._idle_readers, []
        for db in idle:
            db.close()
        with self._lock:
            self._db.close()


# A driver error that escapes an operation: the file locked past the busy timeout, a full disk.
instrument(
    SqliteStore, "sqlite", {StoreUnavailable: "unavailable", sqlite3.Error: "sqlite"}, timed=False
)
trace_store(SqliteStore, "sqlite", TRACED)  # each operation a span of the call (tracing on)
