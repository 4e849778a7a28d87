"""The 加倍卡 desk of :class:`~services.matchmaking.service.Matchmaking`: the gateway holds a
double card for a table's next hand, or returns it (:mod:`.double_cards`). Only the gateway
calls these (the internal port's gateway identity); the player's own act is checked there
(a seated human at a table that allows the card)."""

from __future__ import annotations

from collections.abc import Callable

import structlog

from services.matchmaking.domain.clock import Clock
from services.matchmaking.domain.economy import double_cards
from services.matchmaking.domain.economy.repository import HoldRepository
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.tables.repository import TableRepository

log = structlog.get_logger("mahjong.matchmaking")


class DoubleCardDesk:
    """A part of :class:`~services.matchmaking.service.Matchmaking`: ``notify`` tells the
    facade's watchers of a change."""

    def __init__(
        self,
        store: Records,
        tables: TableRepository,
        holds: HoldRepository,
        clock: Clock,
        notify: Callable[[], None],
    ) -> None:
        """``store``: the ledger's; ``tables``: the allocated tables (who sits where);
        ``holds``: the index of the cards held at each table."""
        self.store = store
        self.tables = tables
        self.holds = holds
        self.clock = clock
        self.notify = notify

    def hold_double_card(
        self, table_id: str, tag: str, player_id: str, hand_number: int, stake: int
    ) -> int:
        """Hold one of the player's double cards for hand ``hand_number``; the cards left."""
        left = double_cards.hold(
            self.store,
            self.tables,
            self.holds,
            table_id,
            tag,
            player_id,
            hand_number,
            stake,
            self.clock(),
        )
        log.info("double_card_held", table=table_id, player=player_id, hand=hand_number)
        self.notify()
        return left

    def release_double_card(self, table_id: str, player_id: str, hand_number: int) -> bool:
        """Return a card held for a hand that never started; False when none is held."""
        released = double_cards.release(self.store, table_id, player_id, hand_number, self.clock())
        if released:
            log.info("double_card_returned", table=table_id, player=player_id, hand=hand_number)
            self.notify()
        return released
