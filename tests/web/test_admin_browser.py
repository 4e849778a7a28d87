"""The operator's console (?admin) in a real browser: headless Chromium (Debian's, driven by
playwright-core) against a real local stack (web/tests/admin.test.mjs): an operator signs in
with the operator role of the development issuer, lists the live tables, inspects one, ends it
with a reason, finds a player by name, suspends and lifts them, and reads the audit log
showing those actions. Screenshot: web/test-artifacts/admin-console.png."""

from __future__ import annotations

import os
import subprocess

import pytest

from devkit.stack import SIGNED_IN_STACK
from tests.support.stacks import local_stack
from tests.web.test_browser import WEB, _check_prerequisites, _logs

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_the_operator_console():
    _check_prerequisites()
    artifacts = WEB / "test-artifacts"
    (artifacts / "admin-console.png").unlink(missing_ok=True)
    # a quick-match queue fills with bots after 1 s: the player's table
    extra = {"gateway": ["--bot-delay-ms", "200"], "matchmaking": ["--bot-fill-seconds", "1"]}
    with local_stack(SIGNED_IN_STACK, extra_args=extra) as stack:
        env = {
            **os.environ,
            "WEB_URL": stack.web,
            "MM_URL": stack.matchmaking_web,
            "ISSUER_URL": stack.issuer_url,
            "ARTIFACTS": str(artifacts),
        }
        run = subprocess.run(
            ["node", "--test", "--test-reporter=spec", "tests/admin.test.mjs"],
            cwd=WEB,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        logs = "" if run.returncode == 0 else _logs(stack)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}\n{logs}"
    assert (artifacts / "admin-console.png").stat().st_size > 10_000
