"""SQLite store backend: the embedded default. One file, WAL journal, nothing to install.

Every write is its own transaction; ``update`` takes the write lock first (``BEGIN IMMEDIATE``),
so read-modify-write is atomic across threads *and* across processes sharing the file.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from shared.store.base import AlreadyExists, Conflict, Record, Store

R = TypeVar("R")

_SCHEMA = """
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
"""


class SqliteStore(Store):
    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 10_000) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(
            self.path,
            isolation_level=None,
            check_same_thread=False,
            timeout=busy_timeout_ms / 1000,
        )
        self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if self.path != ":memory:":
            self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)

    # --- transactions -----------------------------------------------------------------------
    def _tx(self, fn: Callable[[sqlite3.Connection], R]) -> R:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = fn(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result

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
        with self._lock:
            return self._row(self._db, namespace, key)

    def create(self, namespace: str, key: str, value: bytes) -> Record:
        def tx(db: sqlite3.Connection) -> Record:
            if self._row(db, namespace, key) is not None:
                raise AlreadyExists(f"{namespace}/{key} exists")
            return self._write(db, namespace, key, value, 1)

        return self._tx(tx)

    def put(
        self, namespace: str, key: str, value: bytes, *, expected_version: int | None = None
    ) -> Record:
        def tx(db: sqlite3.Connection) -> Record:
            old = self._row(db, namespace, key)
            current = old.version if old else 0
            if expected_version is not None and expected_version != current:
                raise Conflict(f"{namespace}/{key} is at version {current}, not {expected_version}")
            return self._write(db, namespace, key, value, current + 1)

        return self._tx(tx)

    def update(
        self, namespace: str, key: str, fn: Callable[[bytes | None], tuple[bytes | None, R]]
    ) -> R:
        def tx(db: sqlite3.Connection) -> R:
            old = self._row(db, namespace, key)
            new, result = fn(old.value if old else None)
            if new is not None:
                self._write(db, namespace, key, new, (old.version if old else 0) + 1)
            return result

        return self._tx(tx)

    def delete(self, namespace: str, key: str) -> bool:
        def tx(db: sqlite3.Connection) -> bool:
            cur = db.execute(
                "DELETE FROM records WHERE namespace = ? AND key = ?", (namespace, key)
            )
            return cur.rowcount > 0

        return self._tx(tx)

    def scan(self, namespace: str, prefix: str = "") -> Iterator[tuple[str, Record]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT key, value, version FROM records WHERE namespace = ? "
                "AND substr(key, 1, ?) = ? ORDER BY key",
                (namespace, len(prefix), prefix),
            ).fetchall()
        return iter([(k, Record(bytes(v), ver)) for k, v, ver in rows])

    # --- logs -------------------------------------------------------------------------------
    def append(self, log: str, entry: bytes) -> int:
        def tx(db: sqlite3.Connection) -> int:
            (last,) = db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM logs WHERE log = ?", (log,)
            ).fetchone()
            db.execute(
                "INSERT INTO logs (log, seq, entry) VALUES (?, ?, ?)", (log, last + 1, bytes(entry))
            )
            return last + 1

        return self._tx(tx)

    def read_log(
        self, log: str, after: int = 0, limit: int | None = None
    ) -> list[tuple[int, bytes]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, entry FROM logs WHERE log = ? AND seq > ? ORDER BY seq LIMIT ?",
                (log, after, -1 if limit is None else limit),
            ).fetchall()
        return [(seq, bytes(entry)) for seq, entry in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
