"""A protos-only agent at full speed (issue 30, item 3): raw generated stubs, no mahjong_client
(no retries, no waiting out RetryInfo), one seat against three server bots that think for 0 ms.
It reads its stream and answers every prompt of its seat the moment it arrives, takes one
GetTableState on arrival, and notes every refusal by code. Flood control must refuse none of
its answers: they are the server's own asking (services/gateway/flood.py)."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

import grpc
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from tests.e2e.players import legal_answer

SEAT = 0


@dataclass
class AgentRun:
    hands: int = 0
    answers: int = 0
    refusals: Counter = field(default_factory=Counter)  # status code name -> calls refused
    seconds: float = 0.0
    finished: bool = False


def one_bot_table(stub, hands: int) -> pb.CreateTableResponse:
    """A public table: the agent at seat 0, server bots at 1-3, ``hands`` hands."""
    seats = [pb.SeatAssignment(player_id=f"agent-{uuid.uuid4().hex[:6]}")]
    seats += [pb.SeatAssignment(player_id=f"bot{i}", bot=True) for i in (1, 2, 3)]
    return stub.CreateTable(
        pb.CreateTableRequest(
            seats=seats, stake=1, max_hands=hands, first_dealer=common_pb2.SEAT_0
        ),
        timeout=10,
    )


def play_at_full_speed(stub, table_id: str, token: str, timeout: float = 600) -> AgentRun:
    """Play seat 0 of ``table_id`` over ``stub`` (raw GatewayService stub) to the table's end."""
    run = AgentRun()
    began = time.monotonic()
    subscribe = pb.SubscribeRequest(table_id=table_id, seat_token=token)
    stream = stub.Subscribe(subscribe, timeout=timeout)
    look = pb.GetTableStateRequest(table_id=table_id, seat_token=token)
    _call(run, stub.GetTableState, look)  # on arrival
    for r in stream:
        e = r.event
        kind = e.WhichOneof("kind")
        if kind == "hand_started":
            run.hands += 1
        elif kind in ("table_finished", "table_halted"):
            run.finished = kind == "table_finished"
            run.finished = True
            break
        elif kind == "prompt" and e.prompt.seat == common_pb2.SEAT_0:
            act = pb.ActRequest(
                table_id=table_id,
                seat_token=token,
                request_id=uuid.uuid4().hex,
                last_sequence=e.sequence,
                action=legal_answer(e.prompt),
            )
            if not _call(run, stub.Act, act):
                break  # refused: the prompt stays open for its 10-minute timer
            run.answers += 1
    stream.cancel()
    run.seconds = time.monotonic() - began
    return run


def _call(run: AgentRun, method, request) -> bool:
    try:
        method(request, timeout=30)
        return True
    except grpc.RpcError as exc:
        run.refusals[exc.code().name] += 1
        return False
