"""A late answer — the timer already decided the prompt it answers — is stale: ABORTED, nothing
applied (issue 5: a stale sequence number is ABORTED), not FAILED_PRECONDITION out of turn.
Over a real loopback gateway with a short discard timer and slow bots."""

from __future__ import annotations

import time
import uuid

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from tests.support.stacks import inprocess_gateway

DISCARD_MS = 300
BOT_DELAY_MS = 3_000  # nothing else happens to seat 0 for a while after its timeout


@pytest.fixture(scope="module")
def gateway():
    with inprocess_gateway(
        seat_secret="late-secret",
        discard_ms=DISCARD_MS,
        claim_ms=60_000,
        bot_delay_ms=BOT_DELAY_MS,
    ) as gw:
        yield gw.stub


def view(stub, t):
    return stub.GetTableState(
        pb.GetTableStateRequest(table_id=t.table_id, seat_token=t.seat_tokens[0]), timeout=5
    ).table


def act(stub, t, last_sequence, tile):
    return stub.Act(
        pb.ActRequest(
            table_id=t.table_id,
            seat_token=t.seat_tokens[0],
            request_id=uuid.uuid4().hex,
            last_sequence=last_sequence,
            action=pb.Action(discard=pb.Discard(tile=tile)),
        ),
        timeout=5,
    )


def test_an_answer_after_the_timer_decided_is_aborted_and_applies_nothing(gateway):
    t = gateway.CreateTable(
        pb.CreateTableRequest(
            request_id=uuid.uuid4().hex,
            ruleset=common_pb2.RulesetRef(name="shanghai-qiaoma"),
            stake=1,
            seats=[pb.SeatAssignment(player_id=f"late-{uuid.uuid4().hex[:6]}")]
            + [pb.SeatAssignment(bot=True) for _ in range(3)],
            max_hands=1,
            first_dealer=common_pb2.SEAT_0,
        ),
        timeout=5,
    )
    deadline = time.monotonic() + 10
    while not (seen := view(gateway, t)).HasField("prompt"):
        assert time.monotonic() < deadline, "seat 0 (the dealer) was never prompted"
        time.sleep(0.02)
    assert seen.prompt.kind == pb.PROMPT_KIND_OWN_TURN
    tile = seen.prompt.options.discards[0]
    while (now := view(gateway, t)).HasField("prompt"):  # the player is slow: the timer decides
        assert time.monotonic() < deadline, "the discard timer never fired"
        time.sleep(0.02)
    with pytest.raises(grpc.RpcError) as late:
        act(gateway, t, seen.last_sequence, tile)
    assert late.value.code() == grpc.StatusCode.ABORTED, late.value.details()
    # Nothing of seat 0 changed (the bots may have moved on meanwhile: compare the seat's own).
    after = view(gateway, t)
    assert after.seats[0].SerializeToString() == now.seats[0].SerializeToString()
    # Having seen the timer's move, acting with no prompt is out of turn, as before.
    with pytest.raises(grpc.RpcError) as out:
        act(gateway, t, now.last_sequence, tile)
    assert out.value.code() == grpc.StatusCode.FAILED_PRECONDITION, out.value.details()
