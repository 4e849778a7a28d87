"""The lobby and the operator's console in a real browser: headless Chromium (Debian's, driven
by playwright-core) against one real local stack that both share, their node files running at
once (each signs in players of its own, so they stay independent).

web/tests/lobby.test.mjs, at a phone's viewport with touch: the phone layout, a purchase
confirmed with its price and its lines in the history, back to a seat from the lobby and from a
second browser of the same player, a room by code between two players with bots, a quick match,
a tournament created with bots, listed, joined, its one hand played by taps and its final
ranking shown, a past hand's replay stepped through from the history.

web/tests/admin.test.mjs (?admin): an operator signs in with the operator role of the
development issuer, lists the live tables, inspects one, ends it with a reason, finds a player
by name, suspends and lifts them, and reads the audit log showing those actions. On the same
stack, the gateway's console on its web port refuses a player's session (PERMISSION_DENIED
NOT_OPERATOR, checked with matchmaking's CheckSession) and a forged token (UNAUTHENTICATED).

Screenshots land in web/test-artifacts/ (lobby-*.png, admin-console.png)."""

from __future__ import annotations

import json
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
from tests.support.browser import (
    assert_screenshots,
    check_prerequisites,
    clear_screenshots,
    run_node_tests,
    stack_env,
)
from tests.support.stacks import local_stack

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GATEWAY = method_infos(gw.DESCRIPTOR.services_by_name["GatewayService"])
MATCHMAKING = method_infos(pb.DESCRIPTOR.services_by_name["MatchmakingService"])
SHOTS = (
    *(
        f"lobby-{name}"
        for name in (
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
    ),
    "admin-console",
)


def test_the_lobby_on_a_phone_and_the_operators_console():
    check_prerequisites()
    clear_screenshots(SHOTS)  # what is checked below is this run's
    # bots think a little, as at a real table; a quick-match queue fills with bots after 1 s
    extra = {"gateway": ["--bot-delay-ms", "120"], "matchmaking": ["--bot-fill-seconds", "1"]}
    with local_stack(SIGNED_IN_STACK, extra_args=extra) as stack:
        run_node_tests(
            stack,
            ["tests/lobby.test.mjs", "tests/admin.test.mjs"],
            stack_env(stack),
            timeout=300,
            concurrency=2,  # the two files at once; each file's tests one after another
        )
        _gateway_refuses_non_operators(stack)
    assert_screenshots(SHOTS)


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
