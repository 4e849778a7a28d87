"""The queues' repository (排队): tickets, the queues they wait in, and the matches being formed,
declared here, implemented over the store by
:class:`services.matchmaking.storage.queue_records.QueueRecords`.

The records it keeps (encodings the domain's: compact JSON):

* ``mm_tickets/<ticket id>`` — a :class:`~.quick_match.Ticket`.
* ``mm_queues/<queue>`` — an empty marker per queue ever joined (what :func:`form_tables` walks).
* ``mm_queue/<queue>/<joined at, ms, 15 digits>-<ticket id>`` — the ticket id: a queue's
  listed tickets in arrival order (a ticket leaves it once cancelled or assigned).
* ``mm_matches/<match id>`` — a match being formed: ``{queue, seats, created_at, fee}``.

It extends the presence repository: a waiting ticket holds its player's presence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from services.matchmaking.domain.players.repository import PresenceRepository

if TYPE_CHECKING:
    from services.matchmaking.domain.queues.quick_match import Ticket

R = TypeVar("R")


class QueueRepository(PresenceRepository, Protocol):
    """Tickets, queues and matches (and the players' presence)."""

    def ticket(self, ticket_id: str) -> Ticket | None: ...

    def add_ticket(self, ticket: Ticket) -> None:
        """Store a new ticket and list it in its queue (the store's ``AlreadyExists`` when its
        id is taken)."""

    def drop_ticket(self, ticket_id: str) -> None:
        """Delete a ticket (one whose listing failed)."""

    def update_ticket(self, ticket_id: str, fn: Callable[[Ticket], tuple[Ticket | None, R]]) -> R:
        """Atomic read-modify-write of an existing ticket (``fn`` may run more than once):
        the new ticket or None to leave it, and the result."""

    def unlist_ticket(self, ticket: Ticket) -> None:
        """Take the ticket off its queue's list."""

    def queues(self) -> Sequence[str]:
        """Every queue ever joined."""

    def listed(self, queue: str) -> Sequence[str]:
        """The ids of the tickets listed in ``queue``, in arrival order."""

    def match_ids(self) -> Sequence[str]: ...

    def match(self, match_id: str) -> dict[str, Any] | None: ...

    def put_match(self, match_id: str, body: dict[str, Any]) -> None: ...

    def drop_match(self, match_id: str) -> None: ...
