"""Only the tables matchmaking created (its CreateTable with its workload certificate, on the
gateway's mutual-TLS internal port, and the internal token when one is configured) report their
hands to matchmaking's ledger. A casual table (``mahjong play``, tests, the Node client: a player
on the public port, whatever metadata it sends; another workload's certificate) reports nothing,
since the ledger refuses tables it did not allocate. Without a token configured, matchmaking's
certificate alone is enough; a player's table still reports nothing."""

from __future__ import annotations

import contextlib
import time

import pytest
from mahjong.common.v1 import common_pb2

from infra.interceptor import internal_metadata
from services.gateway.tables import OUTBOX, read_table_log
from tests.support.stacks import inprocess_gateway
from tests.support.tables import bot_seats, request_table

TOKEN = "deployment-token"


@contextlib.contextmanager
def _gateway(internal_token: str):
    """A gateway reporting to an address nobody answers: reports stay in its outbox to be read."""
    with inprocess_gateway(internal_token, seat_secret="s", matchmaking_addr="127.0.0.1:1") as gw:
        yield gw


@pytest.fixture(scope="module")
def secured():
    with _gateway(TOKEN) as gw:
        yield gw


def _bot_table(stub, metadata=None) -> str:
    return request_table(
        stub,
        bot_seats(),
        metadata=metadata,
        max_hands=1,
        tag="quick/test",
        first_dealer=common_pb2.SEAT_0,
    ).table_id


def _reports_after_finish(store, table_id: str) -> list[str]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(e.kind == "table_finished" for e in read_table_log(store, table_id)):
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"table {table_id} did not finish")
    return sorted(key for key, _ in store.scan(OUTBOX, f"{table_id}/"))


def test_a_table_matchmaking_created_with_the_internal_token_reports_its_hand_and_its_end(
    secured,
):
    with secured.calling_as("matchmaking") as matchmaking:
        table_id = _bot_table(matchmaking, internal_metadata(TOKEN))
    reports = _reports_after_finish(secured.store, table_id)
    assert len(reports) == 2 and reports[-1] == f"{table_id}/~finished", reports


@pytest.mark.parametrize(
    "caller, metadata",
    [
        ("", None),
        ("", (("x-mahjong-internal-token", "guessed"),)),
        ("", internal_metadata(TOKEN)),  # the token without matchmaking's certificate
        ("matchmaking", None),  # the certificate without the configured token
        ("matchmaking", (("x-mahjong-internal-token", "guessed"),)),
        ("wall", internal_metadata(TOKEN)),  # another workload of the deployment
        ("operator", internal_metadata(TOKEN)),
    ],
    ids=[
        "player-no-token",
        "player-wrong-token",
        "player-with-the-token",
        "matchmaking-no-token",
        "matchmaking-wrong-token",
        "wall-with-the-token",
        "operator-with-the-token",
    ],
)
def test_a_casual_table_reports_nothing(secured, caller, metadata):
    with secured.calling_as(caller) as stub:
        table_id = _bot_table(stub, metadata)
    assert _reports_after_finish(secured.store, table_id) == []


def test_without_an_internal_token_configured_matchmakings_certificate_alone_reports():
    with _gateway("") as gw:
        with gw.calling_as("matchmaking") as matchmaking:
            table_id = _bot_table(matchmaking)
        assert len(_reports_after_finish(gw.store, table_id)) == 2
        casual = _bot_table(gw.stub)  # a player's table: still nothing to report
        assert _reports_after_finish(gw.store, casual) == []
