"""GatewayService over a real loopback server (wall, rules and scoring served in-process too):
every error code, idempotency by request id, stale sequence numbers, resume and leaving."""

from __future__ import annotations

import time
import uuid

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from tests.support.tables import act, discard, mixed_seats, request_table, state, wait_prompt


def new_table(stub, humans=1, request_id=None, max_hands=1, players=None):
    return request_table(
        stub,
        mixed_seats(humans, "p", players),  # the same players: the same request
        stake=2,
        request_id=request_id,
        max_hands=max_hands,
        first_dealer=common_pb2.SEAT_0,
    )


def code_of(fn) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        fn()
    return err.value.code()


def test_error_codes_change_nothing(gateway):
    stub = gateway
    t = new_table(stub)
    other = new_table(stub)
    view = wait_prompt(stub, t)
    before = view.SerializeToString()
    held = {x for x in view.seats[0].concealed}
    missing = next(v for v in range(1, 35) if v not in held)
    legal = view.prompt.options.discards[0]
    C = grpc.StatusCode
    assert code_of(lambda: act(stub, t, discard(99))) == C.INVALID_ARGUMENT
    assert code_of(lambda: act(stub, t, discard(0))) == C.INVALID_ARGUMENT
    assert code_of(lambda: act(stub, t, discard(36))) == C.INVALID_ARGUMENT  # a flower
    assert code_of(lambda: act(stub, t, pb.Action())) == C.INVALID_ARGUMENT
    assert code_of(lambda: act(stub, t, discard(legal), rid="")) == C.INVALID_ARGUMENT
    assert code_of(lambda: act(stub, t, discard(legal), last=10**9)) == C.INVALID_ARGUMENT
    bad_chow = pb.Action(chow=pb.Chow(tiles=[1, 2, 4]))
    assert code_of(lambda: act(stub, t, bad_chow)) == C.INVALID_ARGUMENT
    assert (
        code_of(lambda: act(stub, t, discard(legal), seat_token=other.seat_tokens[0]))
        == C.PERMISSION_DENIED
    )
    assert code_of(lambda: act(stub, t, discard(legal), seat=2)) == C.PERMISSION_DENIED
    forged = t.seat_tokens[0][:-2] + "xx"
    assert code_of(lambda: act(stub, t, discard(legal), seat_token=forged)) == C.UNAUTHENTICATED
    assert code_of(lambda: act(stub, t, discard(legal), table_id="t_nope")) == C.NOT_FOUND
    assert code_of(lambda: act(stub, t, discard(missing))) == C.FAILED_PRECONDITION
    assert code_of(lambda: act(stub, t, pb.Action(pong=pb.Pong()))) == C.FAILED_PRECONDITION
    swap = pb.Action(tile_swap=pb.TileSwap(tiles=[1, 2, 3, 4, 5]))
    assert code_of(lambda: act(stub, t, swap)) == C.FAILED_PRECONDITION
    stale = view.prompt_sequence if hasattr(view, "prompt_sequence") else None
    del stale
    assert code_of(lambda: act(stub, t, discard(legal), last=1)) == C.ABORTED
    after = state(stub, t)
    assert after.SerializeToString() == before, "a refused request changed the table"


def test_repeated_request_id_applies_once(gateway):
    stub = gateway
    t = new_table(stub)
    view = wait_prompt(stub, t)
    tile = view.prompt.options.discards[0]
    rid = uuid.uuid4().hex
    first = act(stub, t, discard(tile), rid=rid)
    again = act(stub, t, discard(tile), rid=rid, last=1)
    assert again.sequence == first.sequence and again.replayed and not first.replayed
    mine = state(stub, t).seats[0]
    assert len(mine.discards) >= 1 and list(mine.discards).count(tile) >= 1
    assert mine.discards[0] == tile and len([d for d in mine.discards[:1]]) == 1


def test_create_table_is_idempotent(gateway):
    rid, players = uuid.uuid4().hex, uuid.uuid4().hex[:6]
    a = new_table(gateway, request_id=rid, players=players)
    b = new_table(gateway, request_id=rid, players=players)  # a retry repeats the request
    assert a.table_id == b.table_id and list(a.seat_tokens) == list(b.seat_tokens)
    assert a.seat_tokens[0] and not a.seat_tokens[1]  # bot seats get no token


def test_create_table_rejects_malformed(gateway):
    def bad(**kw):
        req = pb.CreateTableRequest(
            stake=1, seats=[pb.SeatAssignment(player_id=f"x{i}") for i in range(4)]
        )
        for k, v in kw.items():
            if k == "seats":
                del req.seats[:]
                req.seats.extend(v)
            elif k == "ruleset":
                req.ruleset.CopyFrom(v)
            else:
                setattr(req, k, v)
        return lambda: gateway.CreateTable(req, timeout=5)

    C = grpc.StatusCode
    assert code_of(bad(stake=0)) == C.INVALID_ARGUMENT
    assert code_of(bad(seats=[pb.SeatAssignment(bot=True)] * 3)) == C.INVALID_ARGUMENT
    assert code_of(bad(seats=[pb.SeatAssignment(bot=True)] * 4)) == C.INVALID_ARGUMENT
    assert code_of(bad(ruleset=common_pb2.RulesetRef(name="nope"))) == C.INVALID_ARGUMENT
    assert code_of(bad(max_hands=-1)) == C.INVALID_ARGUMENT


def collect(stub, t, after, until_seq, seat=0):
    out = []
    stream = stub.Subscribe(
        pb.SubscribeRequest(
            table_id=t.table_id, seat_token=t.seat_tokens[seat], after_sequence=after
        ),
        timeout=10,
    )
    for r in stream:
        out.append(r.event)
        if r.event.sequence >= until_seq:
            stream.cancel()
            break
    return out


def test_resume_sees_exactly_the_missed_events(gateway):
    stub = gateway
    t = new_table(stub, max_hands=3)
    view = wait_prompt(stub, t)
    act(stub, t, discard(view.prompt.options.discards[0]))
    view = wait_prompt(stub, t)
    head = view.last_sequence
    full = collect(stub, t, 0, head)
    cut = full[len(full) // 2].sequence
    resumed = collect(stub, t, cut, head)
    assert [e.sequence for e in resumed] == [e.sequence for e in full if e.sequence > cut]
    assert [e.SerializeToString() for e in resumed] == [
        e.SerializeToString() for e in full if e.sequence > cut
    ]
    spectator = stub.JoinSeat(pb.JoinSeatRequest(table_id=t.table_id, spectator=True), timeout=5)
    public = []
    for r in stub.Subscribe(
        pb.SubscribeRequest(table_id=t.table_id, seat_token=spectator.seat_token), timeout=10
    ):
        public.append(r.event)
        if r.event.sequence >= head - 1:
            break
    assert not any(e.WhichOneof("kind") == "prompt" for e in public)
    dealt = next(e for e in public if e.WhichOneof("kind") == "tiles_dealt")
    assert all(not h.tiles for h in dealt.tiles_dealt.hands)
    assert (
        code_of(lambda: act(stub, t, discard(1), seat_token=spectator.seat_token, seat=0))
        == grpc.StatusCode.PERMISSION_DENIED
    )


def test_leave_pays_the_escape_penalty_and_a_bot_finishes(gateway):
    stub = gateway
    t = new_table(stub)
    wait_prompt(stub, t)
    resp = stub.Leave(
        pb.LeaveRequest(table_id=t.table_id, seat_token=t.seat_tokens[0], request_id="bye"),
        timeout=5,
    )
    assert resp.penalty == 2 * 2  # 1 × stake 2 × base points 2
    events = []
    for r in stub.Subscribe(
        pb.SubscribeRequest(table_id=t.table_id, seat_token=t.seat_tokens[0]), timeout=30
    ):
        events.append(r.event)
        if r.event.WhichOneof("kind") == "table_finished":
            break
    results = [e.hand_result for e in events if e.WhichOneof("kind") == "hand_result"]
    assert results[0].outcome == pb.HAND_OUTCOME_ESCAPE
    assert sum(results[0].payments) + results[0].house == 0
    assert results[-1].outcome in (pb.HAND_OUTCOME_WIN, pb.HAND_OUTCOME_DRAW)
    view = state(stub, t)
    assert view.seats[0].left and view.phase == pb.TABLE_PHASE_FINISHED


def test_tile_swap_over_the_api(gateway):
    stub = gateway
    t = request_table(
        stub,
        mixed_seats(1, "s"),
        options={"table.tile_swap": "true"},
        max_hands=1,
        first_dealer=common_pb2.SEAT_0,
    )
    deadline = time.monotonic() + 10
    view = state(stub, t)
    while not (view.HasField("prompt") and view.prompt.kind == pb.PROMPT_KIND_TILE_SWAP):
        assert time.monotonic() < deadline, "no tile-swap prompt"
        time.sleep(0.01)
        view = state(stub, t)
    assert view.prompt.options.swap_count == 5
    held = list(view.seats[0].concealed)
    short = pb.Action(tile_swap=pb.TileSwap(tiles=held[:4]))
    assert code_of(lambda: act(stub, t, short)) == grpc.StatusCode.INVALID_ARGUMENT
    act(stub, t, pb.Action(tile_swap=pb.TileSwap(tiles=held[:5])))
    events = collect(stub, t, 0, state(stub, t).last_sequence)
    swapped = [e.tiles_swapped for e in events if e.WhichOneof("kind") == "tiles_swapped"]
    mine = [s for s in swapped if s.seat == common_pb2.SEAT_0]
    assert list(mine[0].buried) == held[:5] and len(mine[0].taken) == 5
    others = [s for s in swapped if s.seat != common_pb2.SEAT_0]
    assert others and all(not s.buried and not s.taken and s.count == 5 for s in others)


def test_a_late_subscriber_gets_every_hand_from_the_start(gateway):
    """Only the last two hands stay in memory; older events come from the store."""
    stub = gateway
    t = request_table(stub, [pb.SeatAssignment(bot=True)] * 4, ruleset=None, max_hands=4)
    watcher = stub.JoinSeat(pb.JoinSeatRequest(table_id=t.table_id, spectator=True), timeout=5)
    first = list(
        stub.Subscribe(
            pb.SubscribeRequest(table_id=t.table_id, seat_token=watcher.seat_token), timeout=60
        )
    )
    assert first[-1].event.WhichOneof("kind") == "table_finished"
    again = list(
        stub.Subscribe(
            pb.SubscribeRequest(table_id=t.table_id, seat_token=watcher.seat_token), timeout=60
        )
    )
    assert [r.event.SerializeToString() for r in again] == [
        r.event.SerializeToString() for r in first
    ]
    seqs = [r.event.sequence for r in again]
    assert seqs == sorted(set(seqs)) and seqs[0] == 1
    starts = [
        r.event.hand_started.hand_number
        for r in again
        if r.event.WhichOneof("kind") == "hand_started"
    ]
    assert starts == [1, 2, 3, 4]
    tail = list(
        stub.Subscribe(
            pb.SubscribeRequest(
                table_id=t.table_id, seat_token=watcher.seat_token, after_sequence=seqs[5]
            ),
            timeout=60,
        )
    )
    assert [r.event.sequence for r in tail] == seqs[6:]
