"""Fixtures shared by every test folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.ruleset import load_ruleset
from tests.support import postgres, stores
from tests.support.compiled import stale_extensions

VECTORS = Path(__file__).parent / "vectors"


def pytest_sessionstart(session):
    stale = stale_extensions()
    if stale:
        pytest.exit(
            "compiled modules are older than their source (Python would run the old code): "
            f"{', '.join(stale)}; `make install` rebuilds them, `make pure` removes them",
            returncode=2,
        )


# The order tests are handed to the workers (make test: pytest-xdist's ``--dist loadfile
# --no-loadscope-reorder`` gives each worker the next file in this order as it finishes one):
# the longest first, so no long file starts last and runs alone while the other workers idle
# (the suite's tail), and the many short unit tests fill the gaps at the end.
RUN_ORDER = ("tests/e2e/", "tests/web/", "tests/clients/", "tests/integration/", "tests/service/")


def run_rank(item: pytest.Item) -> int:
    """0 for the long runs (marked slow), then by folder as :data:`RUN_ORDER`, unit tests last."""
    if item.get_closest_marker("slow"):
        return 0
    path = item.nodeid
    return next((i + 1 for i, p in enumerate(RUN_ORDER) if path.startswith(p)), len(RUN_ORDER) + 1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=run_rank)  # stable: a module's tests stay together, in their order


def load_vectors(name: str) -> list[dict]:
    """The rule vectors copied from ../shared/vectors (one JSON object per line)."""
    with (VECTORS / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture
def qiaoma():
    return load_ruleset("shanghai-qiaoma")


@pytest.fixture
def classic():
    return load_ruleset("shanghai-classic")


# --- PostgreSQL (tests/support/postgres.py): a database per test process, a schema per test --
@pytest.fixture(scope="session")
def postgres_database():
    """This test process's own database on the test server; skipped (failed under CI=true)
    when the server cannot be reached."""
    url = postgres.server_url()
    why = postgres.probe(url)
    if why:
        postgres.unavailable(why)
    db = postgres.TestDatabase(url)
    yield db
    db.drop()


@pytest.fixture
def postgres_url(postgres_database):
    """The URL of a fresh, empty schema for this test (dropped after it)."""
    with postgres_database.schema() as url:
        yield url


def pytest_terminal_summary(terminalreporter):
    postgres.skipped_summary(terminalreporter)


@pytest.fixture(params=stores.KINDS)
def backend(request, tmp_path):
    """Each store backend in turn (tests/support/stores.py); ``backend.open()`` opens a store."""
    b = stores.backend_for(request, tmp_path)
    yield b
    b.close()


@pytest.fixture(params=stores.SHARED_KINDS)
def shared_backend(request, tmp_path):
    """The backends several processes can share (SQLite, PostgreSQL)."""
    b = stores.backend_for(request, tmp_path)
    yield b
    b.close()


@pytest.fixture
def store(backend):
    """A store of each backend in turn."""
    return backend.open()
