"""Flood control never refuses an answer the server asked for, and buys a cheat nothing
(services/gateway/flood.py): over a real loopback gateway, on both server models, with a budget
so small (bursts of 3, one call every 5 s) that every counted call shows.

A seat whose budget is spent still answers its open prompt (own turn, claim window) and gets
one GetTableState on arrival; every other call — the cheat's attempts below — is counted and
refused RESOURCE_EXHAUSTED before the table sees it."""

from __future__ import annotations

import uuid

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from prometheus_client import REGISTRY

from tests.e2e.players import legal_answer
from tests.support.stacks import inprocess_gateway
from tests.support.tables import request_table

BURST = 3
FLOOD = {
    "seat_secret": "flood-answers",
    "seat_calls_per_second": 0.2,  # the budget does not refill within a test step
    "seat_call_burst": BURST,
    "discard_ms": 600_000,  # a prompt waits for its answer
    "claim_ms": 600_000,
    "bot_delay_ms": 0,
}
MODELS = ("asyncio", "threads")


def exempt(why: str) -> float:
    """Calls the in-process gateways' flood control let through free, for ``why``."""
    sample = REGISTRY.get_sample_value("mahjong_gateway_flood_exempt_calls_total", {"why": why})
    return sample or 0.0


def _reason(exc: grpc.RpcError) -> str:
    status = rpc_status.from_call(exc)
    for d in status.details if status else ():
        info = error_details_pb2.ErrorInfo()
        if d.Unpack(info):
            return info.reason
    return ""


def _code(call, request) -> grpc.StatusCode:
    try:
        call(request, timeout=10)
        return grpc.StatusCode.OK
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
            assert _reason(exc) == "RATE_LIMITED", exc
        return exc.code()


def _table(stub, people: int = 1):
    """Seat 0 deals; seats 0 … ``people`` - 1 are people, the others bots."""
    seats = [pb.SeatAssignment(player_id=f"p{i}-{uuid.uuid4().hex[:6]}") for i in range(people)]
    seats += [pb.SeatAssignment(player_id=f"b{i}", bot=True) for i in range(people, 4)]
    return request_table(stub, seats, max_hands=1, first_dealer=common_pb2.SEAT_0)


class Seat0:
    """A seat's token; seat 0's stream: its prompts, read as they come."""

    def __init__(self, stub, t, seat: int = 0) -> None:
        self.stub, self.t, self.token = stub, t, t.seat_tokens[seat]
        if seat == 0:
            sub = pb.SubscribeRequest(table_id=t.table_id, seat_token=self.token)
            self.stream = stub.Subscribe(sub, timeout=60)

    def next_prompt(self, kind=None) -> pb.Event:
        for r in self.stream:
            e = r.event
            if e.WhichOneof("kind") == "prompt" and e.prompt.seat == common_pb2.SEAT_0:
                if kind is None or e.prompt.kind == kind:
                    return e
                assert _code(self.stub.Act, self.act(e)) == grpc.StatusCode.OK  # a claim: pass
        raise AssertionError("the stream ended")

    def act(self, e: pb.Event, action=None, **fields) -> pb.ActRequest:
        req = {
            "table_id": self.t.table_id,
            "seat_token": self.token,
            "request_id": uuid.uuid4().hex,
            "last_sequence": e.sequence,
            "action": action or legal_answer(e.prompt),
        }
        return pb.ActRequest(**{**req, **fields})

    def spend_budget(self) -> int:
        """Unprompted calls until one is refused; how many were answered."""
        look = pb.GetTableStateRequest(table_id=self.t.table_id, seat_token=self.token)
        for answered in range(100):
            if _code(self.stub.GetTableState, look) == grpc.StatusCode.RESOURCE_EXHAUSTED:
                return answered
        raise AssertionError("never refused")


@pytest.mark.parametrize("model", MODELS)
def test_a_cheat_gets_nothing_free_and_the_honest_answer_always_passes(model):
    with inprocess_gateway(server_config={"server_model": model}, **FLOOD) as gw:
        stub = gw.stub
        t = _table(stub)
        me = Seat0(stub, t)
        p1 = me.next_prompt(pb.PROMPT_KIND_OWN_TURN)  # seat 0 deals: its first turn
        me.spend_budget()
        ex = grpc.StatusCode.RESOURCE_EXHAUSTED
        cheats = {
            # an older state than the prompt's: stale
            "stale": me.act(p1, last_sequence=p1.sequence - 1),
            # a sequence the table has not reached
            "from the future": me.act(p1, last_sequence=p1.sequence + 10_000),
            # malformed: no action
            "no action": pb.ActRequest(
                table_id=t.table_id,
                seat_token=me.token,
                request_id="x",
                last_sequence=p1.sequence,
            ),
            # another seat than the token's
            "seat claim": me.act(p1, seat=common_pb2.SEAT_1),
            # Resume answers no prompt
            "resume": me.act(p1, action=pb.Action(resume=pb.Resume())),
        }
        for what, request in cheats.items():
            assert _code(stub.Act, request) == ex, what
        # a forged token counts with every unverified token of its address: no free answer
        forged = me.act(p1, seat_token=me.token[:-4] + "AAAA")
        codes = [_code(stub.Act, forged) for _ in range(BURST + 1)]
        assert codes == [grpc.StatusCode.UNAUTHENTICATED] * BURST + [ex]
        # the answer the server asked for passes, budget spent or not
        honest = me.act(p1)
        before = exempt("answer")
        assert _code(stub.Act, honest) == grpc.StatusCode.OK
        assert exempt("answer") == before + 1
        # answered: the same request again, or a new one on that prompt, is counted
        assert _code(stub.Act, honest) == ex, "already answered (a replay)"
        assert _code(stub.Act, me.act(p1)) == ex, "already answered"
        # the next prompt (claims of seat 0 on the way answered free too): one free answer
        # per prompt — an illegal one spends it, and the legal one after it is counted
        p2 = me.next_prompt(pb.PROMPT_KIND_OWN_TURN)
        kept = set(p2.prompt.options.discards)
        bad = next(tile for tile in range(1, 43) if tile not in kept)
        illegal = me.act(p2, action=pb.Action(discard=pb.Discard(tile=bad)))
        assert _code(stub.Act, illegal) != ex  # refused by the table, not flood control
        assert _code(stub.Act, me.act(p2)) == ex, "a second free answer to one prompt"


@pytest.mark.parametrize("model", MODELS)
def test_one_table_state_on_arrival_is_free(model):
    with inprocess_gateway(server_config={"server_model": model}, **FLOOD) as gw:
        t = _table(gw.stub)
        me = Seat0(gw.stub, t)  # Subscribe: 1 of the 3, and an arrival
        me.next_prompt(pb.PROMPT_KIND_OWN_TURN)
        before = exempt("arrival")
        # the arrival's view is free: 1 + the 2 left of the burst before a refusal
        assert me.spend_budget() == BURST
        assert exempt("arrival") == before + 1  # and /metrics says so
        # a refused Subscribe is no arrival; with no arrival, nothing more is free
        assert me.spend_budget() == 0


@pytest.mark.parametrize("model", MODELS)
def test_a_prompt_of_another_seat_is_no_free_answer(model):
    with inprocess_gateway(server_config={"server_model": model}, **FLOOD) as gw:
        t = _table(gw.stub, people=2)
        p1 = Seat0(gw.stub, t).next_prompt(pb.PROMPT_KIND_OWN_TURN)  # seat 0's, not seat 1's
        seat1 = Seat0(gw.stub, t, seat=1)
        seat1.spend_budget()
        code = _code(gw.stub.Act, seat1.act(p1))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
