"""GetHint: the planning bot's answer to a seat's own pending decision, for clients that
cannot run the bot themselves (browsers).

The bot decides from the seat's own view only (:func:`services.gateway.bots.engine_policy`, the
same path as bot seats and 托管), so a hint tells the seat nothing it could not see. Hints are
for casual tables: a table matchmaking created for its ledger (``report_hands``, CreateTable
with the internal token) refuses them, as a rated or tournament game must be played unaided.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.gateway.bots import engine_policy
from services.gateway.bots.planner import PlanningBot, plan_summary
from services.gateway.bots.policy import seat_view
from services.gateway.domain.session import PLAYING
from services.gateway.tables import TableManager
from services.gateway.tables.live import LiveTable
from shared.errors import FailedPrecondition, PermissionDenied
from shared.table import Action, TileSwap

_POLICY = engine_policy(PlanningBot())


@dataclass(frozen=True)
class Hint:
    action: Action | TileSwap
    plan: str  # "" when the bot has no plan to tell
    prompt_sequence: int


def gives_hints(table: LiveTable) -> bool:
    """Whether the table gives hints: a casual table, not one reported to matchmaking."""
    return not table.report_hands


def hints_allowed(manager: TableManager, table_id: str) -> bool:
    """:func:`gives_hints` of the table ``table_id``."""
    return gives_hints(manager.table(table_id))


def hint(manager: TableManager, table_id: str, token: str, seat_claim: int | None) -> Hint:
    """The planning bot's action for the token's seat's pending prompt."""
    access = manager.access
    table = access.table(table_id)
    with table.lock:
        seat = access.actor(table, token, seat_claim)
        if seat is None:
            raise PermissionDenied("a spectator has no decision to hint", field="seat_token")
        if not gives_hints(table):
            raise FailedPrecondition(
                f"table {table.id} gives no hints: matchmaking created it for its ledger "
                "(a rated or tournament table is played unaided)",
                reason="HINTS_DISABLED",
            )
        session = access.session(table)
        hand = session.hand if session.phase == PLAYING else None
        pending = hand.pending.get(seat) if hand is not None else None
        if hand is None or pending is None:
            raise FailedPrecondition(
                f"seat {seat} has no decision pending: a hint answers the seat's own prompt",
                reason="NO_PROMPT",
            )
        action = _POLICY(pending, hand)
        plan = plan_summary(seat_view(hand, seat))
        return Hint(action, plan, pending.sequence)
