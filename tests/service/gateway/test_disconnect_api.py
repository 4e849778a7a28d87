"""掉线 over the API (RULES §9), with real clients on real gRPC servers: a player whose client
closes its channel mid-hand is announced disconnected once the table's grace has passed, plays
on 托管, and escapes at the hand's end (the penalty, its 75/25 split, reason DISCONNECTED);
one that comes back within the grace keeps its seat and pays nothing."""

from __future__ import annotations

import threading
import time
import uuid

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from mahjong_client.player import RemotePlayer, call_retrying
from tests.support.stacks import inprocess_gateway

GRACE_S = 1


@pytest.fixture(scope="module")
def gateway():
    # A missed discard takes 3 s: a player gone mid-hand holds the hand up past the grace.
    with inprocess_gateway(
        seat_secret="test-secret", discard_ms=3_000, claim_ms=3_000, auto_play_delay_ms=0
    ) as gw:
        yield gw


def new_table(stub, grace_s: int, max_hands: int = 2):
    return stub.CreateTable(
        pb.CreateTableRequest(
            request_id=uuid.uuid4().hex,
            ruleset=common_pb2.RulesetRef(
                name="shanghai-qiaoma",
                options={"timers.disconnect_grace_seconds": str(grace_s)},
            ),
            stake=1,
            seats=[pb.SeatAssignment(player_id=f"p{i}", bot=i > 1) for i in range(4)],
            max_hands=max_hands,
            first_dealer=common_pb2.SEAT_0,
        ),
        timeout=5,
    )


def player(addr, t, seat, **kw):
    return RemotePlayer(
        addr, t.table_id, t.seat_tokens[seat], seat=seat, name=f"p{seat}", keep_events=True, **kw
    )


def quits_after_discards(p: RemotePlayer, n: int) -> threading.Event:
    """Close ``p``'s channel (as a killed app would) right after its ``n``-th discard in the
    first hand; the event is set once it is gone."""
    gone = threading.Event()
    mine = [0]

    def on_event(ev: pb.Event) -> None:
        if gone.is_set() or ev.WhichOneof("kind") != "tile_discarded":
            return
        if ev.tile_discarded.seat == p.seat + 1:
            mine[0] += 1
            if mine[0] == n:
                gone.set()
                threading.Thread(target=p.close, daemon=True).start()

    p.on_event = on_event
    return gone


def seat_changes(events, seat):
    return [e.seat_changed.reason for e in events if e.WhichOneof("kind") == "seat_changed"
            and e.seat_changed.seat == seat + 1]  # fmt: skip


def results(events):
    return [e.hand_result for e in events if e.WhichOneof("kind") == "hand_result"]


def test_a_client_that_closes_its_channel_mid_hand_escapes_at_the_hands_end(gateway):
    t = new_table(gateway.stub, GRACE_S)
    stayer = player(gateway.server.address, t, 0)
    quitter = player(gateway.server.address, t, 1)
    gone = quits_after_discards(quitter, 2)
    stayer.start()
    quitter.start()
    assert gone.wait(30), "seat 1 never discarded twice"
    closed_at = time.monotonic()
    log = stayer.wait(60)
    assert log.table_finished is not None and log.table_finished.hands_played == 2
    events = stayer.events
    # the others are told: disconnected (after the grace), 托管, then left at the hand's end
    assert seat_changes(events, 1)[-3:] == ["disconnected", "auto_play_on", "left"]
    told = next(e for e in events if e.WhichOneof("kind") == "seat_changed"
                and e.seat_changed.reason == "disconnected")  # fmt: skip
    assert told.seat_changed.seat == common_pb2.SEAT_1
    hands = results(events)
    escapes = [r for r in hands if r.outcome == pb.HAND_OUTCOME_ESCAPE]
    assert len(escapes) == 1, [r.outcome for r in hands]
    esc = escapes[0]
    # right after the hand it was liable for, with that hand's own result first
    i = hands.index(esc)
    assert i == 1 and hands[0].outcome in (pb.HAND_OUTCOME_WIN, pb.HAND_OUTCOME_DRAW)
    assert esc.escaped_seat == common_pb2.SEAT_1
    assert esc.escape_reason == pb.ESCAPE_REASON_DISCONNECTED
    assert list(esc.payments) == [0, -2, 0, 0] and esc.house == 2  # 1 × stake 1 × 底分 2
    assert esc.breakdown[0].code == "ESCAPE_REASON" and "掉线" in esc.breakdown[0].label
    assert esc.next_huangfan == 0
    # the seat is a bot's for the rest of the table; its player paid the hand and the penalty
    asked = pb.GetTableStateRequest(table_id=t.table_id, seat_token=t.seat_tokens[0])
    # (after the wait flood control asks for: seat 0 played at full speed)
    view = call_retrying(
        gateway.stub.GetTableState, asked, timeout=5, retry_for=10, transient=True
    ).table
    assert view.seats[1].left
    assert log.table_finished.chips[1] == hands[0].payments[1] - 2 + sum(
        r.payments[1] for r in hands[2:]
    )
    assert time.monotonic() - closed_at >= GRACE_S
    # its old token acts no more
    with pytest.raises(grpc.RpcError) as refused:
        gateway.stub.Act(
            pb.ActRequest(
                table_id=t.table_id,
                seat_token=t.seat_tokens[1],
                request_id=uuid.uuid4().hex,
                action=pb.Action(resume=pb.Resume()),
            ),
            timeout=5,
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_a_client_back_within_the_grace_keeps_its_seat_with_no_penalty(gateway):
    t = new_table(gateway.stub, 3)
    stayer = player(gateway.server.address, t, 0)
    quitter = player(gateway.server.address, t, 1)
    gone = quits_after_discards(quitter, 2)
    stayer.start()
    quitter.start()
    assert gone.wait(30), "seat 1 never discarded twice"
    time.sleep(1.0)  # away for a second, within the 3 s grace
    back = player(gateway.server.address, t, 1)
    back.last_sequence = quitter.last_sequence  # resumes its stream where it was cut
    back.start()
    log = stayer.wait(60)
    back.wait(30)
    assert log.table_finished is not None and log.table_finished.hands_played == 2
    assert "disconnected" not in seat_changes(stayer.events, 1)
    assert "left" not in seat_changes(stayer.events, 1)
    assert all(r.outcome != pb.HAND_OUTCOME_ESCAPE for r in results(stayer.events))
    assert len(back.log.hand_results) >= 1  # it played on in its seat
    back.close()
    stayer.close()
