"""An operator ends a table (EndTable, README "Operations"): halted or playing, it finishes now.

A hand that was running is voided: nothing of it is settled or paid, its wall is revealed for
the record (the wall's Reveal, then ``SeedRevealed`` in the log, so anyone can check the shuffle
against the commitment published at its start), and the table finishes with reason
:data:`ENDED_BY_OPERATOR` (``TableFinished``, reported to matchmaking like any other end: the
seat covers are released, the room or tournament told). The phase changes first, so timers,
bots and steps still queued for the table find it over and do nothing. A table that finished
is refused (``TABLE_FINISHED``): ending it twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from services.gateway.domain.events.kinds import SeedRevealed
from services.gateway.domain.ports import is_transient
from services.gateway.domain.session.config import DETACHED, FINISHED
from shared.errors import DomainError, FailedPrecondition

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession

ENDED_BY_OPERATOR = "ended_by_operator"


@dataclass(frozen=True, slots=True)
class Ended:
    voided_hand_id: str  # "" when no hand ran
    seed: str  # the voided hand's wall seed ("" when none ran or the wall had none)
    hands_played: int


def end_table(t: TableSession) -> Ended:
    """End ``t`` now (see the module docstring). The wall's Reveal comes before any change: a
    wall service that is down leaves the table as it was (UNAVAILABLE, retry)."""
    if t.phase in (FINISHED, DETACHED):
        why = f" ({t.finish_reason})" if t.finish_reason else ""
        raise FailedPrecondition(
            f"the table is {t.phase}{why}: nothing to end", reason="TABLE_FINISHED"
        )
    hand = t.hand if t.hand is not None and not t.hand.finished else None
    voided, seed, commitment, number = "", "", "", 0
    if hand is not None and hand.hand_id:
        voided, number = hand.hand_id, hand.config.hand_number
        try:
            revealed = hand.wall.reveal(hand.hand_id, hand.wall_calls + 1)
            seed, commitment = revealed.seed, revealed.commitment or hand.commitment
        except DomainError as exc:
            if is_transient(exc):
                raise
            # the wall has no such hand (it halted before the wall answered): nothing to show
    if seed:
        t.emit(SeedRevealed(seed=seed, commitment=commitment, hand_id=voided, hand_number=number))
    t.finish(ENDED_BY_OPERATOR)
    return Ended(voided, seed, t.hands_played)
