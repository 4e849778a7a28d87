"""PostgreSQL store backend: the cluster's system of record (psycopg 3 with a psycopg_pool
connection pool, thread-safe; many replicas of a service share one database).

* **Schema**: created at its current version by the service itself on start, upgraded by the
  steps a later release adds (:meth:`PostgresStore.migrate`, :mod:`infra.store.schema`: one
  version row per component in ``store_schema``), under a transaction-scoped advisory lock,
  so services starting at once on an empty database wait for each other instead of failing.
* **Transactions**: every operation is one transaction at READ COMMITTED with explicit row
  locks, a single statement (no BEGIN/COMMIT round trips) where one suffices (reads, appends,
  unconditional puts, creates and deletes). ``update`` reads with ``SELECT … FOR UPDATE`` and
  inserts an absent key with ``ON CONFLICT DO NOTHING`` (a concurrent insert makes it start
  over, so ``fn`` sees the winner's value: no lost update); ``append`` takes the log's next
  number from its head row (``store_log_heads``, an upsert that locks that row), never
  ``MAX(seq)+1``, so concurrent appenders get distinct numbers with no gaps.
* **Retries**: serialization failures and deadlocks (SQLSTATE 40001, 40P01) run the transaction
  again, at most ``retries`` times (``fn`` must therefore be a pure function of its input).
* **Leases and fences**: a lease is a row of ``store_leases`` judged by the server's clock
  (``clock_timestamp()``); ``acquire_lease`` locks it ``FOR UPDATE``, and every fenced write
  first reads it ``FOR SHARE`` in its own transaction, so a takeover and a write under the old
  epoch are strictly ordered: the write either commits before the takeover or is refused.
* **Paused clients**: a replica stopped between two statements of a transaction (a GC pause,
  SIGSTOP, a frozen container) would hold that transaction's row locks for as long as it is
  stopped: a lease row it locked would stall every other replica's takeover of that table,
  and the scan of all the tables behind it. Each session therefore has
  ``idle_in_transaction_session_timeout`` (:data:`IDLE_TRANSACTION_TIMEOUT_MS`): the server
  ends a transaction left idle that long, rolled back whole, and the paused client finds its
  connection gone (StoreUnavailable) when it wakes. No operation here waits on its client
  between statements for more than a moment.
* **Outages**: a lost connection, a server that went away or a pool with no free connection in
  time is :class:`~infra.store.base.StoreUnavailable` (gRPC UNAVAILABLE). A transaction is
  atomic, so a write is applied whole or not at all; reads are tried once more on a fresh
  connection first. Reconnecting (a failover, a restart): psycopg_pool's own backoff between
  two attempts to replace a lost connection doubles from 1 s without a bound below its 5
  minutes, so the store would find a database back after a 16 s failover only at 31 s; this
  pool's (:class:`_Pool`) starts at 0.2 s and never waits more than
  :data:`RECONNECT_MAX_DELAY_S` (tests/e2e/test_database_failover.py measures it).

URLs: ``postgresql://user@host:port/dbname`` (``postgres://`` too), with any libpq parameter as a
query (``?sslmode=require``). Give a password through ``PGPASSWORD`` or ``~/.pgpass`` rather than
in the URL; wherever the URL is shown, :func:`infra.store.redact_url` hides it.
"""

from __future__ import annotations

import random
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout
from psycopg_pool.base import AttemptWithBackoff

from infra.store import pg_leases as leases
from infra.store.base import (
    AlreadyExists,
    Conflict,
    Fence,
    Fenced,
    Lease,
    Record,
    Store,
    StoreError,
    StoreUnavailable,
    check_fence,
    check_names,
    has_nul,
)
from infra.store.metrics import STORE_RETRIES, TRACED, instrument
from infra.store.pg_logs import append_statement
from infra.store.schema import STORE_VERSION, Schema, as_schema, scripts_to_run
from infra.store.urls import redact_url
from infra.tracing import trace_store

# How long the server lets a session sit inside a transaction without a statement before it
# ends the session (PostgreSQL's idle_in_transaction_session_timeout): well past any pause
# between two statements of a live transaction, well below a lease's takeover budget.
IDLE_TRANSACTION_TIMEOUT_MS = 2000
# The longest pause between two attempts to reconnect while the database is away (a failover
# manager promoting a standby, a restart): how late the store may notice it is back.
RECONNECT_MAX_DELAY_S = 1.0

R = TypeVar("R")

# The store's own tables as they are now, created at once on a new database; the version row
# says which they are, for the upgrade steps a later release adds (none yet).
STORE_SCHEMA = Schema(
    version=STORE_VERSION,
    create="""
    CREATE TABLE store_records (
        namespace text COLLATE "C" NOT NULL,
        key       text COLLATE "C" NOT NULL,
        value     bytea  NOT NULL,
        version   bigint NOT NULL,
        PRIMARY KEY (namespace, key)
    );
    CREATE TABLE store_log_heads (
        log  text COLLATE "C" PRIMARY KEY,
        last bigint NOT NULL
    );
    CREATE TABLE store_logs (
        log   text COLLATE "C" NOT NULL,
        seq   bigint NOT NULL,
        entry bytea  NOT NULL,
        PRIMARY KEY (log, seq)
    );
    CREATE TABLE store_leases (
        name       text COLLATE "C" PRIMARY KEY,
        owner      text   NOT NULL,
        epoch      bigint NOT NULL,
        expires_ms bigint NOT NULL
    );
    """,
)
# pg_advisory_xact_lock key of schema migrations (any fixed number; advisory locks are per
# database, so databases never wait for each other).
MIGRATION_LOCK = zlib.crc32(b"mahjong/store/migrate")
RETRY_SQLSTATES = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


class _Raced(Exception):
    """``update`` of an absent key: another transaction inserted it first; start over with its
    value."""


class _Backoff(AttemptWithBackoff):
    """psycopg_pool's reconnection attempts, from 0.2 s apart, doubling to at most
    RECONNECT_MAX_DELAY_S (theirs double from 1 s to the pool's reconnect_timeout)."""

    INITIAL_DELAY = 0.2

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, RECONNECT_MAX_DELAY_S)


class _Pool(ConnectionPool):
    """The connection pool, reconnecting with :class:`_Backoff`: psycopg_pool (3.3, pinned)
    starts a chain of attempts to add a connection with ``attempt=None``; this gives the chain
    its backoff instead, which every later attempt of it keeps."""

    def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        super()._add_connection(attempt or _Backoff(timeout=self.reconnect_timeout), growing)


def _like_prefix(prefix: str) -> str:
    """A LIKE pattern matching keys that start with ``prefix`` (its wildcards escaped)."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class PostgresStore(Store):
    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 8,
        retries: int = 8,
        connect_timeout: float = 10.0,
        acquire_timeout: float = 10.0,
        idle_transaction_timeout_ms: int = IDLE_TRANSACTION_TIMEOUT_MS,
    ) -> None:
        if pool_size < 1:
            raise ValueError(f"store pool size {pool_size} must be at least 1")
        if idle_transaction_timeout_ms < 0:
            raise ValueError(
                f"idle transaction timeout {idle_transaction_timeout_ms} ms must be 0 (none) "
                "or more"
            )
        self.url = url
        self.shown_url = redact_url(url)
        self.retries = retries
        self.acquire_timeout = acquire_timeout
        try:  # once alone first: a clear reason at once, not a pool retrying in the dark
            psycopg.connect(url, connect_timeout=max(1, int(connect_timeout))).close()
        except psycopg.Error as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StoreUnavailable(
                f"cannot connect to the PostgreSQL store {self.shown_url}: {first}"
            ) from None
        self._pool = _Pool(
            url,
            min_size=min(2, pool_size),
            max_size=pool_size,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(connect_timeout))},
            configure=lambda conn: conn.execute(
                "SELECT set_config('idle_in_transaction_session_timeout', %s, false)",
                (str(int(idle_transaction_timeout_ms)),),
            ),
            open=False,
            name="mahjong-store",
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreUnavailable(
                f"cannot connect to the PostgreSQL store {self.shown_url} within "
                f"{connect_timeout:g}s"
            ) from exc
        try:
            self.migrate("store", STORE_SCHEMA)
        except BaseException:
            self._pool.close()
            raise

    # --- transactions -----------------------------------------------------------------------
    def transaction(
        self,
        fn: Callable[[psycopg.Connection], R],
        *,
        read_only: bool = False,
        single: bool = False,
    ) -> R:
        """Run ``fn(connection)`` in one transaction (READ COMMITTED), committed when it
        returns, rolled back when it raises. Serialization failures and deadlocks run it again
        (at most ``retries`` times); a lost connection is StoreUnavailable (a ``read_only`` one
        is tried once more first). ``single``: ``fn`` runs one statement, which is its own
        transaction (no BEGIN/COMMIT round trips; implied by ``read_only``). For modules that
        keep their own tables in this database (the ledger); measured as the operation
        ``transaction`` (:mod:`infra.store.metrics`)."""
        return self._transaction(fn, read_only=read_only, single=single)

    def _transaction(
        self,
        fn: Callable[[psycopg.Connection], R],
        *,
        read_only: bool = False,
        single: bool = False,
    ) -> R:
        """:meth:`transaction` for this class's own operations (each measured as itself)."""
        lost = 0
        attempt = 0
        bare = single or read_only
        while True:
            try:
                with self._pool.connection(timeout=self.acquire_timeout) as conn:
                    if bare:
                        return fn(conn)
                    with conn.transaction():
                        return fn(conn)
            except RETRY_SQLSTATES as exc:
                STORE_RETRIES.labels("postgres", exc.sqlstate or "").inc()
                attempt += 1
                if attempt > self.retries:
                    raise StoreUnavailable(
                        f"the store stayed contended after {self.retries} retries "
                        f"({exc.sqlstate}): retry"
                    ) from exc
                time.sleep(random.uniform(0, 0.002 * 2 ** min(attempt, 6)))
            except PoolTimeout as exc:
                raise StoreUnavailable(
                    f"no free connection to the store {self.shown_url} within "
                    f"{self.acquire_timeout:g}s"
                ) from exc
            except psycopg.OperationalError as exc:
                lost += 1
                if read_only and lost == 1:
                    continue
                raise StoreUnavailable(
                    f"lost the connection to the store {self.shown_url}: "
                    f"{type(exc).__name__}; nothing half-written, retry"
                ) from exc
            except psycopg.DataError as exc:  # e.g. a NUL character in a text key
                raise StoreError(f"the store refused a value: {exc}") from exc

    def migrate(self, component: str, schema: Schema | Sequence[str]) -> int:
        """Bring ``component``'s tables to ``schema``'s version (:mod:`infra.store.schema`; a
        list of steps from nothing is a schema too); returns the version it was at. Under an
        advisory lock held for the transaction: a second process starting at once waits, then
        finds the schema migrated and does nothing."""
        schema = as_schema(schema)

        def tx(conn: psycopg.Connection) -> int:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS store_schema ("
                " component text PRIMARY KEY, version integer NOT NULL,"
                " migrated_at timestamptz NOT NULL DEFAULT now())"
            )
            row = conn.execute(
                "SELECT version FROM store_schema WHERE component = %s", (component,)
            ).fetchone()
            before = row[0] if row else 0
            for script in scripts_to_run(component, schema, before):
                conn.execute(script)
            if before < schema.version:
                conn.execute(
                    "INSERT INTO store_schema (component, version) VALUES (%s, %s) "
                    "ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version, "
                    "migrated_at = now()",
                    (component, schema.version),
                )
            return before

        return self._transaction(tx)

    def schema_version(self, component: str = "store") -> int:
        def tx(conn: psycopg.Connection) -> int:
            row = conn.execute(
                "SELECT version FROM store_schema WHERE component = %s", (component,)
            ).fetchone()
            return row[0] if row else 0

        return self._transaction(tx, read_only=True)

    def check_fence(self, conn: psycopg.Connection, fence: Fence | None) -> None:
        """Within a transaction: Fenced unless ``fence`` is current. Holds the lease row
        FOR SHARE until the transaction ends, so no takeover can commit in between."""
        if fence is not None:
            current = (
                None if has_nul(fence.lease) else leases.lease_row(conn, fence.lease, "FOR SHARE")
            )
            check_fence(fence, current)

    @staticmethod
    def _row(conn: psycopg.Connection, namespace: str, key: str, lock: bool) -> Record | None:
        row = conn.execute(
            "SELECT value, version FROM store_records WHERE namespace = %s AND key = %s"
            + (" FOR UPDATE" if lock else ""),
            (namespace, key),
        ).fetchone()
        return Record(bytes(row[0]), row[1]) if row else None

    @staticmethod
    def _insert(conn: psycopg.Connection, namespace: str, key: str, value: bytes) -> bool:
        """Insert version 1 if the key is absent; False when it exists (or a concurrent
        transaction just inserted it)."""
        cur = conn.execute(
            "INSERT INTO store_records (namespace, key, value, version) VALUES (%s, %s, %s, 1) "
            "ON CONFLICT DO NOTHING",
            (namespace, key, bytes(value)),
        )
        return cur.rowcount == 1

    @staticmethod
    def _replace(
        conn: psycopg.Connection, namespace: str, key: str, value: bytes, version: int
    ) -> None:
        conn.execute(
            "UPDATE store_records SET value = %s, version = %s WHERE namespace = %s AND key = %s",
            (bytes(value), version, namespace, key),
        )

    # --- records ----------------------------------------------------------------------------
    def get(self, namespace: str, key: str) -> Record | None:
        if has_nul(namespace, key):
            return None
        return self._transaction(lambda c: self._row(c, namespace, key, False), read_only=True)

    def create(
        self, namespace: str, key: str, value: bytes, *, fence: Fence | None = None
    ) -> Record:
        check_names(namespace, key)

        def tx(conn: psycopg.Connection) -> Record:
            self.check_fence(conn, fence)
            if not self._insert(conn, namespace, key, value):
                raise AlreadyExists(f"{namespace}/{key} exists")
            return Record(bytes(value), 1)

        return self._transaction(tx, single=fence is None)

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

        def tx(conn: psycopg.Connection) -> Record:
            self.check_fence(conn, fence)
            if expected_version is None:
                (version,) = conn.execute(
                    "INSERT INTO store_records (namespace, key, value, version) "
                    "VALUES (%s, %s, %s, 1) ON CONFLICT (namespace, key) DO UPDATE "
                    "SET value = EXCLUDED.value, version = store_records.version + 1 "
                    "RETURNING version",
                    (namespace, key, bytes(value)),
                ).fetchone()
                return Record(bytes(value), version)
            old = self._row(conn, namespace, key, True)
            current = old.version if old else 0
            if expected_version != current:
                raise Conflict(f"{namespace}/{key} is at version {current}, not {expected_version}")
            if old is not None:
                self._replace(conn, namespace, key, value, current + 1)
            elif not self._insert(conn, namespace, key, value):
                raise Conflict(f"{namespace}/{key} was just created, not at version 0")
            return Record(bytes(value), current + 1)

        return self._transaction(tx, single=expected_version is None and fence is None)

    def update(
        self,
        namespace: str,
        key: str,
        fn: Callable[[bytes | None], tuple[bytes | None, R]],
        *,
        fence: Fence | None = None,
    ) -> R:
        check_names(namespace, key)

        def tx(conn: psycopg.Connection) -> R:
            self.check_fence(conn, fence)
            old = self._row(conn, namespace, key, True)
            new, result = fn(old.value if old else None)
            if new is not None:
                if old is not None:
                    self._replace(conn, namespace, key, new, old.version + 1)
                elif not self._insert(conn, namespace, key, new):
                    raise _Raced
            return result

        for _ in range(self.retries + 1):
            try:
                return self._transaction(tx)
            except _Raced:
                continue
        raise StoreUnavailable(f"{namespace}/{key} kept being created concurrently: retry")

    def delete(self, namespace: str, key: str, *, fence: Fence | None = None) -> bool:
        if has_nul(namespace, key):
            return False

        def tx(conn: psycopg.Connection) -> bool:
            self.check_fence(conn, fence)
            cur = conn.execute(
                "DELETE FROM store_records WHERE namespace = %s AND key = %s", (namespace, key)
            )
            return cur.rowcount > 0

        return self._transaction(tx, single=fence is None)

    def scan(self, namespace: str, prefix: str = "") -> Iterator[tuple[str, Record]]:
        if has_nul(namespace, prefix):
            return iter([])

        def tx(conn: psycopg.Connection) -> list[Any]:
            return conn.execute(
                "SELECT key, value, version FROM store_records WHERE namespace = %s "
                "AND key LIKE %s ORDER BY key",
                (namespace, _like_prefix(prefix)),
            ).fetchall()

        rows = self._transaction(tx, read_only=True)
        return iter([(k, Record(bytes(v), ver)) for k, v, ver in rows])

    def namespaces(self, prefix: str = "") -> list[str]:
        if has_nul(prefix):
            return []

        def tx(conn: psycopg.Connection) -> list[Any]:
            return conn.execute(
                "SELECT DISTINCT namespace FROM store_records WHERE namespace LIKE %s "
                "ORDER BY namespace",
                (_like_prefix(prefix),),
            ).fetchall()

        return [ns for (ns,) in self._transaction(tx, read_only=True)]

    # --- logs -------------------------------------------------------------------------------
    def _append(
        self,
        log: str,
        entries: list[bytes],
        expected_seq: int | None,
        fence: Fence | None,
        records: dict[tuple[str, str], bytes],
    ) -> int:
        if fence is not None and has_nul(fence.lease):
            raise Fenced(fence, None)
        sql, args = append_statement(log, entries, expected_seq, fence, records)

        def tx(conn: psycopg.Connection) -> list[Any]:
            return conn.execute(sql, args).fetchall()

        rows = self._transaction(tx, single=True)
        if rows and rows[0][1] is None:
            return max(seq for seq, _ in rows)
        if fence is not None:  # epochs only rise: stale then is stale now
            current = self.get_lease(fence.lease)
            if current is None or current.epoch != fence.epoch or not current.owner:
                raise Fenced(fence, current)
        missed = sorted((seq, bytes(entry)) for seq, entry in rows)
        raise Conflict(f"log {log} is no longer at {expected_seq}", missed)

    def delete_log(self, log: str, *, fence: Fence | None = None) -> int:
        if has_nul(log):
            return 0

        def tx(conn: psycopg.Connection) -> int:
            self.check_fence(conn, fence)
            conn.execute("DELETE FROM store_log_heads WHERE log = %s", (log,))
            return conn.execute("DELETE FROM store_logs WHERE log = %s", (log,)).rowcount

        return self._transaction(tx)

    def read_log(
        self, log: str, after: int = 0, limit: int | None = None
    ) -> list[tuple[int, bytes]]:
        if has_nul(log):
            return []

        def tx(conn: psycopg.Connection) -> list[Any]:
            return conn.execute(
                "SELECT seq, entry FROM store_logs WHERE log = %s AND seq > %s ORDER BY seq "
                "LIMIT %s",
                (log, after, limit),
            ).fetchall()

        return [(seq, bytes(entry)) for seq, entry in self._transaction(tx, read_only=True)]

    # --- leases (their SQL: infra.store.pg_leases) -----------------------------------------
    def clock_ms(self) -> int:
        return self._transaction(leases.now_ms, read_only=True)

    def acquire_lease(self, name: str, owner: str, ttl_ms: int) -> Lease:
        check_names(name, owner)
        return self._transaction(lambda conn: leases.acquire(conn, name, owner, ttl_ms))

    def renew_lease(self, lease: Lease, ttl_ms: int) -> Lease:
        return self._transaction(lambda conn: leases.renew(conn, lease, ttl_ms))

    def release_lease(self, lease: Lease) -> bool:
        return self._transaction(lambda conn: leases.release(conn, lease))

    def get_lease(self, name: str) -> Lease | None:
        if has_nul(name):
            return None
        found = self._transaction(
            lambda conn: leases.read_leases(conn, "name = %s", (name,)), read_only=True
        )
        return found[0] if found else None

    def scan_leases(self, prefix: str = "") -> list[Lease]:
        if has_nul(prefix):
            return []
        pattern = _like_prefix(prefix)
        return self._transaction(
            lambda conn: leases.read_leases(conn, "name LIKE %s", (pattern,)), read_only=True
        )

    def close(self) -> None:
        self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.shown_url!r})"


instrument(PostgresStore, "postgres")
trace_store(PostgresStore, "postgresql", TRACED)  # each operation a span of the call (tracing on)
