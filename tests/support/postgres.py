"""PostgreSQL for tests: where it is, a database of this test session's own, and a schema of
each test's own inside it.

* The server: ``MAHJONG_TEST_POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``),
  a URL of a database this session may connect to and create databases from.
* Unreachable: under ``CI=true`` every test that needs it fails (CI must never pass by silently
  skipping the cluster store); elsewhere those tests skip, and the end of the run lists them
  by file with the reason (:func:`skipped_summary`, called by tests/conftest.py).
* Isolation (other agents and test processes share the server): each pytest process (each
  xdist worker) creates one database named ``mj_test_<pid>_<random>`` and drops it at the end;
  each test gets a fresh schema in it (:func:`schema_url`), dropped after the test. Nothing
  this code did not create is ever dropped.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import psycopg
import pytest

from infra.store import redact_url

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"
SKIP_PREFIX = "PostgreSQL unreachable"


def server_url() -> str:
    return os.environ.get("MAHJONG_TEST_POSTGRES_URL") or DEFAULT_URL


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def probe(url: str, timeout: float = 3.0) -> str | None:
    """None when ``url`` answers, else why not (one line, password hidden)."""
    try:
        with psycopg.connect(url, connect_timeout=max(1, int(timeout)), autocommit=True) as c:
            c.execute("SELECT 1")
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"{SKIP_PREFIX} at {redact_url(url)}: {first}"
    return None


def unavailable(reason: str) -> None:
    """Fail under CI, skip elsewhere (the run's summary lists the skip)."""
    if in_ci():
        pytest.fail(
            f"{reason} (CI=true: the PostgreSQL tests must run; set MAHJONG_TEST_POSTGRES_URL)",
            pytrace=False,
        )
    pytest.skip(reason)


def with_path(url: str, dbname: str | None = None, **params: str) -> str:
    """``url`` naming database ``dbname`` and with extra libpq query parameters."""
    parts = urlsplit(url)
    path = f"/{dbname}" if dbname is not None else parts.path
    query = "&".join(q for q in (parts.query, urlencode(params, quote_via=quote)) if q)
    return urlunsplit((parts.scheme, parts.netloc, path, query, parts.fragment))


class TestDatabase:
    """A database of this process's own on the test server, with schemas per test."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.name = f"mj_test_{os.getpid()}_{secrets.token_hex(4)}"
        with psycopg.connect(server, autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{self.name}"')
        self.url = with_path(server, self.name)

    @contextmanager
    def schema(self) -> Iterator[str]:
        """A fresh schema; yields a URL whose connections use it (search_path)."""
        name = "t_" + secrets.token_hex(6)
        with psycopg.connect(self.url, autocommit=True) as c:
            c.execute(f'CREATE SCHEMA "{name}"')
        try:
            yield schema_url(self.url, name)
        finally:
            with psycopg.connect(self.url, autocommit=True) as c:
                c.execute(f'DROP SCHEMA "{name}" CASCADE')

    def drop(self) -> None:
        with psycopg.connect(self.server, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def schema_url(url: str, schema: str) -> str:
    return with_path(url, options=f"-c search_path={schema}")


def skipped_summary(terminalreporter) -> None:
    """At the end of a run: which test files skipped PostgreSQL tests, how many, and why."""
    by_file: dict[str, tuple[int, str]] = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = getattr(report, "longrepr", None)
        if not (isinstance(longrepr, tuple) and len(longrepr) == 3):
            continue
        reason = str(longrepr[2]).removeprefix("Skipped: ")
        if not reason.startswith(SKIP_PREFIX):
            continue
        path = report.nodeid.split("::", 1)[0]
        count, _ = by_file.get(path, (0, reason))
        by_file[path] = (count + 1, reason)
    if not by_file:
        return
    terminalreporter.section("suites skipped: no PostgreSQL", sep="-", yellow=True)
    for path, (count, reason) in sorted(by_file.items()):
        terminalreporter.line(f"{path}: {count} test(s) skipped: {reason}")
    terminalreporter.line(
        "set MAHJONG_TEST_POSTGRES_URL to a reachable server to run them (under CI=true an "
        "unreachable server fails these tests instead)"
    )
