"""The web table in a real browser: headless Chromium (Debian's, driven by playwright-core from
web/node_modules) plays a person's hand at a real local stack over Connect and over gRPC-Web
(web/tests/table.test.mjs: create a table, click the offered options to the hand's end, reload
mid-hand, the result's breakdown and the wall's verification, a spectator, a forged token; a
flipped-百搭 table showing its indicator and wild kind).
Screenshots land in web/test-artifacts/ (not in git). ``make test`` installs Chromium and the
npm packages and builds the page first."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from services.gateway.client.stack import LocalStack

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WEB = Path(__file__).resolve().parents[2] / "web"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def _check_prerequisites() -> None:
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


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
def test_a_person_plays_a_hand_in_the_browser(protocol):
    _check_prerequisites()
    # bots think a little, as at a real table (and the screenshots catch the game moving)
    with LocalStack(extra_args={"gateway": ["--bot-delay-ms", "120"]}) as stack:
        run = subprocess.run(
            ["node", "--test", "--test-reporter=spec", "tests/table.test.mjs"],
            cwd=WEB,
            env={
                **os.environ,
                "WEB_URL": stack.web,
                "WEB_PROTOCOL": protocol,
                "ARTIFACTS": str(WEB / "test-artifacts"),
            },
            capture_output=True,
            text=True,
            timeout=400,
        )
        logs = "" if run.returncode == 0 else stack.log_tail("gateway")
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}\ngateway log:\n{logs}"
    for name in ("mid-hand", "result", "spectator", "forged-token", "baida-flipped"):
        assert (WEB / "test-artifacts" / f"{protocol}-{name}.png").stat().st_size > 10_000
