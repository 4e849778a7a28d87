"""Only the tables a service of the deployment created (matchmaking's CreateTable, sent with the
internal token) report their hands to matchmaking's ledger. A casual table (``mahjong play``,
tests, the Node client: no token) reports nothing, since the ledger refuses tables it did not
allocate; without a token configured (development) every table reports, as before."""

from __future__ import annotations

import contextlib
import time

import pytest
from mahjong.common.v1 import common_pb2

from services.gateway.tables import OUTBOX, read_table_log
from shared.server import internal_metadata
from tests.support.stacks import inprocess_gateway
from tests.support.tables import bot_seats, request_table

TOKEN = "deployment-token"


@contextlib.contextmanager
def _gateway(internal_token: str):
    """A gateway reporting to an address nobody answers: reports stay in its outbox to be read."""
    with inprocess_gateway(internal_token, seat_secret="s", matchmaking_addr="127.0.0.1:1") as gw:
        yield gw.stub, gw.store


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


def test_a_table_created_with_the_internal_token_reports_its_hand_and_its_end(secured):
    stub, store = secured
    table_id = _bot_table(stub, internal_metadata(TOKEN))
    reports = _reports_after_finish(store, table_id)
    assert len(reports) == 2 and reports[-1] == f"{table_id}/~finished", reports


@pytest.mark.parametrize(
    "metadata", [None, (("x-mahjong-internal-token", "guessed"),)], ids=["no-token", "wrong"]
)
def test_a_casual_table_reports_nothing(secured, metadata):
    stub, store = secured
    table_id = _bot_table(stub, metadata)
    assert _reports_after_finish(store, table_id) == []


def test_without_an_internal_token_configured_every_table_reports():
    with _gateway("") as (stub, store):
        table_id = _bot_table(stub)
        assert len(_reports_after_finish(store, table_id)) == 2
