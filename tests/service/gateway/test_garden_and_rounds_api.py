"""逛花园 and rounds over the API: a 逛花园 table settles every hand (scoring gets the stacks),
shows the stacks in events and views, and ends after payment.garden_rounds rounds; a table can
limit its rounds with CreateTableRequest.max_rounds."""

from __future__ import annotations

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from tests.support.tables import bot_seats, request_table


def bot_table(stub, options, **kw):
    return request_table(stub, bot_seats(), options=options, first_dealer=common_pb2.SEAT_0, **kw)


def all_events(stub, table_id):
    spectator = stub.JoinSeat(pb.JoinSeatRequest(table_id=table_id, spectator=True), timeout=5)
    stream = stub.Subscribe(
        pb.SubscribeRequest(table_id=table_id, seat_token=spectator.seat_token), timeout=60
    )
    events = [r.event for r in stream]  # ends when the table finishes
    view = stub.GetTableState(
        pb.GetTableStateRequest(table_id=table_id, seat_token=spectator.seat_token), timeout=5
    ).table
    return events, view


def of(events, kind):
    return [getattr(e, kind) for e in events if e.WhichOneof("kind") == kind]


def test_a_garden_table_settles_every_hand_and_lasts_garden_rounds(gateway):
    options = {
        "payment.garden": "true",
        "payment.garden_stack": "30",
        "payment.garden_rounds": "1",
    }
    t = bot_table(gateway, options)
    events, view = all_events(gateway, t.table_id)
    started, results = of(events, "hand_started"), of(events, "hand_result")
    finished = of(events, "table_finished")
    assert finished and finished[-1].reason == "max_rounds" and finished[-1].rounds_played == 1
    assert len(results) == len(started) >= 1
    assert list(started[0].garden_stacks) == [30, 30, 30, 30]
    for s, r in zip(started, results, strict=True):
        assert [b + p for b, p in zip(s.garden_stacks, r.payments, strict=True)] == list(
            r.garden_stacks
        )
        assert min(r.garden_stacks) >= 0
        for before, paid in zip(s.garden_stacks, r.payments, strict=True):
            assert before > 0 or paid >= 0  # a seat at 0 pays nothing
    assert list(finished[-1].garden_stacks) == list(results[-1].garden_stacks)
    assert view.garden and view.rounds_played == 1 and view.max_rounds == 1
    assert [s.garden_stack for s in view.seats] == list(finished[-1].garden_stacks)
    assert of(events, "table_started")[0].max_rounds == 1


def test_max_rounds_ends_a_table_and_is_checked(gateway):
    t = bot_table(gateway, {}, max_rounds=1)
    events, view = all_events(gateway, t.table_id)
    finished = of(events, "table_finished")[-1]
    assert finished.reason == "max_rounds" and finished.rounds_played == 1
    assert not view.garden and not finished.garden_stacks
    moved = sum(
        (r.next_dealer - s.dealer) % 4
        for s, r in zip(of(events, "hand_started"), of(events, "hand_result"), strict=True)
    )
    assert 4 <= moved <= 7  # the last hand brought the deal round, not an earlier one

    def refused(options, **kw):
        with pytest.raises(grpc.RpcError) as err:
            bot_table(gateway, options, **kw)
        return err.value.code()

    C = grpc.StatusCode
    assert refused({}, max_rounds=-1) == C.INVALID_ARGUMENT
    assert refused({}, max_rounds=100_000) == C.INVALID_ARGUMENT
    assert refused({"payment.garden": "true"}, max_rounds=2) == C.INVALID_ARGUMENT
    assert refused({}) == C.INVALID_ARGUMENT  # four bots and no limit
