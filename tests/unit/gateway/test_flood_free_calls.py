"""services/gateway/flood.py on its own: the free answer is one per prompt however many threads
race for it, a refused free call is charged afterwards, and a replica that does not run the
table sends an answer on past its budget but refuses anything else."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb

from services.gateway.domain.session import PLAYING
from services.gateway.domain.tokens import sign_seat_token
from services.gateway.flood import FloodControl
from services.gateway.settings import GatewaySettings
from services.gateway.tables.live import LiveTable
from shared.errors import FailedPrecondition, NotFound, ResourceExhausted, Unavailable

SECRET = b"unit"
PROMPT = 5  # the sequence of seat 0's open prompt
CONTEXT = SimpleNamespace(peer=lambda: "ipv4:10.0.0.7:5000")


def _control(held: bool = True) -> tuple[FloodControl, LiveTable]:
    table = LiveTable("t1", "")
    table.window = (PROMPT, [])  # head = the prompt: the client has seen it
    pending = {0: SimpleNamespace(sequence=PROMPT)}
    table.session = SimpleNamespace(phase=PLAYING, hand=SimpleNamespace(pending=pending))
    registry = SimpleNamespace(get=lambda tid: table if held and tid == "t1" else None)
    settings = GatewaySettings(secret=SECRET, seat_calls_per_second=0.001, seat_call_burst=1)
    return FloodControl(settings, registry), table  # type: ignore[arg-type]


def _answer(seat: int = 0, last: int = PROMPT) -> pb.ActRequest:
    token = sign_seat_token(SECRET, "t1", seat)
    return pb.ActRequest(
        table_id="t1",
        seat_token=token,
        request_id="r",
        last_sequence=last,
        action=pb.Action(**{"pass": pb.Pass()}),
    )


def _spend(control: FloodControl, seat: int = 0) -> None:
    hint = pb.GetHintRequest(table_id="t1", seat_token=sign_seat_token(SECRET, "t1", seat))
    control.admit("GetHint", hint, CONTEXT)
    with pytest.raises(ResourceExhausted):
        control.admit("GetHint", hint, CONTEXT)


def test_racing_answers_to_one_prompt_get_one_free_pass():
    control, _ = _control()
    _spend(control)
    free, refused = [], []
    start = threading.Barrier(16)

    def race() -> None:
        start.wait()
        try:
            free.append(control.admit("Act", _answer(), CONTEXT))
        except ResourceExhausted:
            refused.append(1)

    threads = [threading.Thread(target=race) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (len(free), len(refused)) == (1, 15)
    assert free[0].free_key  # charged if the table refuses it


def test_a_refused_free_answer_is_charged():
    control, _ = _control()
    admitted = control.admit("Act", _answer(), CONTEXT)  # free: the budget is untouched
    hint = pb.GetHintRequest(table_id="t1", seat_token=sign_seat_token(SECRET, "t1", 0))
    admitted.refused(FailedPrecondition("not a legal action"))  # now it is spent
    with pytest.raises(ResourceExhausted):
        control.admit("GetHint", hint, CONTEXT)


def test_a_prompt_not_yet_written_is_no_free_answer():
    control, table = _control()
    table.window = (PROMPT - 1, [])  # the prompt's event is not written: nobody saw it
    _spend(control)
    with pytest.raises(ResourceExhausted):
        control.admit("Act", _answer(last=PROMPT - 1), CONTEXT)


def test_a_replica_without_the_table_sends_answers_on_and_refuses_the_rest():
    control, _ = _control(held=False)
    assert control.admit("Act", _answer(), CONTEXT).deferred is None  # within the budget
    sent_on = control.admit("Act", _answer(), CONTEXT)
    assert isinstance(sent_on.deferred, ResourceExhausted)  # the owner decides
    assert control.admit("GetTableState", _answer(), CONTEXT).deferred is not None
    with pytest.raises(ResourceExhausted):  # never the server's asking
        hint = pb.GetHintRequest(table_id="t1", seat_token=_answer().seat_token)
        control.admit("GetHint", hint, CONTEXT)
    forged = _answer()
    forged.seat_token = forged.seat_token[:-2] + "xx"
    control.admit("Act", forged, CONTEXT)  # unverified: counted per address, never sent on
    with pytest.raises(ResourceExhausted):
        control.admit("Act", forged, CONTEXT)


def test_an_outage_is_not_charged():
    control, _ = _control()
    admitted = control.admit("Act", _answer(), CONTEXT)
    admitted.refused(NotFound("gone"))  # a refusal: charged
    control2, _ = _control()
    again = control2.admit("Act", _answer(), CONTEXT)
    again.refused(Unavailable("NOT_OWNER", reason="NOT_OWNER"))  # not the caller's fault
    hint = pb.GetHintRequest(table_id="t1", seat_token=sign_seat_token(SECRET, "t1", 0))
    control2.admit("GetHint", hint, CONTEXT)  # the budget is whole
    with pytest.raises(ResourceExhausted):
        control.admit("GetHint", hint, CONTEXT)
