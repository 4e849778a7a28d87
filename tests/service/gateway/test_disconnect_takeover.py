"""掉线 across a takeover: the disconnection is an event of the table's log, so the replica that
takes the table over from its log keeps the seat disconnected and settles its escape at the
hand's end, and every hand of the log still verifies."""

from __future__ import annotations

import time

from infra.store.memory import MemoryStore
from services.gateway.domain.replay import export_hand
from services.gateway.tables import read_table_log
from services.gateway.verify import verify_hand
from shared.ruleset import resolve_ruleset
from tests.support.sessions import inprocess_ports, seats
from tests.support.stacks import table_manager, table_spec

OVERRIDES = {"timers.disconnect_grace_seconds": "1"}


def _events(store, table_id):
    return read_table_log(store, table_id)


def _wait_for(store, table_id, found, what: str, within: float = 30) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if found(_events(store, table_id)):
            return
        time.sleep(0.02)
    raise AssertionError(f"no {what} in table {table_id}'s log")


def test_a_disconnection_logged_by_one_replica_is_settled_by_the_next():
    store = MemoryStore()
    ports = inprocess_ports()
    # Replica A: nobody opens a stream of seat 0's player, whose grace (1 s) runs out during
    # the first hand; then every decision waits a minute, and A dies (its lease lapses at once).
    first = table_manager(
        store, ports, seed=3, replica_id="gw-a", lease_ms=0, bot_delay_ms=60_000,
        auto_play_delay_ms=60_000, discard_ms=60_000, claim_ms=60_000,
    )  # fmt: skip
    spec = table_spec(
        seats(1, prefix="p"),
        ruleset=resolve_ruleset("shanghai-qiaoma", OVERRIDES),
        overrides=OVERRIDES,
        max_hands=2,
    )
    table_id, _ = first.create_table(spec)

    def disconnected(log):
        return any(
            e.kind == "seat_changed" and e.event.reason == "disconnected" and e.event.seat == 0
            for e in log
        )

    _wait_for(store, table_id, disconnected, "disconnected of seat 0")
    before = _events(store, table_id)
    assert not any(e.kind == "hand_result" for e in before)  # still in the first hand
    first.close()
    second = table_manager(
        store, ports, seed=3, replica_id="gw-b", discard_ms=60_000, auto_play_delay_ms=0
    )
    try:
        taken = second.table(table_id)
        assert taken.session.presence.disconnected == {0}
        assert taken.session.seats[0].auto_play

        def over(log):
            return any(e.kind == "table_finished" for e in log)

        _wait_for(store, table_id, over, "table_finished")
    finally:
        second.close()
    log = _events(store, table_id)
    results = [e.event for e in log if e.kind == "hand_result"]
    hand, esc = results[0], results[1]
    assert hand.outcome in ("win", "draw")
    assert esc.outcome == "escape" and esc.escaped_seat == 0
    assert esc.escape_reason == "disconnected" and esc.hand_id == hand.hand_id
    assert esc.payments == (-2, 0, 0, 0) and esc.house == 2
    left = [e.event for e in log if e.kind == "seat_changed" and e.event.reason == "left"]
    assert [x.seat for x in left] == [0]
    finished = next(e.event for e in log if e.kind == "table_finished")
    # its only person gone, the table ends after that hand
    assert finished.reason == "players_left" and finished.hands_played == 1
    assert finished.chips[0] == hand.payments[0] - 2
    header = {"table_id": table_id, "ruleset": "shanghai-qiaoma", "overrides": OVERRIDES}
    header["stake"] = 1
    verdict = verify_hand(export_hand(header, log, hand.hand_id))
    assert verdict.ok, verdict.problems
