"""托管 over the API (F6): a seat on 托管 sees the deadline by which the bot answers for it, and
an Act with ``resume`` ends 托管 at once, without waiting for a prompt."""

from __future__ import annotations

import io
import time
import uuid

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from mahjong_client.terminal import Quit, TerminalPlayer
from tests.support.stacks import inprocess_gateway

AUTO_PLAY_DELAY_MS = 30_000  # the bot thinks long for a 托管 seat, so the test sees it waiting


@pytest.fixture(scope="module")
def gateway():
    with inprocess_gateway(
        seat_secret="test-secret",
        discard_ms=600,  # two missed turns in a row put seat 0 on 托管 quickly
        claim_ms=600,
        auto_play_delay_ms=AUTO_PLAY_DELAY_MS,
    ) as gw:
        yield gw.stub, gw.channel


def resume(stub, t, token=None):
    return stub.Act(
        pb.ActRequest(
            table_id=t.table_id,
            seat_token=token or t.seat_tokens[0],
            request_id=uuid.uuid4().hex,
            action=pb.Action(resume=pb.Resume()),
        ),
        timeout=5,
    )


def new_table(gateway):
    return gateway.CreateTable(
        pb.CreateTableRequest(
            request_id=uuid.uuid4().hex,
            ruleset=common_pb2.RulesetRef(name="shanghai-qiaoma"),
            stake=1,
            seats=[pb.SeatAssignment(player_id=f"p{i}", bot=i > 0) for i in range(4)],
            max_hands=5,
            first_dealer=common_pb2.SEAT_0,
        ),
        timeout=5,
    )


def state(gateway, t):
    return gateway.GetTableState(
        pb.GetTableStateRequest(table_id=t.table_id, seat_token=t.seat_tokens[0]), timeout=5
    ).table


def prompted_on_auto_play(gateway, t):
    """Seat 0 never acts: two timeouts, then 托管, then a prompt the bot holds."""
    give_up = time.monotonic() + 20
    while True:
        view = state(gateway, t)
        if view.seats[0].auto_play and view.HasField("prompt"):
            return view
        assert time.monotonic() < give_up, "seat 0 was never prompted on 托管"
        time.sleep(0.02)


def test_auto_play_deadline_and_resume(gateway):
    gateway, _ = gateway
    t = new_table(gateway)
    with pytest.raises(grpc.RpcError) as err:  # not on 托管 yet: nothing to resume
        resume(gateway, t)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "托管" in (err.value.details() or "")

    view = prompted_on_auto_play(gateway, t)
    now_ms = time.time() * 1000
    assert view.prompt.deadline_unix_ms > now_ms + AUTO_PLAY_DELAY_MS - 5_000
    assert view.hand.deadline_unix_ms == view.prompt.deadline_unix_ms

    seq = resume(gateway, t).sequence
    after = state(gateway, t)
    assert not after.seats[0].auto_play
    assert after.prompt.deadline_unix_ms < view.prompt.deadline_unix_ms  # the normal timer
    stream = gateway.Subscribe(
        pb.SubscribeRequest(
            table_id=t.table_id, seat_token=t.seat_tokens[0], after_sequence=seq - 1
        ),
        timeout=5,
    )
    try:
        changed = next(iter(stream)).event.seat_changed
    finally:
        stream.cancel()
    assert changed.reason == "auto_play_off" and not changed.auto_play
    assert 0 < changed.deadline_unix_ms < view.prompt.deadline_unix_ms
    if after.HasField("prompt"):  # (unless the normal timer ran out meanwhile)
        assert changed.deadline_unix_ms == after.prompt.deadline_unix_ms


def test_mahjong_play_resumes_with_r(gateway):
    """The terminal client: on 托管 it says so, and `r` ends 托管 before the person decides."""
    stub, channel = gateway
    t = new_table(stub)
    view = prompted_on_auto_play(stub, t)
    out = io.StringIO()
    player = TerminalPlayer(
        channel, t.table_id, t.seat_tokens[0], seat=0, stdin=io.StringIO("r\n"), stdout=out
    )
    player.last_sequence = view.last_sequence
    with pytest.raises(Quit):  # the input ends after `r`
        player.decide(view.prompt)
    text = out.getvalue()
    assert "托管: the bot answers for you" in text
    assert "托管 off: you play again" in text
    assert player.log.actions == 1 and not player.log.rejections
