"""tests/support/postgres.py: an unreachable PostgreSQL fails the PostgreSQL tests under
CI=true and skips them elsewhere, with the end of the run naming the skipped suites and why.
Runs pytest on the store suite's PostgreSQL tests in a child process, against a port where
nothing listens."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
NOWHERE = "postgresql://postgres:s3cret@127.0.0.1:1/none"


def run_store_suite(ci: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MAHJONG_TEST_POSTGRES_URL": NOWHERE, "CI": ci}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "tests/unit/infra/test_store.py",
            "-k",
            "postgres and (logs or migrated_once)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_unreachable_postgres_skips_and_the_summary_says_why():
    out = run_store_suite("")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 skipped" in out.stdout
    assert "suites skipped: no PostgreSQL" in out.stdout
    assert "tests/unit/infra/test_store.py: 2 test(s) skipped: PostgreSQL unreachable" in (
        out.stdout
    )
    assert "postgres:***@127.0.0.1:1/none" in out.stdout and "s3cret" not in out.stdout


def test_unreachable_postgres_fails_under_ci():
    out = run_store_suite("true")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "2 errors" in out.stdout and "skipped" not in out.stdout
    assert "CI=true: the PostgreSQL tests must run" in out.stdout
