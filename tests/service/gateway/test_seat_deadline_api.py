"""Open seats over a real loopback gateway (wall, rules and scoring served in-process too): they
are waited for until the table's seat deadline (CreateTableRequest.seat_wait_seconds, else the
gateway's --seat-wait-seconds), shown to clients; past it the table has finished unplayed and
JoinSeat is FAILED_PRECONDITION naming the reason."""

from __future__ import annotations

import time

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from tests.support.probes import rpc_error
from tests.support.stacks import inprocess_gateway
from tests.support.tables import open_seat_request


@pytest.fixture(scope="module")
def gateway():
    with inprocess_gateway(
        seat_secret="test-secret",
        discard_ms=60_000,
        claim_ms=60_000,
        seat_wait_seconds=600,  # the default here; tables below set their own
    ) as gw:
        yield gw.stub


def spectate(stub, table_id):
    return stub.JoinSeat(pb.JoinSeatRequest(table_id=table_id, spectator=True), timeout=5)


def view(stub, table_id, token):
    return stub.GetTableState(
        pb.GetTableStateRequest(table_id=table_id, seat_token=token), timeout=5
    ).table


def events(stub, table_id, token):
    """Every event of a finished table (the stream ends when the table has finished)."""
    return [
        r.event
        for r in stub.Subscribe(
            pb.SubscribeRequest(table_id=table_id, seat_token=token, after_sequence=0), timeout=10
        )
    ]


# --- open seats and their deadline -------------------------------------------------------------
def test_join_after_the_seat_deadline_is_refused(gateway):
    t = gateway.CreateTable(open_seat_request(seat_wait_seconds=1), timeout=5)
    watcher = spectate(gateway, t.table_id).seat_token
    waiting = view(gateway, t.table_id, watcher)
    assert waiting.phase == pb.TABLE_PHASE_WAITING
    now = time.time() * 1000
    assert now < waiting.seat_deadline_unix_ms <= now + 1_000  # the lobby's countdown
    deadline = time.monotonic() + 10
    while view(gateway, t.table_id, watcher).phase != pb.TABLE_PHASE_FINISHED:
        assert time.monotonic() < deadline, "the table never gave up on its open seat"
        time.sleep(0.05)
    evs = events(gateway, t.table_id, watcher)
    assert evs[0].table_started.seat_deadline_unix_ms == waiting.seat_deadline_unix_ms
    assert evs[-1].table_finished.reason == "seats_not_filled"
    assert evs[-1].table_finished.hands_played == 0
    assert not [e for e in evs if e.WhichOneof("kind") == "hand_started"]

    join = pb.JoinSeatRequest(table_id=t.table_id, player_id="late", seat=common_pb2.SEAT_1)
    code, message, info = rpc_error(lambda: gateway.JoinSeat(join, timeout=5))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "seats_not_filled" in message
    assert info.reason == "TABLE_FINISHED" and info.metadata["finish_reason"] == "seats_not_filled"
    join_any = pb.JoinSeatRequest(table_id=t.table_id, player_id="late")  # any open seat
    assert rpc_error(lambda: gateway.JoinSeat(join_any, timeout=5))[0] == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    after = view(gateway, t.table_id, watcher)
    assert not after.seats[1].player_id and after.last_sequence == evs[-1].sequence


def test_seats_joined_in_time_start_the_hand(gateway):
    t = gateway.CreateTable(open_seat_request(seat_wait_seconds=60), timeout=5)
    joined = gateway.JoinSeat(
        pb.JoinSeatRequest(table_id=t.table_id, player_id="p1", seat=common_pb2.SEAT_1), timeout=5
    )
    deadline = time.monotonic() + 10
    while (v := view(gateway, t.table_id, joined.seat_token)).phase == pb.TABLE_PHASE_WAITING:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert v.phase != pb.TABLE_PHASE_FINISHED and v.seat_deadline_unix_ms == 0


def test_the_seat_wait_is_validated_and_defaults_to_the_gateway_setting(gateway):
    code, _, info = rpc_error(
        lambda: gateway.CreateTable(open_seat_request(seat_wait_seconds=-2), timeout=5)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and info.metadata["field"] == (
        "seat_wait_seconds"
    )
    # 0: the gateway's --seat-wait-seconds (600)
    t = gateway.CreateTable(open_seat_request(), timeout=5)
    v = view(gateway, t.table_id, spectate(gateway, t.table_id).seat_token)
    assert 590_000 < v.seat_deadline_unix_ms - time.time() * 1000 <= 600_000
    forever = gateway.CreateTable(open_seat_request(seat_wait_seconds=-1), timeout=5)
    v = view(gateway, forever.table_id, spectate(gateway, forever.table_id).seat_token)
    assert v.phase == pb.TABLE_PHASE_WAITING and v.seat_deadline_unix_ms == 0
