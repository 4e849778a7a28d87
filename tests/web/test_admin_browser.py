"""The operator's console (?admin) in a real browser: headless Chromium (Debian's, driven by
playwright-core) against a real local stack (web/tests/admin.test.mjs): an operator signs in
with the operator role of the development issuer, lists the live tables, inspects one, ends it
with a reason, finds a player by name, suspends and lifts them, and reads the audit log
showing those actions. On the same stack, the gateway's console on its web port refuses a
player's session (PERMISSION_DENIED NOT_OPERATOR, checked with matchmaking's CheckSession) and
a forged token (UNAUTHENTICATED). Screenshot: web/test-artifacts/admin-console.png."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
import uuid

import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from mahjong.gateway.v1 import gateway_pb2 as gw
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb

from devkit.stack import SIGNED_IN_STACK
from infra.web_calls import method_infos
from tests.support.stacks import local_stack
from tests.web.test_browser import WEB, _check_prerequisites, _logs

GATEWAY = method_infos(gw.DESCRIPTOR.services_by_name["GatewayService"])
MATCHMAKING = method_infos(pb.DESCRIPTOR.services_by_name["MatchmakingService"])

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
        _gateway_refuses_non_operators(stack)
    assert (artifacts / "admin-console.png").stat().st_size > 10_000


def _gateway_refuses_non_operators(stack) -> None:
    codec = google_protobuf_binary_codec()
    with urllib.request.urlopen(f"{stack.issuer_url}/token?name=Sneak{uuid.uuid4().hex[:6]}") as r:
        id_token = json.load(r)["id_token"]
    with (
        ConnectClientSync(stack.matchmaking_web, codec=codec) as mm,
        ConnectClientSync(stack.web, codec=codec) as gateway,
    ):
        signed = mm.execute_unary(
            request=pb.SignInRequest(id_token=id_token, request_id=uuid.uuid4().hex),
            method=MATCHMAKING["SignIn"],
        )
        assert not signed.session.operator
        player = signed.session.session_token
        calls = {
            "ListTables": gw.ListTablesRequest(),
            "InspectTable": gw.InspectTableRequest(table_id="t_any"),
            "EndTable": gw.EndTableRequest(table_id="t_any", reason="cheating"),
        }
        for method, request in calls.items():
            for token, code in ((player, Code.PERMISSION_DENIED), ("forged", Code.UNAUTHENTICATED)):
                with pytest.raises(ConnectError) as refused:
                    gateway.execute_unary(
                        request=request,
                        method=GATEWAY[method],
                        headers={"authorization": f"Bearer {token}"},
                    )
                assert refused.value.code == code, (method, refused.value.message)
