"""CreateTable's request id is bound to its request (over a real loopback gateway, and on the
table manager for the store's edge cases): an identical retry returns the same table and seat
tokens; the same id with a different request is FAILED_PRECONDITION ``REQUEST_ID_REUSED`` and
creates nothing; ids recorded before the fingerprint existed still answer retries."""

from __future__ import annotations

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from infra.store.memory import MemoryStore
from services.gateway.servicer import table_spec_from_proto
from services.gateway.tables import CREATES, TableManager
from shared.errors import FailedPrecondition
from tests.support.probes import rpc_error
from tests.support.sessions import inprocess_ports
from tests.support.stacks import inprocess_gateway, table_manager
from tests.support.tables import open_seat_request


@pytest.fixture(scope="module")
def gateway():
    """The gateway called as matchmaking (its certificate, on the internal port): the caller that
    retries CreateTable with one request id, and whose tables no public-table limit counts."""
    with (
        inprocess_gateway(seat_secret="test-secret", discard_ms=60_000, claim_ms=60_000) as gw,
        gw.calling_as("matchmaking") as stub,
    ):
        yield stub


# --- CreateTable's request id bound to the request ---------------------------------------------
def test_an_identical_retry_returns_the_same_table_and_tokens(gateway):
    req = open_seat_request(open_seat=False)
    a = gateway.CreateTable(req, timeout=5)
    b = gateway.CreateTable(req, timeout=5)
    assert a.table_id == b.table_id and list(a.seat_tokens) == list(b.seat_tokens)
    # the ruleset's name left empty is the default ruleset: the same request
    same = pb.CreateTableRequest()
    same.CopyFrom(req)
    same.ruleset.name = ""
    assert gateway.CreateTable(same, timeout=5).table_id == a.table_id


@pytest.mark.parametrize(
    "change",
    [
        lambda r: setattr(r, "stake", 3),
        lambda r: setattr(r.seats[1], "player_id", "someone-else"),
        lambda r: setattr(r.seats[2], "bot", False),
        lambda r: r.ruleset.options.update({"timers.discard_seconds": "30"}),
        lambda r: setattr(r, "max_hands", 2),
        lambda r: setattr(r, "max_rounds", 1),
        lambda r: setattr(r, "tag", "other"),
        lambda r: setattr(r, "first_dealer", common_pb2.SEAT_1),
        lambda r: setattr(r, "seat_wait_seconds", 30),
        lambda r: setattr(r, "end_by_unix_ms", 4_102_444_800_000),
        lambda r: setattr(r, "fee_per_hand", 5),  # a fee set after the table was created
    ],
    ids=[
        "stake",
        "seat-player",
        "seat-bot",
        "ruleset-option",
        "max-hands",
        "max-rounds",
        "tag",
        "first-dealer",
        "seat-wait",
        "deadline",
        "fee",
    ],
)
def test_the_same_request_id_with_a_different_request_is_refused(gateway, change):
    req = open_seat_request(open_seat=False)
    first = gateway.CreateTable(req, timeout=5)
    other = pb.CreateTableRequest()
    other.CopyFrom(req)
    change(other)
    code, message, info = rpc_error(lambda: gateway.CreateTable(other, timeout=5))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert info.reason == "REQUEST_ID_REUSED" and info.metadata["field"] == "request_id"
    assert first.table_id not in message  # a request id is no credential for the table
    # nothing was created or rebound: the first request still gets its table
    assert gateway.CreateTable(req, timeout=5).table_id == first.table_id


def test_a_negative_room_service_fee_is_refused_and_creates_nothing(gateway):
    req = open_seat_request(open_seat=False)
    req.request_id = "negative-fee"
    req.fee_per_hand = -1  # would pay the seats out of the house's silver
    code, message, _ = rpc_error(lambda: gateway.CreateTable(req, timeout=5))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "fee_per_hand" in message
    req.fee_per_hand = 4  # the same id, now valid: nothing was bound to it
    assert gateway.CreateTable(req, timeout=5).table_id


def _manager(store) -> TableManager:
    return table_manager(store, inprocess_ports(), seed=1, replica_id="gw", bot_delay_ms=60_000)


def test_a_concurrent_create_with_the_same_id_but_another_request_is_refused():
    """The request id is claimed together with the fingerprint, so a call that loses the race
    to claim it compares its request with the winner's."""

    class RaceStore(MemoryStore):
        before_claim = None

        def create(self, namespace, key, value):
            hook, self.before_claim = self.before_claim, None
            if namespace == CREATES and hook is not None:
                hook()  # the other call claims the id between this one's look and its claim
            return super().create(namespace, key, value)

    store = RaceStore()
    manager = _manager(store)
    try:
        a = table_spec_from_proto(open_seat_request(open_seat=False, request_id="race"))
        b = table_spec_from_proto(open_seat_request(open_seat=False, request_id="race", stake=5))
        won = []
        store.before_claim = lambda: won.append(manager.create_table(a))
        with pytest.raises(FailedPrecondition) as err:
            manager.create_table(b)
        assert err.value.reason == "REQUEST_ID_REUSED"
        assert len(won) == 1 and manager.create_table(a) == won[0]
        assert list(manager.tables) == [won[0][0]]
        assert [k for k, _ in store.scan("gateway-table")] == [won[0][0]]  # b's undone
    finally:
        manager.close()
