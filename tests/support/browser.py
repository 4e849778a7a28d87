"""What the browser tests share (tests/web): Debian's headless Chromium driven by
playwright-core from web/node_modules, the node test files of web/tests run against a real local
stack, and the stack's log tails when they fail."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from devkit.stack import LocalStack

WEB = Path(__file__).resolve().parents[2] / "web"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTIFACTS = WEB / "test-artifacts"  # screenshots (not in git)


def check_prerequisites() -> None:
    """Fails naming what is missing (``make test`` installs all of it first)."""
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"Chromium at {CHROMIUM} (make test installs Debian's chromium)")
    if not (WEB / "node_modules" / "playwright-core").is_dir():
        missing.append("web/node_modules (make web runs npm ci)")
    if not (WEB / "dist" / "index.html").is_file():
        missing.append("the built page web/dist (make web)")
    if shutil.which("node") is None:
        missing.append("node")
    assert not missing, "the browser test needs " + "; ".join(missing)


def stack_env(stack: LocalStack, artifacts: Path = ARTIFACTS) -> dict[str, str]:
    """The environment the node tests read: the gateway's and matchmaking's web ports, the
    development issuer, where screenshots go."""
    return {
        **os.environ,
        "WEB_URL": stack.web,
        "MM_URL": stack.matchmaking_web,
        "ISSUER_URL": stack.issuer_url,
        "ARTIFACTS": str(artifacts),
    }


def run_node_tests(
    stack: LocalStack,
    files: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout: float,
    concurrency: int = 1,
    name_pattern: str = "",
) -> subprocess.CompletedProcess:
    """``node --test`` on ``files`` (paths under web/; up to ``concurrency`` files at once,
    only tests whose name matches ``name_pattern`` when given); fails with its output and the
    stack's log tails unless every test passed."""
    pattern = [f"--test-name-pattern={name_pattern}"] if name_pattern else []
    run = subprocess.run(
        ["node", "--test", f"--test-concurrency={concurrency}", "--test-reporter=spec",
         *pattern, *files],
        cwd=WEB,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )  # fmt: skip
    logs = "" if run.returncode == 0 else stack_logs(stack)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}\n{logs}"
    return run


def stack_logs(stack: LocalStack) -> str:
    return "\n".join(f"{n} log:\n{stack.log_tail(n)}" for n in ("gateway", "matchmaking"))


def assert_screenshots(names: Sequence[str], artifacts: Path = ARTIFACTS) -> None:
    """Each screenshot was taken by this run (removed before it: :func:`clear_screenshots`)."""
    for name in names:
        shot = artifacts / f"{name}.png"
        assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot {shot}"


def clear_screenshots(names: Sequence[str], artifacts: Path = ARTIFACTS) -> None:
    for name in names:
        (artifacts / f"{name}.png").unlink(missing_ok=True)
