"""The matchmaking outbox: reports stay in the store until matchmaking accepts them, are sent
in order (a table's hands before its end), and a failed send is retried later, never lost."""

from __future__ import annotations

import json

import grpc

from services.gateway.outbox import OutboxSender
from services.gateway.tables import OUTBOX
from shared.store.memory import MemoryStore


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
