"""Fixtures shared by every test folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.ruleset import load_ruleset
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
