"""Leaving a table (逃跑 escape, or 掉线 disconnection past its grace, RULES §9-§10): in a
running hand the seat pays the escape penalty and a bot finishes the hand for it; the 荒番
counter is reset either way. The escape's result names why (``escape_reason``, and the first
line of its breakdown)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from services.gateway.domain.events.kinds import BreakdownLine, SeatChanged
from services.gateway.domain.hand.settlement import hand_result_event
from services.gateway.domain.session import decisions
from services.gateway.domain.session.config import BETWEEN_HANDS, PLAYING, WAITING
from shared.errors import FailedPrecondition

if TYPE_CHECKING:
    from services.gateway.domain.hand import HandEngine
    from services.gateway.domain.session.table import TableSession


LEFT, DISCONNECTED = "left", "disconnected"  # why a seat escapes (HandResult.escape_reason)
# The first line of an escape's breakdown: why, with the penalty it pays (its items follow).
REASON_LABELS = {
    LEFT: "逃跑: left the table during the hand",
    DISCONNECTED: "掉线: disconnected past the grace and not back by the hand's end",
}


def leave(t: TableSession, seat: int) -> int:
    """The player of ``seat`` leaves; returns the penalty it paid (0 between hands). Scoring is
    asked first: if it fails, the Leave fails with nothing changed and can be retried."""
    return escape(t, seat, LEFT)


def escape(t: TableSession, seat: int, reason: str, *, settled: HandEngine | None = None) -> int:
    """``seat`` escapes for ``reason`` (:data:`LEFT`, or :data:`DISCONNECTED`: 掉线, see
    :mod:`.presence`); returns the penalty it paid. In a running hand, or at the end of the
    hand ``settled`` (a player disconnected during it and not back: liable for that hand, it
    escapes "at that moment"), it pays the penalty; between hands it pays nothing. Either way
    a bot takes the seat for the rest of the table and the 荒番 counter is reset."""
    s = t.seats[seat]
    if s.bot:
        raise FailedPrecondition(f"seat {seat} is a bot seat", reason="BOT_SEAT")
    if s.left:
        raise FailedPrecondition(f"seat {seat} already left", reason="SEAT_LEFT")
    penalty = 0
    hand = t.hand if settled is None else settled
    # A hand whose start is still being retried (the wall unavailable) has dealt nothing:
    # leaving then is leaving between hands.
    in_hand = settled is not None or (
        t.phase == PLAYING and hand is not None and not hand.finished and bool(hand.hand_id)
    )
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
    hand_id, number = t.head() if settled is None else (settled.hand_id, settled.config.hand_number)
    s.left = True
    t.huangfan = 0
    if st is not None and hand is not None:
        t.left_during_hand = settled is None
        hand.huangfan_reset = True  # the hand's result tells the reset counter
        for i, p in enumerate(st.payments):
            t.seats[i].chips += p
        penalty = -st.payments[seat]
        stacks = t.garden_stacks()
        if stacks is not None:  # the hand settles on the stacks left after the penalty
            hand.config = replace(hand.config, garden_stacks=stacks)
        result = hand_result_event(
            st,
            "escape",
            next_dealer=t.dealer,
            next_huangfan=0,
            escaped_seat=seat,
            garden_stacks=stacks,
            hand_id=hand_id,
            hand_number=number,
        )
        why = BreakdownLine(seat, "ESCAPE_REASON", REASON_LABELS[reason], penalty)
        t.emit(result.replace(breakdown=(why, *result.breakdown), escape_reason=reason))
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
            reason=LEFT,
            left=True,
            hand_id=hand_id,
            hand_number=number,
        )
    )
    if hand is not None and not hand.finished and seat in hand.pending:
        owed = hand.pending[seat]
        t.scheduler.call_later(
            decisions.bot_delay(t), lambda: decisions.bot(t, seat, owed.sequence)
        )
    if t.phase in (BETWEEN_HANDS, WAITING) and all(x.bot or x.left for x in t.seats):
        t.finish("players_left")
    return penalty


def escape_penalty(t: TableSession) -> int:
    """What leaving during a running hand costs (RULES §9): ``payment.escape_penalty_base`` ×
    stake × the scoring model's 底分 (as scoring computes it; 逛花园 caps it at the stack)."""
    rs = t.config.ruleset
    model = rs.table.scoring_model
    if model == "baida":
        base = rs.baida_scoring.base_points
    elif model == "old":
        base = rs.old_hu.win
    else:
        base = rs.scoring.base_points + rs.flowers.base
    return int(rs.payment.escape_penalty_base) * t.config.stake * int(base)
