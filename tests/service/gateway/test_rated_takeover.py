"""Whether a table reports its hands to matchmaking's ledger is kept with the table: a replica
that takes a table over from its log keeps reporting a matchmaking table and keeps a casual
table silent."""

from __future__ import annotations

import time

import pytest

from infra.store.memory import MemoryStore
from services.gateway.tables import OUTBOX, TableManager, TableSpec, read_table_log
from tests.support.sessions import inprocess_ports
from tests.support.stacks import table_manager, table_spec


def _manager(store, ports, replica: str, **settings) -> TableManager:
    return table_manager(
        store, ports, seed=3, replica_id=replica, report_to_matchmaking=True, **settings
    )


def _spec(report_hands: bool) -> TableSpec:
    return table_spec(tag="quick/test", report_hands=report_hands)


def _wait_for(store, table_id: str, kind: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(e.kind == kind for e in read_table_log(store, table_id)):
            return
        time.sleep(0.02)
    raise AssertionError(f"no {kind} in table {table_id}'s log")


@pytest.mark.parametrize("report_hands", [True, False], ids=["matchmaking", "casual"])
def test_a_taken_over_table_keeps_whether_it_reports(report_hands):
    store = MemoryStore()
    ports = inprocess_ports()
    # The first replica deals, then its bots think for a minute and its lease lapses at once.
    first = _manager(store, ports, "gw-a", lease_ms=0, bot_delay_ms=60_000)
    table_id, _ = first.create_table(_spec(report_hands))
    _wait_for(store, table_id, "hand_started")
    first.close()
    second = _manager(store, ports, "gw-b")
    try:
        taken = second.table(table_id)
        assert taken is not first.tables[table_id]
        assert taken.report_hands is report_hands
        _wait_for(store, table_id, "table_finished")
        reports = [key for key, _ in store.scan(OUTBOX, f"{table_id}/")]
        assert len(reports) == (2 if report_hands else 0), reports
    finally:
        second.close()
