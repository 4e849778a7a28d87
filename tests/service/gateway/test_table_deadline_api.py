"""A table's deadline over the API (CreateTableRequest.end_by_unix_ms, a tournament round's time
limit): a table of bots that would play 50 hands ends at the deadline with reason "deadline",
the hand in play finished; the deadline is announced in TableStarted and the view; a negative
one is INVALID_ARGUMENT naming the field; it is part of what a request id stands for, without
changing the fingerprint of a request that sets none."""

from __future__ import annotations

import hashlib
import json
import time

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from services.gateway.servicer import table_spec_from_proto
from services.gateway.tables.creation import spec_fingerprint
from tests.support.probes import rpc_error
from tests.support.stacks import inprocess_gateway
from tests.support.tables import bot_seats, open_seat_request, table_request


@pytest.fixture(scope="module")
def gateway():
    """A gateway whose bots think 10 ms a decision: a hand of four bots takes a while."""
    with inprocess_gateway(seat_secret="test-secret", bot_delay_ms=10) as gw:
        yield gw.stub


def events_of(stub, table_id: str, timeout: float = 60):
    """Every event of the table, as a spectator sees them, until it finishes; and its view."""
    spectator = stub.JoinSeat(pb.JoinSeatRequest(table_id=table_id, spectator=True), timeout=5)
    stream = stub.Subscribe(
        pb.SubscribeRequest(table_id=table_id, seat_token=spectator.seat_token), timeout=timeout
    )
    events = [r.event for r in stream]  # ends when the table finishes
    view = stub.GetTableState(
        pb.GetTableStateRequest(table_id=table_id, seat_token=spectator.seat_token), timeout=5
    ).table
    return events, view


def of(events, kind):
    return [getattr(e, kind) for e in events if e.WhichOneof("kind") == kind]


def now_ms() -> int:
    return int(time.time() * 1000)


def test_a_table_of_bots_ends_at_its_deadline_well_before_max_hands(gateway):
    end_by = now_ms() + 1_500
    t = gateway.CreateTable(
        table_request(
            bot_seats(), max_hands=50, first_dealer=common_pb2.SEAT_0, end_by_unix_ms=end_by
        ),
        timeout=5,
    )
    events, view = events_of(gateway, t.table_id)
    ended = now_ms()
    [finished] = of(events, "table_finished")
    assert finished.reason == "deadline"
    assert 1 <= finished.hands_played < 50
    assert ended >= end_by  # it played until the deadline
    assert ended - end_by < 15_000  # and then only finished the hand in play
    # every hand dealt was played to its end; none was dealt after the deadline
    started, results = of(events, "hand_started"), of(events, "hand_result")
    assert len(started) == len(results) == finished.hands_played
    dealt = [e.time_unix_ms for e in events if e.WhichOneof("kind") == "hand_started"]
    assert all(t_ms < end_by + 100 for t_ms in dealt)  # (logged a moment after the check)
    assert of(events, "table_started")[0].end_by_unix_ms == end_by  # "round ends at …"
    assert view.end_by_unix_ms == end_by and view.phase == pb.TABLE_PHASE_FINISHED
    assert view.hands_played == finished.hands_played


def test_a_deadline_already_past_plays_one_hand(gateway):
    t = gateway.CreateTable(
        table_request(bot_seats(), max_hands=50, end_by_unix_ms=now_ms() - 60_000), timeout=5
    )
    events, _ = events_of(gateway, t.table_id)
    [finished] = of(events, "table_finished")
    assert finished.reason == "deadline" and finished.hands_played == 1


def test_no_deadline_is_announced_as_none(gateway):
    t = gateway.CreateTable(open_seat_request(open_seat=False), timeout=5)
    view = gateway.GetTableState(
        pb.GetTableStateRequest(table_id=t.table_id, seat_token=t.seat_tokens[0]), timeout=5
    ).table
    assert view.end_by_unix_ms == 0


@pytest.mark.parametrize("end_by", [-1, 1_765_000_000])  # negative; seconds, not ms
def test_a_negative_deadline_or_one_in_seconds_is_invalid(gateway, end_by):
    req = table_request(bot_seats(), max_hands=1, end_by_unix_ms=end_by)
    code, message, info = rpc_error(lambda: gateway.CreateTable(req, timeout=5))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert info.metadata["field"] == "end_by_unix_ms" and "end_by_unix_ms" in message


def test_the_deadline_is_part_of_the_request_id(gateway):
    req = open_seat_request(open_seat=False, end_by_unix_ms=now_ms() + 3_600_000)
    first = gateway.CreateTable(req, timeout=5)
    assert gateway.CreateTable(req, timeout=5).table_id == first.table_id  # a retry
    for other_deadline in (0, req.end_by_unix_ms + 1):
        other = pb.CreateTableRequest()
        other.CopyFrom(req)
        other.end_by_unix_ms = other_deadline
        code, _, info = rpc_error(lambda other=other: gateway.CreateTable(other, timeout=5))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert info.reason == "REQUEST_ID_REUSED"


def test_a_request_without_a_deadline_keeps_its_fingerprint():
    """Request ids kept before the deadline existed still answer the same request retried:
    a request that sets no deadline is fingerprinted as before."""
    req = open_seat_request(open_seat=False, request_id="r")
    spec = table_spec_from_proto(req)
    before = {
        "ruleset": spec.ruleset_name,
        "overrides": dict(sorted(spec.overrides.items())),
        "stake": spec.stake,
        "seats": [[s.player_id, s.display_name, s.bot] for s in spec.seats],
        "max_hands": spec.max_hands,
        "max_rounds": spec.max_rounds,
        "tag": spec.tag,
        "first_dealer": spec.first_dealer,
        "seat_wait_ms": spec.seat_wait_ms,
    }
    raw = json.dumps(before, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert spec_fingerprint(spec) == hashlib.sha256(raw.encode()).hexdigest()
    req.end_by_unix_ms = 1_800_000_000_000
    assert spec_fingerprint(table_spec_from_proto(req)) != spec_fingerprint(spec)
