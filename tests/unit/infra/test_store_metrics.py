"""Store metrics (infra/store/metrics.py) on the real backends: every PostgreSQL operation
lands in ``mahjong_store_operation_seconds`` under its name; a lost PostgreSQL connection
and a SQLite driver error count in ``mahjong_store_errors_total``, the store's own answers
(Conflict, AlreadyExists) do not; a transaction PostgreSQL aborted with SQLSTATE 40001 and
that was run again counts in ``mahjong_store_retries_total``."""

from __future__ import annotations

import psycopg
import pytest
from prometheus_client import REGISTRY

from infra.store import AlreadyExists, Conflict, StoreUnavailable, open_store
from infra.store.sqlite import SqliteStore


def _count(operation: str, backend: str) -> float:
    return (
        REGISTRY.get_sample_value(
            "mahjong_store_operation_seconds_count", {"backend": backend, "operation": operation}
        )
        or 0.0
    )


def _errors(operation: str, backend: str, error: str) -> float:
    labels = {"backend": backend, "operation": operation, "error": error}
    return REGISTRY.get_sample_value("mahjong_store_errors_total", labels) or 0.0


def test_every_postgres_operation_is_measured(postgres_url):
    backend = "postgres"
    store = open_store(postgres_url)
    calls = {
        "put": lambda: store.put("ns", "k", b"v"),
        "get": lambda: store.get("ns", "k"),
        "update": lambda: store.update("ns", "k", lambda old: (old + b"!", None)),
        "scan": lambda: list(store.scan("ns")),
        "append": lambda: store.append("log", b"e"),
        "read_log": lambda: store.read_log("log"),
        "acquire_lease": lambda: store.acquire_lease("lease", "me", 1000),
        "clock_ms": store.clock_ms,
        "transaction": lambda: store.transaction(lambda conn: None),
    }
    for operation, call in calls.items():
        before = _count(operation, backend)
        call()
        assert _count(operation, backend) == before + 1, operation
    # update runs inside one measured operation, not also as a "transaction"
    before = _count("transaction", backend)
    store.update("ns", "k", lambda old: (old, None))
    assert _count("transaction", backend) == before
    store.close()


def test_sqlite_operations_are_not_timed(tmp_path):
    """Only their errors are counted (the histogram would cost a tenth of a read)."""
    store = SqliteStore(tmp_path / "s.db")
    store.put("ns", "k", b"v")
    store.get("ns", "k")
    assert _count("get", "sqlite") == 0 and _count("put", "sqlite") == 0


def test_the_stores_own_refusals_are_not_errors(shared_backend):
    backend = shared_backend.kind  # the backend label: sqlite, postgres
    store = shared_backend.open()
    store.create("ns", "k", b"v")
    before = _errors("create", backend, "unavailable"), _errors("put", backend, "unavailable")
    with pytest.raises(AlreadyExists):
        store.create("ns", "k", b"v")
    with pytest.raises(Conflict):
        store.put("ns", "k", b"w", expected_version=7)
    after = _errors("create", backend, "unavailable"), _errors("put", backend, "unavailable")
    assert after == before


def test_a_lost_postgres_connection_counts_an_error(postgres_url):
    with open_store(postgres_url, pool_size=1) as store:
        store.put("ns", "k", b"before")
        pid = store.transaction(lambda c: c.info.backend_pid)

        def cut_off(old):
            with psycopg.connect(postgres_url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            return b"after", None

        before = _errors("update", "postgres", "unavailable")
        with pytest.raises(StoreUnavailable):
            store.update("ns", "k", cut_off)
        assert _errors("update", "postgres", "unavailable") == before + 1


def test_a_serialization_failure_is_counted_as_retried(postgres_url):
    """The server aborts the first attempt with SQLSTATE 40001; the store runs it again."""
    labels = {"backend": "postgres", "sqlstate": "40001"}
    attempts = []

    def tx(conn):
        attempts.append(1)
        if len(attempts) == 1:
            conn.execute("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$")
        return len(attempts)

    with open_store(postgres_url) as store:
        before = REGISTRY.get_sample_value("mahjong_store_retries_total", labels) or 0.0
        assert store.transaction(tx) == 2
        assert REGISTRY.get_sample_value("mahjong_store_retries_total", labels) == before + 1


def test_a_sqlite_driver_error_counts_an_error(tmp_path):
    store = SqliteStore(tmp_path / "s.db")
    store.close()
    before = _errors("get", "sqlite", "sqlite")
    with pytest.raises(Exception, match="closed"):
        store.get("ns", "k")
    assert _errors("get", "sqlite", "sqlite") == before + 1
