"""Property: whatever legal actions four random bots take (chows, pongs, every kong, 抢杠,
passes, 敲), at every decision all 144 tiles are accounted for, every hand settles to zero and
its replay verifies."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.bots import engine_policy, make_bot
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.replay import export_hand
from services.gateway.domain.session import FINISHED, Ports, Seat, SessionConfig, TableSession
from services.gateway.verify import verify_hand
from shared.ruleset import resolve_ruleset
from tests.doubles.scheduler import ManualScheduler
from tests.support.events import json_log


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), swap=st.booleans(), dealer=st.integers(0, 3))
def test_random_bots_keep_every_invariant(seed, swap, dealer):
    overrides = {"table.tile_swap": "true"} if swap else {}
    log: list = []
    holder: dict = {}

    def emit(ev):
        log.append(LoggedEvent(len(log) + 1, 0, ev))
        session = holder.get("session")
        if ev.KIND == "prompt" and session is not None and session.hand is not None:
            assert session.hand.tiles_accounted() == 144
        return len(log)

    sched = ManualScheduler()
    session = TableSession(
        SessionConfig(
            "t-random",
            resolve_ruleset("shanghai-qiaoma", overrides),
            "shanghai-qiaoma",
            overrides,
            1,
            max_hands=2,
            first_dealer=dealer,
        ),
        [Seat(player_id=f"r{i}", bot=True) for i in range(4)],
        ports=Ports(InProcessWall(), InProcessRules(), InProcessScoring()),
        scheduler=sched,
        emit=emit,
        report=lambda kind, data: None,
        policy=engine_policy(make_bot("random", seed=seed)),
    )
    holder["session"] = session
    session.start()
    sched.drain()
    assert session.phase == FINISHED
    header = {
        "table_id": "t-random",
        "ruleset": "shanghai-qiaoma",
        "overrides": overrides,
        "stake": 1,
    }
    for _, _, kind, d in json_log(log):
        if kind == "hand_result":
            assert sum(d["payments"]) + d["house"] == 0
    for hid in [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]:
        verdict = verify_hand(export_hand(header, log, hid))
        assert verdict.ok, verdict.problems
