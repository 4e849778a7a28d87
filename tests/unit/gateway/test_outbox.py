"""The matchmaking outbox: reports stay in the store until matchmaking accepts them, are sent
in order (a table's hands before its end), and a failed send is retried later, never lost. A
table's reports are sent under its claim: never by two replicas' senders at once, and a sender
whose claim was taken over deletes nothing."""

from __future__ import annotations

import json
import time

import grpc
import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2

from infra.store.memory import MemoryStore
from services.gateway.outbox import CLAIM_PREFIX, OutboxSender
from services.gateway.tables import OUTBOX
from services.gateway.tables.records import ANSWERS, HandAnswerRecord


class Down(grpc.RpcError):
    def code(self):
        return grpc.StatusCode.UNAVAILABLE


class FakeMatchmaking:
    """Stands in for the MatchmakingService stub (unit test: no server)."""

    def __init__(self, fail_first: int) -> None:
        self.fail = fail_first
        self.hands: list = []
        self.finished: list = []

    def RecordHand(self, req, timeout, metadata=()):
        assert timeout > 0
        if self.fail:
            self.fail -= 1
            raise Down()
        self.hands.append(req)
        return self.answer(req)

    def answer(self, req):
        return matchmaking_pb2.RecordHandResponse()

    def TableFinished(self, req, timeout, metadata=()):
        self.finished.append(req)


def report(store, key, payload):
    store.put(OUTBOX, key, json.dumps(payload).encode())


def test_reports_survive_failures_and_go_out_in_order():
    store = MemoryStore()
    for n in (1, 2):
        report(
            store,
            f"t_1/h_{n}",
            {
                "kind": "hand",
                "hand_id": f"h_{n}",
                "table_id": "t_1",
                "tag": "x",
                "player_ids": ["a", "b", "c", "d"],
                "payments": [3, -1, -1, -1],
                "house": 0,
                "escaped_seat": 2 if n == 2 else None,
            },
        )
    report(
        store,
        "t_1/~finished",
        {"kind": "finished", "table_id": "t_1", "tag": "x", "hands_played": 2},
    )
    sender = OutboxSender(store, grpc.insecure_channel("127.0.0.1:1"))
    fake = FakeMatchmaking(fail_first=2)
    sender.stub = fake
    assert sender.flush() == 0  # matchmaking is down: nothing is lost
    assert len(list(store.scan(OUTBOX))) == 3
    assert sender.flush() == 0
    assert sender.flush() == 3
    assert [h.hand_id for h in fake.hands] == ["h_1", "h_2"]
    assert fake.hands[1].escaped_seat == 3 and fake.hands[0].escaped_seat == 0
    assert list(fake.hands[0].payments) == [3, -1, -1, -1]
    assert [f.hands_played for f in fake.finished] == [2]
    assert not list(store.scan(OUTBOX))


def hand_row(store, table: str, n: int) -> None:
    payload = {
        "kind": "hand",
        "hand_id": f"{table}-h{n}",
        "table_id": table,
        "tag": "x",
        "player_ids": ["a", "b", "c", "d"],
        "payments": [3, -1, -1, -1],
        "house": 0,
        "escaped_seat": None,
    }
    report(store, f"{table}/{table}-h{n}", payload)


def sender_on(store, owner: str) -> tuple[OutboxSender, FakeMatchmaking]:
    sender = OutboxSender(store, grpc.insecure_channel("127.0.0.1:1"), owner=owner)
    fake = FakeMatchmaking(fail_first=0)
    sender.stub = fake
    return sender, fake


def test_a_table_claimed_by_another_replicas_sender_is_left_to_it():
    store = MemoryStore()
    for table in ("t_1", "t_2"):
        hand_row(store, table, 1)
    other = store.acquire_lease(CLAIM_PREFIX + "t_1", "gw-b", 10_000)  # b is sending t_1
    sender, fake = sender_on(store, "gw-a")
    assert sender.flush() == 1 and [h.hand_id for h in fake.hands] == ["t_2-h1"]
    assert [k for k, _ in store.scan(OUTBOX)] == ["t_1/t_1-h1"]
    assert not store.get_lease(CLAIM_PREFIX + "t_2").held  # released once sent
    store.release_lease(other)
    assert sender.flush() == 1 and not list(store.scan(OUTBOX))


def test_a_sender_whose_claim_was_taken_over_deletes_nothing_and_stops():
    """A sender paused past its claim: the row it delivered stays for the new claimant, whose
    resend matchmaking answers as a repeat (applied once)."""
    store = MemoryStore()
    for n in (1, 2):
        hand_row(store, "t_1", n)
    sender, fake = sender_on(store, "gw-a")
    sender.claim_ttl_ms = 1

    def paused_send(req, timeout, metadata=()):
        fake.hands.append(req)
        time.sleep(0.01)  # the claim runs out; another sender takes the table
        store.acquire_lease(CLAIM_PREFIX + "t_1", "gw-b", 10_000)
        return matchmaking_pb2.RecordHandResponse()

    fake.RecordHand = paused_send
    assert sender.flush() == 1  # sent h1, but its answer and its delete were refused
    assert [k for k, _ in store.scan(OUTBOX)] == ["t_1/t_1-h1", "t_1/t_1-h2"]
    assert not list(store.scan(ANSWERS))  # the new claimant's resend keeps it
    assert store.get_lease(CLAIM_PREFIX + "t_1").owner == "gw-b"  # not released by a


def test_a_hands_answer_is_kept_for_its_table_before_its_row_goes():
    """RecordHand's bankrupt seats (破产) and their bots are stored by the hand's key, where the
    table looks before its next deal; an answer without any is stored too (the table waits for
    it either way)."""
    store = MemoryStore()
    hand_row(store, "t_1", 1)
    hand_row(store, "t_1", 2)
    fake = FakeMatchmaking(fail_first=0)
    fake.answer = lambda req: matchmaking_pb2.RecordHandResponse(
        bankrupt_seats=[2] if req.hand_id == "t_1-h2" else [],  # SEAT_1: seat 1
        replacement_player_ids=["bot-t_1-s1"] if req.hand_id == "t_1-h2" else [],
    )
    sender = OutboxSender(store, grpc.insecure_channel("127.0.0.1:1"))
    sender.stub = fake
    assert sender.flush() == 2
    assert not list(store.scan(OUTBOX))
    answers = {k: HandAnswerRecord.decode(r.value) for k, r in store.scan(ANSWERS)}
    assert answers == {
        "t_1/t_1-h1": HandAnswerRecord(),
        "t_1/t_1-h2": HandAnswerRecord(((1, "bot-t_1-s1"),)),
    }


def test_an_answer_that_does_not_pair_seats_with_bots_keeps_the_report_to_send_again():
    store = MemoryStore()
    hand_row(store, "t_1", 1)
    fake = FakeMatchmaking(fail_first=0)
    fake.answer = lambda req: matchmaking_pb2.RecordHandResponse(bankrupt_seats=[1, 2])
    sender = OutboxSender(store, grpc.insecure_channel("127.0.0.1:1"))
    sender.stub = fake
    with pytest.raises(ValueError, match="one bot per seat"):
        sender.flush()
    assert [k for k, _ in store.scan(OUTBOX)] == ["t_1/t_1-h1"]
    assert not list(store.scan(ANSWERS))
    fake.answer = lambda req: matchmaking_pb2.RecordHandResponse(bankrupt_seats=[7])
    with pytest.raises(ValueError, match="out of range"):
        sender.flush()
    assert not list(store.scan(ANSWERS))
