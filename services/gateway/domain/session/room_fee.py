"""The room service fee (房间服务费 / 台费, RULES.md §9a) a table charges each hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession


def hand_fees(t: TableSession) -> tuple[int, ...]:
    """The fee of the hand being dealt, by seat: the table's fee at every seat a player holds
    (one on 托管, or who left the table, whose seat the ledger still books to them, too), 0 at
    a bot's; empty when the table charges none."""
    fee = t.config.fee_per_hand
    if not fee:
        return ()
    return tuple(0 if s.bot or not s.player_id else fee for s in t.seats)
