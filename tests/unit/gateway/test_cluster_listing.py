"""ListTables across replicas (services/gateway/tables/listing.py) over real TableManagers on
one store: the owner's word on the tables it runs, a silent owner's tables read from their logs,
a dead owner's (its lease expired, nobody took them over yet) too, its halted table among
them, filters applied; and the
operator's claim a replica carries to the owner (services/gateway/delegation.py): signed for
one RPC on one target, short-lived, refused when forged or replayed elsewhere."""

from __future__ import annotations

import pytest

from infra.store.memory import MemoryStore
from services.gateway import delegation
from services.gateway.domain.session import Seat
from services.gateway.tables.listing import cluster_tables, summary_from_log
from shared.errors import PermissionDenied
from tests.support.probes import wait_for
from tests.support.sessions import inprocess_ports
from tests.support.stacks import table_manager, table_spec

SLOW = {"discard_ms": 600_000, "claim_ms": 600_000, "bot_delay_ms": 0}


def _playing(manager, tag: str, stake: int = 1) -> str:
    seats = [Seat(), Seat("b1", bot=True), Seat("b2", bot=True), Seat("b3", bot=True)]
    t, _ = manager.create_table(table_spec(seats, max_hands=4, tag=tag, stake=stake))
    manager.join(t, "p0", "P0", 0, False, request_id="j0")
    table = manager.table(t)
    wait_for(lambda: table.session.head()[0] != "", 5.0, "the hand dealt")
    return t


def test_every_replicas_tables_are_listed_whoever_answers():
    store = MemoryStore()
    ports = inprocess_ports()
    a = table_manager(store, ports, seed=1, replica_id="a", **SLOW)
    b = table_manager(store, ports, seed=2, replica_id="b", **SLOW)
    c = table_manager(store, ports, seed=3, replica_id="c", lease_ms=300, **SLOW)
    try:
        ta = _playing(a, "room/111111")
        tb = _playing(b, "tournament/T-1/round/1/table/0", stake=2)
        tc = _playing(c, "quick/m1")
        halted = _playing(c, "quick/m2")
        with c.table(halted).lock:
            c.table(halted).session.halt(RuntimeError("a bug"))
        for m in (a, b):  # their keepers stop: neither takes c's tables over meanwhile
            m.stop.set()  # (their own 30 s leases run on, unrenewed, past the test)
        c.stop.set()  # c dies: its lease is no longer renewed, nothing released
        c.leases.thread.join(timeout=5)
        wait_for(lambda: not store.get_lease("gateway-table/" + tc).held, 5.0, "c's lease out")

        asked: list[list[str]] = []

        def b_answers(peers):
            asked.append(peers)
            return {p: (b.operations.list_tables("", 0, False, leased_only=True)
                        if p == "b" else None) for p in peers}  # fmt: skip

        def b_silent(peers):
            return dict.fromkeys(peers)

        mine = a.operations.list_tables("", 0, False)
        listed = cluster_tables(store, "a", mine, b_answers, "", 0, False)
        assert [t.table_id for t in listed] == sorted([ta, tb, tc, halted])
        assert asked == [["b"]]  # c's lease no longer runs: it is not asked
        by_id = {t.table_id: t for t in listed}
        assert by_id[tb].chips and by_id[tb].stake == 2  # b's own word
        # c is dead: its table read from its log (until a replica takes it over)
        assert by_id[tc].tag == "quick/m1" and by_id[tc].phase in ("playing", "between_hands")

        silent = cluster_tables(store, "a", mine, b_silent, "", 0, False)
        from_log = {t.table_id: t for t in silent}[tb]
        owners = {t.table_id: t for t in b.operations.list_tables("", 0, False)}[tb]
        assert from_log.chips == () and from_log.phase == owners.phase == "playing"
        assert (from_log.hand_id, from_log.hand_number, from_log.player_ids) == (
            owners.hand_id,
            owners.hand_number,
            owners.player_ids,
        )
        assert from_log.last_sequence == owners.last_sequence
        # filters apply to every source
        only = cluster_tables(store, "a", a.operations.list_tables("tour", 0, False), b_silent,
                              "tour", 0, False)  # fmt: skip
        assert [t.table_id for t in only] == [tb]
        assert [t.table_id for t in cluster_tables(store, "a", [], b_silent, "", 2, False)] == [tb]
        # the dead owner's halted table: listed, halted
        (row,) = cluster_tables(store, "a", [], b_silent, "", 0, True)
        assert (row.table_id, row.phase, row.finish_reason) == (halted, "halted", "halted")

        # a finished table is no longer listed from its log
        b.operations.end_table(tb, "test", "op")
        assert summary_from_log(store, tb).phase == "finished"
        listed = cluster_tables(store, "a", [], b_silent, "", 0, False)
        assert tb not in [t.table_id for t in listed]
    finally:
        for m in (a, b, c):
            m.close()


SECRET = b"seat-secret"


def _claim(**kw):
    fields = {"actor": "spiffe://mahjong.local/operator", "via": "gw-b", "method": "EndTable",
              "target": "t1", "at_ms": 1_000_000} | kw  # fmt: skip
    return delegation.Claim(**fields)


def test_a_claim_is_read_only_as_signed_for_its_call():
    value = delegation.sign(SECRET, _claim())
    got = delegation.read(SECRET, value, "EndTable", "t1", 1_000_500)
    assert got.audit_actor == "spiffe://mahjong.local/operator via gateway gw-b"
    refusals = [
        (b"another secret", value, "EndTable", "t1", 1_000_500),  # forged
        (SECRET, value, "InspectTable", "t1", 1_000_500),  # another RPC
        (SECRET, value, "EndTable", "t2", 1_000_500),  # another table
        (SECRET, value, "EndTable", "t1", 1_000_000 + delegation.CLAIM_TTL_MS + 1),  # stale
        (SECRET, value + "x", "EndTable", "t1", 1_000_500),  # tampered signature
        (SECRET, "not a claim", "EndTable", "t1", 1_000_500),
        (SECRET, delegation.sign(SECRET, _claim(actor="")), "EndTable", "t1", 1_000_500),
    ]
    mac = value.split(".")[1]
    forged_body = delegation.sign(b"x", _claim(actor="session:p_evil")).split(".")[0]
    refusals.append((SECRET, f"{forged_body}.{mac}", "EndTable", "t1", 1_000_500))
    for args in refusals:
        with pytest.raises(PermissionDenied) as refused:
            delegation.read(*args)
        assert refused.value.reason == "CLAIM_INVALID"
