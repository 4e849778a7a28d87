"""Over the real processes: a client that disconnects mid-hand resumes from its last sequence
number, sees exactly the events it missed and plays on; a fuzzed misbehaving client never
changes the table state and never breaks a hand."""

from __future__ import annotations

import random
import time
import uuid

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from services.gateway.domain.replay import export_hand, table_header
from services.gateway.verify import verify_hand
from tests.e2e.players import answer, legal_answer
from tests.e2e.test_bot_hands import read_log
from tests.support.events import json_log
from tests.support.tables import mixed_seats, request_table, state

pytestmark = pytest.mark.integration


def create(stub, humans: int, max_hands: int = 1):
    return request_table(
        stub, mixed_seats(humans, "h"), max_hands=max_hands, first_dealer=common_pb2.SEAT_0
    )


def stream(stub, t, seat, after):
    return stub.Subscribe(
        pb.SubscribeRequest(
            table_id=t.table_id, seat_token=t.seat_tokens[seat], after_sequence=after
        ),
        timeout=60,
    )


def test_disconnect_then_resume_sees_exactly_the_missed_events(stack):
    stub = stack["slow_stub"]
    t = create(stub, humans=1)
    seen: list[pb.Event] = []
    own_turns = 0
    s = stream(stub, t, 0, 0)
    for r in s:  # play two own turns, then drop the connection mid-hand
        seen.append(r.event)
        e = r.event
        if e.WhichOneof("kind") == "prompt":
            answer(stub, t.table_id, t.seat_tokens[0], e)
            if e.prompt.kind == pb.PROMPT_KIND_OWN_TURN:
                own_turns += 1
                if own_turns == 2:
                    break
    s.cancel()
    last = seen[-1].sequence
    time.sleep(0.3)  # the bots play on while we are away
    resumed = stream(stub, t, 0, last)
    got: list[pb.Event] = []
    finished = False
    for r in resumed:
        e = r.event
        got.append(e)
        kind = e.WhichOneof("kind")
        if kind == "prompt":
            answer(stub, t.table_id, t.seat_tokens[0], e)
        if kind == "table_finished":
            finished = True
            break
    assert finished, "the hand went on to its end after the resume"
    # The seat's whole stream, read again from the start once the table is over (not up to a
    # last sequence number read meanwhile: that may be an event the seat does not see, such
    # as a bot's prompt or action, with nothing the seat sees after it until it answers).
    reference = [r.event for r in _until_finished(stream(stub, t, 0, 0))]
    missed = [e for e in reference if e.sequence > last]
    assert [e.SerializeToString() for e in got] == [e.SerializeToString() for e in missed]


def _until_finished(s):
    for r in s:
        yield r
        if r.event.WhichOneof("kind") == "table_finished":
            s.cancel()
            return


HOSTILE = (
    "garbage_tile",
    "flower",
    "wrong_seat",
    "other_token",
    "forged",
    "stale",
    "future",
    "replay",
    "out_of_turn",
    "illegal",
    "empty",
    "bad_chow",
    "swap",
    # JoinSeat and Leave: seats' player ids are public (every view shows them), tokens are not
    "join_by_player_id",
    "join_with_other_seats_token",
    "join_with_spectator_token",
    "join_with_other_tables_token",
    "join_forged",
    "rejoin_own_token",
    "leave_other_table",
    "leave_forged",
    "leave_spectator",
)


def views(stub, t):
    return [state(stub, t, s).SerializeToString() for s in range(4)]


def seat_call(stub, t, other, spectator: str, states, seat: int, kind: str):
    """A hostile (or harmless) JoinSeat or Leave about ``seat``, as a call to make."""
    player = states[seat].seats[seat].player_id  # public
    token = {
        "join_by_player_id": "",
        "join_with_other_seats_token": t.seat_tokens[(seat + 1) % 4],
        "join_with_spectator_token": spectator,
        "join_with_other_tables_token": other.seat_tokens[seat],
        "join_forged": t.seat_tokens[seat][:-3] + "abc",
        "rejoin_own_token": t.seat_tokens[seat],
        "leave_other_table": other.seat_tokens[seat],
        "leave_forged": t.seat_tokens[seat][:-3] + "abc",
        "leave_spectator": spectator,
    }[kind]
    if kind.startswith("leave"):
        req = pb.LeaveRequest(table_id=t.table_id, seat_token=token, request_id=uuid.uuid4().hex)
        return lambda: stub.Leave(req, timeout=5)
    join = pb.JoinSeatRequest(
        table_id=t.table_id, request_id=uuid.uuid4().hex, player_id=player, seat_token=token
    )
    return lambda: stub.JoinSeat(join, timeout=5)


def test_fuzzed_misbehaving_client_never_changes_state_or_breaks_the_hand(stack):
    stub = stack["slow_stub"]
    rng = random.Random(5)
    t = create(stub, humans=4)
    other = create(stub, humans=4)
    join = pb.JoinSeatRequest(table_id=t.table_id, spectator=True)
    spectator = stub.JoinSeat(join, timeout=5).seat_token
    done_ids: list[tuple[int, str]] = []
    refused = accepted = 0
    for _ in range(3000):
        states = [state(stub, t, s) for s in range(4)]
        if states[0].phase == pb.TABLE_PHASE_FINISHED:
            break
        pending = [(s, v.prompt) for s, v in enumerate(states) if v.HasField("prompt")]
        # The four views are read one by one: a step still running after the last accepted
        # action (claim options, the next draw) may land between two reads. Read again until
        # two readings agree, or ``before`` below is no snapshot of the table. (Each view's
        # last_sequence is the last event that seat sees, so they differ in a claim window.)
        if not pending or [state(stub, t, s) for s in range(4)] != states:
            time.sleep(0.01)
            continue
        if rng.random() < 0.35:  # a legal move keeps the hand going
            seat, prompt = rng.choice(pending)
            rid = uuid.uuid4().hex
            stub.Act(
                pb.ActRequest(
                    table_id=t.table_id,
                    seat_token=t.seat_tokens[seat],
                    request_id=rid,
                    last_sequence=states[seat].last_sequence,
                    action=legal_answer(prompt),
                ),
                timeout=5,
            )
            done_ids.append((seat, rid))
            accepted += 1
            continue
        before = [v.SerializeToString() for v in states]
        kind = rng.choice(HOSTILE)
        seat = rng.randrange(4)
        if kind.startswith(("join", "rejoin", "leave")):
            try:
                got = seat_call(stub, t, other, spectator, states, seat, kind)()
            except grpc.RpcError as exc:
                assert kind not in ("rejoin_own_token", "leave_spectator"), exc
                assert exc.code() in (
                    grpc.StatusCode.PERMISSION_DENIED,
                    grpc.StatusCode.UNAUTHENTICATED,
                ), exc
                refused += 1
            else:  # the seat's own token rejoins it; a spectator leaving just goes
                assert kind in ("rejoin_own_token", "leave_spectator"), kind
                if kind == "rejoin_own_token":
                    assert got.seat_token == t.seat_tokens[seat]
            assert views(stub, t) == before, f"a {kind} call changed the table"
            continue
        req = pb.ActRequest(
            table_id=t.table_id,
            seat_token=t.seat_tokens[seat],
            request_id=uuid.uuid4().hex,
            last_sequence=states[seat].last_sequence,
            action=pb.Action(discard=pb.Discard(tile=rng.randrange(1, 35))),
        )
        if kind == "garbage_tile":
            req.action.discard.tile = rng.choice([0, 43, 99, -1 & 0x7FFFFFFF])
        elif kind == "flower":
            req.action.discard.tile = rng.randrange(35, 43)
        elif kind == "wrong_seat":
            req.seat = (seat + 1) % 4 + 1
        elif kind == "other_token":
            req.seat_token = other.seat_tokens[seat]
        elif kind == "forged":
            req.seat_token = t.seat_tokens[seat][:-3] + "abc"
        elif kind == "stale":
            req.last_sequence = max(0, states[seat].last_sequence - rng.randrange(1, 50))
        elif kind == "future":
            req.last_sequence = states[seat].last_sequence + 1000
        elif kind == "replay" and done_ids:
            s2, rid = rng.choice(done_ids)
            req.seat_token, req.request_id = t.seat_tokens[s2], rid
        elif kind == "out_of_turn":
            idle = [s for s in range(4) if not states[s].HasField("prompt")]
            if idle:
                req.seat_token = t.seat_tokens[rng.choice(idle)]
        elif kind == "illegal":
            req.action.CopyFrom(
                rng.choice(
                    [
                        pb.Action(pong=pb.Pong()),
                        pb.Action(kong=pb.Kong(kind=common_pb2.MELD_KIND_CONCEALED_KONG, tile=5)),
                        pb.Action(declare_ready=pb.DeclareReady(discard=rng.randrange(1, 35))),
                    ]
                )
            )
        elif kind == "empty":
            req.action.Clear()
        elif kind == "bad_chow":
            req.action.CopyFrom(pb.Action(chow=pb.Chow(tiles=[1, 10, 19])))
        elif kind == "swap":
            req.action.CopyFrom(pb.Action(tile_swap=pb.TileSwap(tiles=[1, 2, 3, 4, 5])))
        try:
            resp = stub.Act(req, timeout=5)
        except grpc.RpcError as exc:
            assert exc.code() in (
                grpc.StatusCode.INVALID_ARGUMENT,
                grpc.StatusCode.FAILED_PRECONDITION,
                grpc.StatusCode.PERMISSION_DENIED,
                grpc.StatusCode.UNAUTHENTICATED,
                grpc.StatusCode.ABORTED,
            ), exc
            refused += 1
            assert views(stub, t) == before, f"a refused {kind} request changed the table"
            continue
        if kind == "replay" and done_ids:
            assert resp.replayed and views(stub, t) == before
        else:  # a random discard that happened to be legal for the seat to act
            accepted += 1
    log = read_log(stack["slow_db"], t.table_id)
    assert log[-1].kind == "table_finished", "the hand did not finish"
    header = table_header(t.table_id, log)
    for hid in [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]:
        verdict = verify_hand(export_hand(header, log, hid))
        assert verdict.ok, verdict.problems
    assert refused > 100 and accepted > 10
