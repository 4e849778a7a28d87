"""Open seats and joining a table.

Open seats (空座: no player assigned, not a bot; anyone may join them) are waited for at most
``seat_wait_ms`` (0 = forever): the deadline is fixed when the table starts, published as
``seat_deadline_ms`` in ``table_started`` and in the view while the table waits, and a seat
still open when it passes ends the table before any hand (``table_finished`` with reason
``seats_not_filled``, reported like any finished table); the seat can no longer be joined.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.gateway.domain.events.kinds import SeatChanged
from services.gateway.domain.session import presence
from services.gateway.domain.session.config import BETWEEN_HANDS, FINISHED, WAITING
from shared.errors import FailedPrecondition

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession


def resume_seat_wait(t: TableSession) -> None:
    """Arm the timer of the open seats' deadline (at start, or on a table restored from its
    log while it still waits: the same absolute deadline, at once if it has passed)."""
    if t.seat_deadline_ms and t.phase == WAITING and t.seat_timer is None:
        delay = max(0, t.seat_deadline_ms - t.scheduler.now_ms())
        t.seat_timer = t.scheduler.call_later(delay, lambda: _seat_wait_over(t))


def _seat_wait_over(t: TableSession) -> None:
    t.seat_timer = None
    if t.phase == WAITING and any(s.open for s in t.seats):
        t.finish("seats_not_filled")


def maybe_begin(t: TableSession) -> None:
    """Start the first hand once no seat is open (the seat wait over)."""
    if t.phase == WAITING and not any(s.open for s in t.seats):
        if t.seat_timer is not None:
            t.seat_timer.cancel()
            t.seat_timer = None
        t.phase = BETWEEN_HANDS
        t.start_hand()


def join(t: TableSession, seat: int, player_id: str, display_name: str) -> None:
    s = t.seats[seat]
    if t.phase == FINISHED and s.open:
        why = f" ({t.finish_reason})" if t.finish_reason else ""
        raise FailedPrecondition(
            f"the table has finished{why}: seat {seat} can no longer be taken",
            reason="TABLE_FINISHED",
            finish_reason=t.finish_reason,
        )
    if s.bot:
        raise FailedPrecondition(f"seat {seat} is a bot seat", reason="SEAT_TAKEN")
    if s.player_id and s.player_id != player_id:
        raise FailedPrecondition(f"seat {seat} belongs to another player", reason="SEAT_TAKEN")
    if s.left:
        raise FailedPrecondition(f"seat {seat}'s player left the table", reason="SEAT_LEFT")
    first = not s.joined
    s.player_id, s.joined = player_id, True
    s.display_name = display_name or s.display_name or player_id
    if first:
        hand_id, number = t.head()
        t.emit(
            SeatChanged(
                seat=seat,
                player_id=player_id,
                bot=False,
                reason="joined",
                hand_id=hand_id,
                hand_number=number,
            )
        )
        presence.joined(t, seat)
    maybe_begin(t)
