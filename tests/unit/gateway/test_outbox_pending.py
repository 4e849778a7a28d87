"""The outbox's sender counts the reports waiting in the store on every pass
(``mahjong_gateway_outbox_pending``, the backlog an alert watches): here matchmaking cannot be
reached (a closed port), so the reports stay and are counted, and the count falls to zero once
they are gone."""

from __future__ import annotations

import json
import socket
import time

import grpc
from prometheus_client import REGISTRY

from infra.store.memory import MemoryStore
from services.gateway.outbox import OutboxSender
from services.gateway.tables import OUTBOX


def _pending() -> float | None:
    return REGISTRY.get_sample_value("mahjong_gateway_outbox_pending")


def _until(check, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_pending_reports_are_counted_until_they_are_gone():
    store = MemoryStore()
    for n in range(3):
        payload = {"kind": "finished", "table_id": f"t_{n}", "tag": "quick/m", "hands_played": 1}
        store.put(OUTBOX, f"t_{n}/end", json.dumps(payload).encode())
    channel = grpc.insecure_channel(f"127.0.0.1:{_closed_port()}")
    sender = OutboxSender(store, channel, timeout=0.2, interval=0.02).start()
    try:
        _until(lambda: _pending() == 3)
        assert len(list(store.scan(OUTBOX))) == 3  # nothing was delivered
        for key, _ in list(store.scan(OUTBOX)):
            store.delete(OUTBOX, key)
        _until(lambda: _pending() == 0)
    finally:
        sender.close()
        channel.close()
