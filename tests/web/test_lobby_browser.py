"""The lobby in a real browser: headless Chromium (Debian's, driven by playwright-core) at a
phone's viewport with touch, against one real local stack shared by the lobby's tests
(web/tests/lobby.test.mjs: each signs in players of its own): the phone layout, a purchase
confirmed with its price and its lines in the history, back to a seat from the lobby and from a
second browser of the same player, a room by code between two players with bots, a quick match,
a tournament created with bots, listed, joined, its one hand played by taps and its final
ranking shown, a past hand's replay stepped through from the history.
Screenshots land in web/test-artifacts/lobby-*.png."""

from __future__ import annotations

import os
import subprocess

import pytest

from devkit.stack import SIGNED_IN_STACK
from tests.support.stacks import local_stack
from tests.web.test_browser import WEB, _check_prerequisites, _logs

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LOBBY_TEST = "tests/lobby.test.mjs"
SHOTS = (
    "phone",
    "ask-price",
    "history",
    "your-tables",
    "seat-taken-back",
    "room",
    "tournament",
    "tournament-final",
    "replay",
)


def test_the_lobby_on_a_phone():
    _check_prerequisites()
    artifacts = WEB / "test-artifacts"
    for name in SHOTS:
        (artifacts / f"lobby-{name}.png").unlink(missing_ok=True)
    # bots think a little, as at a real table; a quick-match queue fills with bots after 1 s
    extra = {"gateway": ["--bot-delay-ms", "120"], "matchmaking": ["--bot-fill-seconds", "1"]}
    with local_stack(SIGNED_IN_STACK, extra_args=extra) as stack:
        env = {
            **os.environ,
            "WEB_URL": stack.web,
            "MM_URL": stack.matchmaking_web,
            "ISSUER_URL": stack.issuer_url,
            "ARTIFACTS": str(artifacts),
        }
        run = subprocess.run(
            ["node", "--test", "--test-concurrency=1", "--test-reporter=spec", LOBBY_TEST],
            cwd=WEB,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        logs = "" if run.returncode == 0 else _logs(stack)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}\n{logs}"
    for name in SHOTS:
        assert (artifacts / f"lobby-{name}.png").stat().st_size > 10_000
