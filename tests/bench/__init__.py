"""Benchmarks: ``make bench`` (``python -m tests.bench``) runs every ``bench_<area>.py`` module's
``main()``. Each prints its figures and ratios; speed targets live here, never in timed tests.
``MAHJONG_BENCH_SECONDS`` sets the time per measurement (default 1.5).

Peer libraries (PyPI ``mahjong``, ``rlcard``) never enter the main venv (our generated stubs are
the top-level package ``mahjong`` too): :func:`bench_venv` sets up ``.venv-bench`` with them and
:func:`run_peer` runs a peer script there on inputs passed as a JSON file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BENCH_VENV = ROOT / ".venv-bench"


def bench_seconds() -> float:
    return float(os.environ.get("MAHJONG_BENCH_SECONDS", "1.5"))


def rate(fn: Callable[[], int], seconds: float | None = None) -> tuple[float, int]:
    """Run ``fn`` (which returns how many units it did) repeatedly for about ``seconds``;
    returns (units per second, units)."""
    budget = bench_seconds() if seconds is None else seconds
    fn()  # warm up
    done = 0
    start = time.perf_counter()
    while True:
        done += fn()
        elapsed = time.perf_counter() - start
        if elapsed >= budget:
            return done / elapsed, done


@contextmanager
def postgres_url() -> Iterator[str | None]:
    """A throw-away database on the test PostgreSQL server (``MAHJONG_TEST_POSTGRES_URL``,
    tests/support/postgres.py) for one benchmark, dropped afterwards; None (with the reason
    printed) when the server cannot be reached."""
    from tests.support import postgres

    server = postgres.server_url()
    why = postgres.probe(server)
    if why:
        print(f"  (PostgreSQL figures skipped: {why})", flush=True)
        yield None
        return
    db = postgres.TestDatabase(server)
    try:
        yield db.url
    finally:
        db.drop()


def concurrent_rate(make_worker: Callable[[int], Callable[[], int]], clients: int) -> float:
    """Units per second with ``clients`` threads. ``make_worker(i)`` runs in thread ``i`` (open
    its own channel there) and returns the unit of work, a function returning units done."""
    stop = threading.Event()
    counts = [0] * clients
    ready = threading.Barrier(clients + 1)

    def run(i: int) -> None:
        work = make_worker(i)
        work()  # warm up
        ready.wait()
        while not stop.is_set():
            counts[i] += work()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    ready.wait()
    base = sum(counts)
    start = time.perf_counter()
    stop.wait(bench_seconds())
    done = sum(counts) - base
    elapsed = time.perf_counter() - start
    stop.set()
    for t in threads:
        t.join()
    return done / elapsed


def aio_player_channel(address: str, options: list | tuple = ()):
    """An asyncio channel to a gateway's public port as a player: server TLS trusting
    ``MAHJONG_TLS_CA`` or else the development CA (``.data/tls/ca.crt``, made by the
    ServiceProcess that started the gateway); plaintext with ``MAHJONG_INSECURE``."""
    import grpc

    from infra.supervisor import DEV_TLS_ROOT
    from infra.tls import player_credentials

    ca_file = "" if os.environ.get("MAHJONG_TLS_CA") else str(DEV_TLS_ROOT / "ca.crt")
    creds = player_credentials(ca_file)
    if creds is None:
        return grpc.aio.insecure_channel(address, options=list(options))
    return grpc.aio.secure_channel(address, creds, options=list(options))


def bench_venv(requirement: str, probe: str) -> Path | None:
    """The python of ``.venv-bench`` once ``import probe`` works there, installing
    ``requirement`` (e.g. ``"rlcard"``) on first use; None, with the reason printed, when it
    cannot be set up (offline, say), so a benchmark can go on without its comparison."""
    python = BENCH_VENV / "bin" / "python"
    try:
        if not python.exists():
            subprocess.run(
                [sys.executable, "-m", "venv", str(BENCH_VENV)], check=True, capture_output=True
            )
        if subprocess.run([str(python), "-c", f"import {probe}"], capture_output=True).returncode:
            subprocess.run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    requirement,
                ],
                check=True,
                capture_output=True,
                timeout=900,
            )
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"  peer unavailable: cannot set up {BENCH_VENV.name} with {requirement}: {exc}")
        return None
    return python


def run_peer(python: Path, script: str, inputs: Any, *, timeout: float = 600) -> dict | None:
    """Run ``script`` (Python source) with ``python``; it gets the path of a JSON file holding
    ``inputs`` as ``sys.argv[1]`` and prints one JSON object as its last line. The repository
    root is on ``PYTHONPATH``, so a peer script may import our pure domain modules."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "inputs.json"
        data.write_text(json.dumps(inputs), encoding="utf-8")
        path = Path(tmp) / "peer.py"
        path.write_text(script, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
        done = subprocess.run(
            [str(python), str(path), str(data)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    if done.returncode != 0:
        print(f"  peer run failed: {done.stderr[-800:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])
