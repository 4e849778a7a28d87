"""A repeated request id returns the first result, refusals included (status code and
message), and applies nothing: a request refused once is not evaluated again later."""

from __future__ import annotations

import uuid

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb

from services.gateway.tables.records import Refusal, RequestRecord
from shared.errors import Aborted, FailedPrecondition
from tests.service.gateway.test_gateway_servicer import new_table
from tests.support.tables import act, discard, state, wait_prompt


def refusal(fn) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        fn()
    return err.value.code(), err.value.details()


def test_a_refused_request_id_is_refused_again_even_when_now_legal(gateway):
    stub = gateway
    t = new_table(stub)
    view = wait_prompt(stub, t)
    held = set(view.seats[0].concealed)
    missing = next(v for v in range(1, 35) if v not in held)
    legal = view.prompt.options.discards[0]
    rid = uuid.uuid4().hex
    first = refusal(lambda: act(stub, t, discard(missing), rid=rid))
    assert first[0] == grpc.StatusCode.FAILED_PRECONDITION
    before = state(stub, t).SerializeToString()
    # The same id with an action that would be legal now: the first answer, nothing applied.
    again = refusal(lambda: act(stub, t, discard(legal), rid=rid))
    assert again == first
    assert state(stub, t).SerializeToString() == before
    # A new id is evaluated.
    ok = act(stub, t, discard(legal))
    assert not ok.replayed and ok.sequence > view.last_sequence


def test_a_stale_request_id_stays_aborted(gateway):
    stub = gateway
    t = new_table(stub)
    view = wait_prompt(stub, t)
    legal = view.prompt.options.discards[0]
    rid = uuid.uuid4().hex
    first = refusal(lambda: act(stub, t, discard(legal), rid=rid, last=1))
    assert first[0] == grpc.StatusCode.ABORTED
    again = refusal(lambda: act(stub, t, discard(legal), rid=rid, last=view.last_sequence))
    assert again == first
    assert state(stub, t).SerializeToString() == view.SerializeToString()


def test_an_accepted_request_id_replays_its_sequence(gateway):
    stub = gateway
    t = new_table(stub)
    view = wait_prompt(stub, t)
    legal = view.prompt.options.discards[0]
    rid = uuid.uuid4().hex
    first = act(stub, t, discard(legal), rid=rid)
    again = act(stub, t, pb.Action(pong=pb.Pong()), rid=rid, last=1)
    assert (again.sequence, again.replayed) == (first.sequence, True)


def test_kept_refusals_survive_the_store_and_records_of_version_1_still_read():
    err = Aborted("stale: seen 3, prompt 9", last_sequence=3)
    raw = RequestRecord(5, refusal=Refusal.of(err)).encode()
    with pytest.raises(Aborted) as again:
        RequestRecord.decode(raw).replay()
    assert again.value.message == err.message and again.value.details == {"last_sequence": "3"}
    assert RequestRecord.decode(b'{"result": 17, "at": 4}').replay() == 17  # without "v": v1
    illegal = FailedPrecondition("pong is not possible", reason="ILLEGAL_ACTION")
    with pytest.raises(FailedPrecondition) as exc:
        RequestRecord.decode(RequestRecord(2, refusal=Refusal.of(illegal)).encode()).replay()
    assert exc.value.reason == "ILLEGAL_ACTION"
    with pytest.raises(ValueError, match="version 2"):
        RequestRecord.decode(b'{"v": 2, "result": 1, "at": 1}')
