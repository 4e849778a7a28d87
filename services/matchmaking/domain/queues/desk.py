"""The quick-match desk of :class:`~services.matchmaking.service.Matchmaking`: joining a
(ruleset, stake tier) queue at the player's level and cover, leaving it, reading a ticket
(:mod:`.quick_match`). Tables are formed by the facade's ``tick``."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from services.matchmaking.domain.clock import Clock
from services.matchmaking.domain.economy import hand_cover, ledger
from services.matchmaking.domain.players import accounts as players
from services.matchmaking.domain.players import presence
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.queues import levels
from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.domain.queues.repository import QueueRepository
from services.matchmaking.domain.ruleset_choice import ruleset_name


class QueueDesk:
    """``authenticate``: the identity desk's; ``notify``: tells the facade's watchers of a
    change; ``holds``: whether a presence's ticket or room still holds its player."""

    def __init__(
        self,
        store: Records,
        queue_records: QueueRepository,
        clock: Clock,
        authenticate: Callable[[str], players.Player],
        notify: Callable[[], None],
        holds: presence.Holds,
        fee_units: int = levels.FEE_STAKE_UNITS,
    ) -> None:
        self.store = store  # the ledger's (a stake's level)
        self.queue_records = queue_records
        self.clock = clock
        self.authenticate = authenticate
        self.notify = notify
        self._holds = holds
        self.fee_units = fee_units  # a level's 台费 is its stake × this (RULES.md §9a)

    def join_queue(
        self, token: str, ruleset: str, stake: int, client_address: str = ""
    ) -> queues.Ticket:
        """Join the (ruleset, stake tier) queue; stake 0 = the player's own level's tier. The
        player's silver must cover a hand there plus the level's room service fee (台费).
        ``client_address``: where the call came from (no two from one address at a table)."""
        player = self.authenticate(token)
        name = ruleset_name(ruleset)
        silver = ledger.balance(self.store, player.player_id)
        stake = levels.check_rated_stake(silver, stake)
        fee = levels.fee_for_stake(stake, self.fee_units)  # the level's 台费, on top of the cover
        hand_cover.require_cover(player.player_id, silver, name, None, stake, fee)
        ticket = queues.join(
            self.queue_records,
            "tk-" + uuid.uuid4().hex[:16],
            player.player_id,
            player.display_name,
            name,
            stake,
            self.clock(),
            self._holds,
            client_address,
        )
        self.notify()
        return ticket

    def leave_queue(self, token: str, ticket_id: str) -> queues.Ticket:
        player = self.authenticate(token)
        ticket = queues.leave(self.queue_records, ticket_id, player.player_id)
        self.notify()
        return ticket

    def ticket(self, token: str, ticket_id: str) -> queues.Ticket:
        player = self.authenticate(token)
        return queues.owned_ticket(self.queue_records, ticket_id, player.player_id)
