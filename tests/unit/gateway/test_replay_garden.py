"""`mahjong replay verify` on 逛花园 tables (F5): the replay plays the hand on the stacks the
record shows (and those left after an escape), and a service failing during the replay is
reported as such, never as an illegal action."""

from __future__ import annotations

from services.gateway.adapters.inprocess import InProcessScoring
from services.gateway.bots import engine_policy, make_bot
from services.gateway.domain.replay import export_hand
from services.gateway.domain.session import FINISHED, PLAYING
from services.gateway.verify import verify_hand
from shared.errors import Unavailable
from tests.support.events import json_log
from tests.support.sessions import RULESET, local_table, seats, session_config


def play(overrides, *, humans=0, max_hands=3, leave_at=None):
    """A table of planning bots (and ``humans`` players who never act); seat 0 leaves at its
    ``leave_at``-th decision. Returns the session and the log as the store keeps it."""
    table = local_table(
        session_config(
            "t-garden",
            overrides,
            max_hands=max_hands,
            first_dealer=0,
            discard_ms=1_000,
            claim_ms=500,
        ),
        seats(humans, prefix="p"),
        policy=engine_policy(make_bot("planner", seed=3)),
    )
    session, sched = table.session, table.scheduler
    session.start()
    if leave_at is not None:
        seen = 0
        while session.phase == PLAYING:
            if 0 in session.hand.pending:
                seen += 1
                if seen == leave_at:
                    session.leave(0)
                    break
            sched.advance(100)
    sched.drain()
    assert session.phase == FINISHED
    return session, table.log()


def header(overrides):
    return {"table_id": "t-garden", "ruleset": RULESET, "overrides": overrides, "stake": 1}


def hands(log):
    return [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]


def test_garden_hands_verify():
    overrides = {"payment.garden": "true"}
    _, log = play(overrides)
    started = [d for _, _, k, d in json_log(log) if k == "hand_started"]
    assert all(len(d["garden_stacks"]) == 4 for d in started)
    for hid in hands(log):
        verdict = verify_hand(export_hand(header(overrides), log, hid))
        assert verdict.ok, verdict.problems
        assert verdict.actions > 0


def test_a_garden_hand_with_an_escape_verifies_on_the_stacks_left_after_the_penalty():
    """Small stacks, so the escape penalty empties the leaver's stack and caps what it pays
    later in the hand: the replay must settle on the stacks after the penalty, as the table
    did."""
    overrides = {"payment.garden": "true", "payment.garden_stack": "2"}
    _, log = play(overrides, humans=1, max_hands=1, leave_at=2)
    escape = next(
        d for _, _, k, d in json_log(log) if k == "hand_result" and d["outcome"] == "escape"
    )
    started = next(d for _, _, k, d in json_log(log) if k == "hand_started")
    assert escape["garden_stacks"] != started["garden_stacks"]
    verdict = verify_hand(export_hand(header(overrides), log, hands(log)[0]))
    assert verdict.ok, verdict.problems


class DownScoring(InProcessScoring):
    """Scoring that is unavailable when the hand settles."""

    def settle_win(self, facts):
        raise Unavailable("scoring is down")

    def settle_draw(self, facts):
        raise Unavailable("scoring is down")


def test_a_service_failure_is_not_reported_as_an_illegal_action():
    _, log = play({}, max_hands=1)
    verdict = verify_hand(export_hand(header({}), log, hands(log)[0]), scoring=DownScoring())
    assert not verdict.ok
    assert len(verdict.problems) == 1
    problem = verdict.problems[0]
    assert "illegal" not in problem
    assert "replay failed after" in problem and "scoring is down" in problem
