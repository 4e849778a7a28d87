"""An operator ends a table (TableOperations.end_table over a TableManager with in-process
wall, rules and scoring): a running hand is voided — no hand result, no hand report, its seed
revealed — and the table finishes ``ended_by_operator``, reported to matchmaking's outbox; a
halted table ends the same way; ending twice, an unknown table and a missing reason are refused
and change nothing; every attempt is in the audit log. ListTables filters what this replica
holds."""

from __future__ import annotations

import pytest

from infra.store.memory import MemoryStore
from services.gateway.bots import engine_policy, make_bot
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import HALTED, Seat
from services.gateway.tables.log import read_table_log
from services.gateway.tables.records import OUTBOX
from shared.audit import AUDIT_LOG, AuditEntry
from shared.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from tests.doubles.scheduler import ManualScheduler
from tests.support.probes import wait_for
from tests.support.sessions import inprocess_ports
from tests.support.stacks import table_manager, table_spec

SLOW = {
    "discard_ms": 600_000,
    "claim_ms": 600_000,
    "bot_delay_ms": 0,
    "auto_play_delay_ms": 0,
    "report_to_matchmaking": True,
}
OP = "spiffe://mahjong.local/operator"


def _playing(manager, **spec):
    seats = [Seat(), Seat("b1", bot=True), Seat("b2", bot=True), Seat("b3", bot=True)]
    t, _ = manager.create_table(table_spec(seats, report_hands=True, max_hands=4, **spec))
    manager.join(t, "p0", "P0", 0, False, request_id="j0")
    table = manager.table(t)
    wait_for(lambda: table.session.head()[0] != "", 5.0, "the hand dealt")
    return t, table


def _audit(store) -> list[AuditEntry]:
    return [AuditEntry.load(raw) for _, raw in store.read_log(AUDIT_LOG)]


def test_ending_a_playing_table_voids_its_hand_and_reports_the_end():
    manager = table_manager(MemoryStore(), inprocess_ports(), seed=3, **SLOW)
    try:
        t, table = _playing(manager, tag="room/123456", stake=2)
        other, _ = _playing(manager, tag="quick/m1")
        listed = manager.operations.list_tables("room/", 0, False)
        assert [s.table_id for s in listed] == [t]
        assert listed[0].phase == "playing" and listed[0].player_ids[0] == "p0"
        assert [s.table_id for s in manager.operations.list_tables("", 2, False)] == [t]
        assert manager.operations.list_tables("", 0, True) == []
        with pytest.raises(InvalidArgument):
            manager.operations.list_tables("", -1, False)
        hand_id = table.session.head()[0]
        with pytest.raises(InvalidArgument):
            manager.operations.end_table(t, "  ", OP)  # no reason: nothing changes
        assert table.session.phase == "playing"

        ended = manager.operations.end_table(t, "engine stuck, ticket 9", OP)
        assert ended.voided_hand_id == hand_id and ended.seed and ended.hands_played == 0
        kinds = [e.kind for e in read_table_log(manager.store, t)]
        assert kinds[-2:] == ["seed_revealed", "table_finished"]
        assert "hand_result" not in kinds
        finished = read_table_log(manager.store, t)[-1]
        assert finished.event.reason == "ended_by_operator"
        reports = [k for k, _ in manager.store.scan(OUTBOX, f"{t}/")]
        assert reports == [f"{t}/~finished"]  # no hand report: nothing paid

        with pytest.raises(FailedPrecondition) as twice:
            manager.operations.end_table(t, "again", OP)
        assert twice.value.reason == "TABLE_FINISHED"
        with pytest.raises(NotFound):
            manager.operations.end_table("no-such-table", "why", OP)
        assert table.session.phase == "finished"
        assert manager.table(other).session.phase == "playing"  # the other table plays on

        # a halted table (its engine failed) ends the same way
        halted = manager.table(other)
        with halted.lock:
            halted.session.halt(RuntimeError("a bug"))
        assert [s.table_id for s in manager.operations.list_tables("", 0, True)] == [other]
        assert manager.table(other).session.phase == HALTED
        manager.operations.end_table(other, "halted on a bug", OP)
        assert [e.kind for e in read_table_log(manager.store, other)][-1] == "table_finished"

        entries = _audit(manager.store)
        assert [(e.action, e.target, e.result) for e in entries] == [
            ("EndTable", t, "INVALID_ARGUMENT"),
            ("EndTable", t, "OK"),
            ("EndTable", t, "FAILED_PRECONDITION"),
            ("EndTable", "no-such-table", "NOT_FOUND"),
            ("EndTable", other, "OK"),
        ]
        assert entries[1].actor == OP and entries[1].reason == "engine stuck, ticket 9"
        assert hand_id in entries[1].detail
    finally:
        manager.close()


def test_a_suspended_players_seat_goes_to_auto_play_then_to_a_bot():
    manager = table_manager(MemoryStore(), inprocess_ports(), seed=5, **SLOW)
    try:
        t, table = _playing(manager, tag="quick/m2")
        token = manager.join(t, "p0", "P0", 0, False, request_id="j0")[1]  # its retry
        seat, changed = manager.operations.suspend_player(t, "p0")
        assert (seat, changed) == (0, True)
        assert manager.operations.suspend_player(t, "p0") == (0, False)
        with pytest.raises(NotFound):
            manager.operations.suspend_player(t, "b9")
        # a replica that takes the table over reads the suspension back from the log
        rebuilt = restore_session(
            t,
            read_table_log(manager.store, t),
            timers={"discard_ms": None, "claim_ms": None},
            ports=inprocess_ports(),
            scheduler=ManualScheduler(),
            emit=lambda ev: 0,
            report=lambda kind, data: None,
            policy=engine_policy(make_bot("random", seed=1)),
        )
        assert 0 in rebuilt.presence.suspended and 0 in rebuilt.presence.disconnected
        session = table.session
        kinds = [(e.kind, getattr(e.event, "reason", "")) for e in read_table_log(manager.store, t)]
        assert ("seat_changed", "suspended") in kinds
        for call in (
            lambda: manager.view(t, token, None),
            lambda: manager.leave(t, token, "l1"),
            lambda: manager.join(t, "p0", "P0", 0, False, seat_token=token),
        ):
            with pytest.raises(PermissionDenied) as refused:
                call()
            assert refused.value.reason == "PLAYER_SUSPENDED"
        # 托管 plays the hand out; at its end the seat escapes and a bot takes it
        wait_for(lambda: session.seats[0].left, 20.0, "the suspended seat handed to a bot")
        assert session.hands_played == 1 and 0 in session.presence.suspended
    finally:
        manager.close()
