"""The terminal client holds each hand's result: Next (ReadyForNextHand) only once the person
presses Enter; when the table's pause runs out first, no Next is sent; nothing is held when the
table deals or ends at once. A bot (RemotePlayer) presses Next as the result comes."""

from __future__ import annotations

import io
import os
import time

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb

from mahjong_client.player import RemotePlayer
from mahjong_client.terminal import Quit, TerminalPlayer

RESULT = pb.Event(sequence=5, hand_result=pb.HandResult(outcome=1, payments=[3, -1, -1, -1]))


def person(stdin, phase=pb.TABLE_PHASE_BETWEEN_HANDS, pause_s: float = 15.0):
    out = io.StringIO()
    p = TerminalPlayer(
        grpc.insecure_channel("127.0.0.1:9"), "t_1", "tok", seat=0, stdin=stdin, stdout=out
    )
    nexts: list[int] = []
    view = pb.TableView(phase=phase, next_hand_unix_ms=int((time.time() + pause_s) * 1000))
    p.state = lambda: view  # type: ignore[method-assign]
    p.ready_for_next_hand = lambda: nexts.append(1) or True  # type: ignore[method-assign]
    return p, out, nexts


def test_the_result_stays_until_enter():
    p, out, nexts = person(io.StringIO("\n"))
    p._handle(RESULT)
    text = out.getvalue()
    assert text.index("=== hand over: win ===") < text.index(">> Enter: next hand")
    assert nexts == [1] and len(p.log.hand_results) == 1


def test_the_pause_running_out_sends_no_next():
    read, write = os.pipe()  # a terminal nobody types at
    try:
        with os.fdopen(read) as stdin:
            p, out, nexts = person(stdin, pause_s=0.2)
            started = time.monotonic()
            p._handle(RESULT)
            assert 0.1 < time.monotonic() - started < 2
    finally:
        os.close(write)
    assert nexts == [] and "the pause ran out" in out.getvalue()


def test_nothing_held_without_a_pause_and_q_quits():
    p, out, nexts = person(io.StringIO(""), phase=pb.TABLE_PHASE_FINISHED)
    p._handle(RESULT)
    assert nexts == [] and ">> Enter" not in out.getvalue()
    p, _, nexts = person(io.StringIO("q\n"))
    with pytest.raises(Quit):
        p._handle(RESULT)
    assert nexts == []


def test_a_bot_presses_next_at_once():
    p = RemotePlayer(grpc.insecure_channel("127.0.0.1:9"), "t_1", "tok", seat=0)
    nexts: list[int] = []
    p.ready_for_next_hand = lambda: nexts.append(1) or True  # type: ignore[method-assign]
    p._handle(RESULT)
    assert nexts == [1]
