"""The gateway outbox across replicas: reports for tables matchmaking allocated, written to the
store as a table's owner writes them, and a gateway replica's sender (a spawned process) that
delivers whatever it can claim until the outbox is empty."""

from __future__ import annotations

import json
import time

from infra.store import Store, open_store
from services.gateway.outbox import OutboxSender
from services.gateway.tables import OUTBOX
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.domain.tables.tags import quick_tag
from services.matchmaking.storage.table_records import TableRecords
from tests.support.tls import as_workload

SEATS = 4


def players(table: int) -> list[str]:
    return [f"p{table}-{seat}" for seat in range(SEATS)]


def payments(table: int, hand: int) -> list[int]:
    out = [-1] * SEATS
    out[(table + hand) % SEATS] = SEATS - 1
    return out


FUND = 100  # each player's silver before the hands


def seed(store: Store, tables: int, hands: int) -> None:
    """``tables`` tables allocated by matchmaking, each with ``hands`` settled hands and its
    end waiting in the outbox (what each table's owner writes, in the same key layout)."""
    for t in range(tables):
        table_id, tag = f"t_{t:04d}", quick_tag(f"m{t:04d}")
        ids = players(t)
        for pid in ids:  # silver to lose: the ledger refuses a balance below zero
            ledger.grant(store, pid, "outbox-test", FUND, 0.0)
        allocated_tables.record(
            TableRecords(store),
            allocated_tables.AllocatedTable(table_id, tag, tuple(ids), f"req-{t}"),
        )
        for h in range(hands):
            payload = {
                "kind": "hand",
                "hand_id": f"{table_id}-h{h:03d}",
                "table_id": table_id,
                "tag": tag,
                "player_ids": ids,
                "payments": payments(t, h),
                "house": 0,
                "escaped_seat": None,
            }
            store.put(OUTBOX, f"{table_id}/{payload['hand_id']}", json.dumps(payload).encode())
        end = {"kind": "finished", "table_id": table_id, "tag": tag, "hands_played": hands}
        store.put(OUTBOX, f"{table_id}/~finished", json.dumps(end).encode())


def check_books(store: Store, tables: int, hands: int) -> None:
    """Every hand in the ledger once, balances as the hands say, the books reconciled."""
    for t in range(tables):
        assert ledger.hands_of_table(store, f"t_{t:04d}") == hands
        for seat, pid in enumerate(players(t)):
            want = sum(payments(t, h)[seat] for h in range(hands))
            assert ledger.balance(store, pid) == FUND + want, (pid, want)
            assert len(ledger.entries(store, pid)) == hands + 1  # and the grant
    assert ledger.reconcile(store) == []


def pending(store: Store) -> int:
    return sum(1 for _ in store.scan(OUTBOX))


def send_process(url: str, mm_address: str, token: str, name: str, barrier, queue) -> None:
    """One gateway replica's sender on the shared store until its outbox is empty; puts
    ``(name, reports this sender delivered)``. ``mm_address`` is matchmaking's internal port,
    called with the gateway's certificate (mutual TLS) as a replica does."""
    store = open_store(url, pool_size=2)
    channel = as_workload(mm_address, "matchmaking", "gateway")
    try:
        sender = OutboxSender(store, channel, interval=0.01, internal_token=token, owner=name)
        barrier.wait(60)
        sender.start()
        deadline = time.monotonic() + 90
        while pending(store) and time.monotonic() < deadline:
            time.sleep(0.05)
        sender.close()
        sender._thread.join(10)
        queue.put((name, sender.sent))
    except BaseException as exc:
        queue.put((name, repr(exc)))
        raise
    finally:
        channel.close()
        store.close()
