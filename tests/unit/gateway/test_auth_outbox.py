"""The outbox decides per status code: a report matchmaking refuses for good (not its table,
malformed) is dropped with an error log and a metric instead of blocking every later report
forever; UNAUTHENTICATED (a configuration error) is kept and retried, loudly and counted; the
internal token goes with every report."""

from __future__ import annotations

import json

import grpc
import pytest
import structlog
from mahjong.matchmaking.v1 import matchmaking_pb2

from infra.store.memory import MemoryStore
from services.gateway import outbox as O
from services.gateway.outbox import OutboxSender
from services.gateway.tables import OUTBOX
from services.gateway.tables.records import ANSWERS, HandAnswerRecord


class Refused(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, message: str = "refused") -> None:
        self._code, self._message = code, message

    def code(self):
        return self._code

    def details(self):
        return self._message


class FakeMatchmaking:
    """Answers each hand id with a scripted status code (OK when absent)."""

    def __init__(self, answers: dict[str, grpc.StatusCode] | None = None) -> None:
        self.answers = answers or {}
        self.hands: list[str] = []
        self.finished: list[str] = []
        self.metadata: list = []

    def RecordHand(self, req, timeout, metadata=()):
        self.metadata.append(tuple(metadata))
        code = self.answers.get(req.hand_id)
        if code is not None:
            raise Refused(code, f"{code.name} for {req.hand_id}")
        self.hands.append(req.hand_id)
        return matchmaking_pb2.RecordHandResponse()

    def TableFinished(self, req, timeout, metadata=()):
        self.metadata.append(tuple(metadata))
        code = self.answers.get("finished")
        if code is not None:
            raise Refused(code)
        self.finished.append(req.table_id)


def hand(store, n: int, table: str = "t_1") -> None:
    payload = {
        "kind": "hand",
        "hand_id": f"h_{n}",
        "table_id": table,
        "tag": "quick/m",
        "player_ids": ["a", "b", "c", "d"],
        "payments": [3, -1, -1, -1],
        "house": 0,
        "escaped_seat": None,
    }
    store.put(OUTBOX, f"{table}/h_{n}", json.dumps(payload).encode())


def sender(store, fake, token: str = "tok") -> OutboxSender:
    s = OutboxSender(store, grpc.insecure_channel("127.0.0.1:1"), internal_token=token)
    s.stub = fake
    return s


def metric(counter, **labels) -> float:
    return counter.labels(**labels)._value.get()


def test_every_report_carries_the_internal_token():
    store, fake = MemoryStore(), FakeMatchmaking()
    hand(store, 1)
    store.put(
        OUTBOX,
        "t_1/~finished",
        json.dumps(
            {"kind": "finished", "table_id": "t_1", "tag": "quick/m", "hands_played": 1}
        ).encode(),
    )
    assert sender(store, fake, "s3cret").flush() == 2
    assert fake.metadata == [(("x-mahjong-internal-token", "s3cret"),)] * 2


def test_no_token_sends_no_metadata():
    store, fake = MemoryStore(), FakeMatchmaking()
    hand(store, 1)
    sender(store, fake, "").flush()
    assert fake.metadata == [()]


@pytest.mark.parametrize(
    "code",
    [
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
    ],
)
def test_a_permanent_refusal_is_dropped_and_later_reports_go_out(code):
    store = MemoryStore()
    for n in (1, 2, 3):
        hand(store, n)
    fake = FakeMatchmaking({"h_2": code})
    before = metric(O.OUTBOX_DROPPED, kind="hand", code=code.name)
    s = sender(store, fake)
    with structlog.testing.capture_logs() as logs:
        assert s.flush() == 2
    assert fake.hands == ["h_1", "h_3"]
    assert not list(store.scan(OUTBOX))  # nothing blocks the queue any more
    dropped = [r for r in logs if r["event"] == "outbox_report_dropped"]
    assert len(dropped) == 1 and dropped[0]["log_level"] == "error"
    assert dropped[0]["report"]["hand_id"] == "h_2" and dropped[0]["code"] == code.name
    assert f"{code.name} for h_2" in dropped[0]["error"]
    assert metric(O.OUTBOX_DROPPED, kind="hand", code=code.name) == before + 1
    assert s.flush() == 0 and fake.hands == ["h_1", "h_3"]
    # its table waits for an answer before its next deal: a refused one, no seat changes
    (dropped_answer,) = [r for k, r in store.scan(ANSWERS) if k.endswith("/h_2")]
    assert HandAnswerRecord.decode(dropped_answer.value) == HandAnswerRecord(refused=True)


def test_unauthenticated_is_kept_retried_and_counted():
    store = MemoryStore()
    hand(store, 1)
    hand(store, 2)
    fake = FakeMatchmaking({"h_1": grpc.StatusCode.UNAUTHENTICATED})
    s = sender(store, fake, "wrong")
    before = metric(O.OUTBOX_MISCONFIGURED, code="UNAUTHENTICATED")
    assert s.flush() == 0 and s.flush() == 0
    assert metric(O.OUTBOX_MISCONFIGURED, code="UNAUTHENTICATED") == before + 2
    assert len(list(store.scan(OUTBOX))) == 2
    del fake.answers["h_1"]  # the operator fixed the token
    assert s.flush() == 2 and fake.hands == ["h_1", "h_2"]


@pytest.mark.parametrize(
    "code",
    [
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    ],
)
def test_transient_failures_keep_the_report_and_its_order(code):
    store = MemoryStore()
    hand(store, 1)
    hand(store, 2)
    fake = FakeMatchmaking({"h_1": code})
    s = sender(store, fake)
    assert s.flush() == 0 and fake.hands == []  # h_2 waits behind h_1: a table's order holds
    del fake.answers["h_1"]
    assert s.flush() == 2 and fake.hands == ["h_1", "h_2"]


def test_classify_names_each_decision():
    assert O.classify(grpc.StatusCode.NOT_FOUND) == O.DROP
    assert O.classify(grpc.StatusCode.UNAUTHENTICATED) == O.MISCONFIGURED
    assert O.classify(grpc.StatusCode.PERMISSION_DENIED) == O.MISCONFIGURED
    assert O.classify(grpc.StatusCode.UNAVAILABLE) == O.RETRY
