"""A table's deadline.

A deadline (``end_by_ms``, a tournament round's time limit, Unix ms on the scheduler's clock):
once it has passed no new hand is dealt and the table ends (``table_finished`` reason
``deadline``) when the hand in play is over, or at the deadline itself when it falls between
hands. The hand in play is finished, not voided, but every decision prompted after the deadline
gets at most ``timers.overtime_seconds`` (:meth:`TableSession.timer_cap`). The first hand is
always dealt, so a table created (or filled) after its deadline plays one hand and ends. It is
announced in ``table_started`` (``end_by_ms``) and shown in the view.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from services.gateway.domain.session import between_hands

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession


def past_deadline(t: TableSession) -> bool:
    """The table's deadline (``end_by_ms``) has passed: no new hand, overtime timers."""
    end_by = t.config.end_by_ms
    return end_by > 0 and t.scheduler.now_ms() >= end_by


def timer_cap(t: TableSession, ms: int) -> int:
    """A timer of ``ms`` for a decision prompted now: at most ``timers.overtime_seconds``
    once the table's deadline has passed, else ``ms`` itself."""
    if past_deadline(t):
        return min(ms, t.overtime_ms)
    return ms


def schedule_next_hand(
    t: TableSession, since_ms: int | None = None, ready: Iterable[int] = ()
) -> None:
    """Between hands: the next deal after the pause (:mod:`.between_hands`: until every person
    pressed Next, at most ``between_hands_ms``), or at the table's deadline if it comes first
    (:meth:`next_hand` then ends the table instead of dealing). ``since_ms``: a pause taken
    over from another replica, which began then (the hand's end as logged) and whose seats
    ``ready`` pressed Next already; None: it begins now."""
    now = t.scheduler.now_ms()
    delay = between_hands.pause_ms(t)
    if since_ms is not None:
        delay = max(0, since_ms + delay - now)
    end_by = t.config.end_by_ms
    if end_by > 0:
        delay = min(delay, max(0, end_by - now))
    between_hands.begin(t, delay, ready)
