"""Between hands (RULES §11 "Between hands"): every hand's result stays on the players' screens
until each person seated has pressed Next (:func:`ready`) or the pause runs out.

The next deal waits the pause or until every person seated is ready, whichever comes first.
The pause is ``between_hands_ms`` when set (the gateway's ``--between-hands-ms``, at every
table), else (None) the ruleset's ``timers.between_hands_seconds`` (15) at a table with a person
seated; a table with no person seated (bots, a tournament of bots) then deals at once. Bots and
players who left are ready at once; a person on 托管 is waited for too (they may be watching the
result). The table's deadline, when it comes first, ends the pause too (:mod:`.deadline`).

Pressing Next is a fact of the table: ``next_hand_ready`` (public, in the log, numbered like
every event), so every viewer sees who is ready as they press. A replica that takes the table
over between hands (:mod:`services.gateway.domain.restore`) keeps who pressed it and the pause's
end: the pause counts from when the hand's end was logged (its ``seed_revealed``), as a claim
window's hold counts from its discard.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from services.gateway.domain.clock import Timer
from services.gateway.domain.events.kinds import NextHandReady
from services.gateway.domain.session.claim_windows import person_seated
from services.gateway.domain.session.config import BETWEEN_HANDS
from shared.errors import FailedPrecondition

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession


@dataclass
class Pause:
    """The pause after a hand: the seats whose person pressed Next, and its timer."""

    ready: set[int] = field(default_factory=set)
    timer: Timer | None = None
    deadline_ms: int = 0  # when the next hand is dealt at the latest (scheduler clock)


def pause_ms(t: TableSession) -> int:
    """How long the table waits at most before its next deal (see the module doc)."""
    ms = t.config.between_hands_ms
    if ms is not None:
        return ms
    if not person_seated(t):
        return 0
    return int(t.config.ruleset.timers.between_hands_seconds) * 1000


def waiting_for(t: TableSession) -> list[int]:
    """The seats whose person has not pressed Next yet (empty while a hand is running)."""
    if t.phase != BETWEEN_HANDS:
        return []
    return [i for i, s in enumerate(t.seats) if not (s.bot or s.left) and i not in t.pause.ready]


def begin(t: TableSession, delay_ms: int, ready: Iterable[int] = ()) -> None:
    """A pause of ``delay_ms`` starts now: nobody has pressed Next yet — or, for a pause taken
    over from another replica, the seats ``ready`` have (dealt at once if that is everyone)."""
    cancel(t)
    t.pause.ready.clear()
    t.pause.ready.update(ready)
    t.pause.deadline_ms = t.scheduler.now_ms() + delay_ms
    if t.pause.ready and not waiting_for(t):
        delay_ms = 0
    t.pause.timer = t.scheduler.call_later(delay_ms, t.next_hand)


def cancel(t: TableSession) -> None:
    if t.pause.timer is not None:
        t.pause.timer.cancel()
        t.pause.timer = None


def ready(t: TableSession, seat: int) -> list[int]:
    """``seat`` pressed Next: told to every viewer (``next_hand_ready``, once per seat and
    pause); once every person seated has, the next hand is dealt now (in a step of its own).
    Returns the seats still waited for. Refused while no pause is on."""
    if t.phase != BETWEEN_HANDS:
        raise FailedPrecondition(
            f"no hand's result to close: the table is {t.phase.replace('_', ' ')}",
            reason="NOT_BETWEEN_HANDS",
        )
    if seat not in t.pause.ready:
        t.pause.ready.add(seat)
        t.emit(NextHandReady(seat=seat, after_hand=t.hands_played))
    left = waiting_for(t)
    if not left and t.pause.timer is not None:
        cancel(t)
        t.pause.timer = t.scheduler.call_later(0, t.next_hand)
    return left
