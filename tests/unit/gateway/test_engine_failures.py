"""Failures that are not transient: a bug in a step (here a KeyError from the rules port) stops
that table loudly — ``table_halted`` to every seat, the error to ``on_halted`` (the gateway logs
it with its stack and counts it), the log kept — while a service that is down is retried and
the table plays on. Other tables are not touched."""

from __future__ import annotations

import time

import pytest

from infra.store.memory import MemoryStore
from services.gateway import metrics
from services.gateway.adapters.inprocess import InProcessRules
from services.gateway.domain.session import FINISHED, HALTED, Ports, Seat
from services.gateway.tables import read_table_log
from shared.errors import FailedPrecondition, Unavailable
from shared.table import Pass
from tests.support.sessions import SeededWall, inprocess_ports, local_table, session_config
from tests.support.stacks import table_manager, table_spec
from tests.unit.gateway.test_resume_steps import greedy


class BrokenRules(InProcessRules):
    """Rules whose claim options fail ``failures`` times with ``error`` (then answer)."""

    def __init__(self, error: Exception, failures: int = 1) -> None:
        super().__init__()
        self.error, self.failures, self.calls = error, failures, 0

    def claim_options(self, snapshot):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return super().claim_options(snapshot)


def bot_table(rules, halted):
    ports = Ports(SeededWall(3), rules, inprocess_ports().scoring)
    return local_table(
        session_config("t-fail", max_hands=1, first_dealer=0),
        [Seat(player_id=f"b{i}", bot=True) for i in range(4)],
        ports=ports,
        policy=greedy,
        on_halted=halted.append,
    )


def test_a_bug_in_a_step_halts_the_table_and_tells_every_seat():
    halted: list[Exception] = []
    rules = BrokenRules(KeyError("no such seat"), failures=10**6)
    t = bot_table(rules, halted)
    t.play_out()
    assert t.session.phase == HALTED
    assert len(halted) == 1 and isinstance(halted[0], KeyError)
    assert rules.calls == 1, "a bug is not retried"
    (kind, data) = t.events[-1]
    assert kind == "table_halted" and data["reason"] == "ENGINE_FAILED"
    assert "KeyError" in data["message"] and "no such seat" in data["error"]
    assert [k for k, _ in t.events].count("table_halted") == 1
    with pytest.raises(FailedPrecondition):
        t.session.act(0, Pass())


def test_a_service_that_is_down_is_retried_and_the_table_plays_on():
    halted: list[Exception] = []
    rules = BrokenRules(Unavailable("rules down"), failures=3)
    t = bot_table(rules, halted)
    t.play_out()
    assert t.session.phase == FINISHED and not halted
    assert rules.calls > 3


def test_an_assertion_inside_an_engine_callback_fails_the_test_with_its_own_message():
    def check(kind, data):
        assert kind != "tile_discarded", "the check inside the callback fired"

    t = local_table(
        session_config("t-assert", max_hands=1, first_dealer=0),
        [Seat(player_id=f"b{i}", bot=True) for i in range(4)],
        policy=greedy,
        on_event=check,
    )
    with pytest.raises(AssertionError, match="the check inside the callback fired"):
        t.play_out()


def test_a_halted_table_refuses_actions_ends_its_streams_and_the_others_play_on():
    store = MemoryStore()
    ports = inprocess_ports()
    broken = Ports(ports.wall, BrokenRules(KeyError("bug"), failures=10**6), ports.scoring)
    before = metrics.TABLES_HALTED._value.get()
    bad = table_manager(store, broken, seed=1)
    good = table_manager(store, ports, seed=1)
    try:
        # seat 0 is a player; a bot deals and discards first, and the claims after it fail
        humans = [Seat(player_id="p0"), *[Seat(player_id=f"b{i}", bot=True) for i in (1, 2, 3)]]
        t, tokens = bad.create_table(table_spec(humans, first_dealer=1))
        ok, _ = good.create_table(table_spec())
        deadline = time.monotonic() + 30
        while bad.tables[t].session.phase != HALTED:
            assert time.monotonic() < deadline, "the table never halted"
            time.sleep(0.01)
        assert metrics.TABLES_HALTED._value.get() == before + 1
        with pytest.raises(FailedPrecondition) as refused:
            bad.act(t, tokens[0], 0, "after", bad.tables[t].head, Pass())
        assert refused.value.reason == "TABLE_HALTED"
        spectator = bad.join(t, "", "", None, True)[1]
        seen = [ev.kind for ev, _ in bad.subscribe(t, spectator, 0, lambda: True)]
        assert seen[-1] == "table_halted"  # ... and the stream ended
        assert read_table_log(store, t)[-1].kind == "table_halted"  # the log is kept
        while good.tables[ok].session.phase != FINISHED:
            assert time.monotonic() < deadline + 30, "the other table stopped too"
            time.sleep(0.01)
    finally:
        bad.close()
        good.close()
