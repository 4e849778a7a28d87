"""Leaving a table (逃跑 escape, RULES §9-§10): in a running hand the seat pays the escape
penalty and a bot finishes the hand for it; the 荒番 counter is reset either way."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from services.gateway.domain.events.kinds import SeatChanged
from services.gateway.domain.hand.settlement import hand_result_event
from services.gateway.domain.session import decisions
from services.gateway.domain.session.config import BETWEEN_HANDS, PLAYING, WAITING
from shared.errors import FailedPrecondition

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession


def leave(t: TableSession, seat: int) -> int:
    """The player of ``seat`` leaves; returns the penalty it paid (0 between hands). Scoring is
    asked first: if it fails, the Leave fails with nothing changed and can be retried."""
    s = t.seats[seat]
    if s.bot:
        raise FailedPrecondition(f"seat {seat} is a bot seat", reason="BOT_SEAT")
    if s.left:
        raise FailedPrecondition(f"seat {seat} already left", reason="SEAT_LEFT")
    penalty = 0
    hand = t.hand
    # A hand whose start is still being retried (the wall unavailable) has dealt nothing:
    # leaving then is leaving between hands.
    in_hand = t.phase == PLAYING and hand is not None and not hand.finished and bool(hand.hand_id)
    st = (
        t.ports.scoring.settle_escape(
            t.config.ruleset_name,
            t.config.overrides,
            t.config.stake,
            seat,
            t.dealer,
            0,  # the leave resets the 荒番 counter
            garden_stacks=t.garden_stacks(),
        )
        if in_hand
        else None
    )
    hand_id, number = t.head()
    s.left = True
    t.huangfan = 0
    if st is not None and hand is not None:
        t.left_during_hand = True
        hand.huangfan_reset = True  # the hand's result tells the reset counter
        for i, p in enumerate(st.payments):
            t.seats[i].chips += p
        penalty = -st.payments[seat]
        stacks = t.garden_stacks()
        if stacks is not None:  # the hand settles on the stacks left after the penalty
            hand.config = replace(hand.config, garden_stacks=stacks)
        t.emit(
            hand_result_event(
                st,
                "escape",
                next_dealer=t.dealer,
                next_huangfan=0,
                escaped_seat=seat,
                garden_stacks=stacks,
                hand_id=hand_id,
                hand_number=number,
            )
        )
        t.report(
            "hand",
            {
                "hand_id": f"{hand.hand_id}/escape/{seat}",
                "payments": list(st.payments),
                "house": st.house,
                "escaped_seat": seat,
            },
        )
    t.emit(
        SeatChanged(
            seat=seat,
            player_id=s.player_id,
            bot=True,
            reason="left",
            left=True,
            hand_id=hand_id,
            hand_number=number,
        )
    )
    if hand is not None and not hand.finished and seat in hand.pending:
        owed = hand.pending[seat]
        t.scheduler.call_later(t.config.bot_delay_ms, lambda: decisions.bot(t, seat, owed.sequence))
    if t.phase in (BETWEEN_HANDS, WAITING) and all(x.bot or x.left for x in t.seats):
        t.finish("players_left")
    return penalty
