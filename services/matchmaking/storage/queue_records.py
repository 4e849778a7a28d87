"""The queues' repository over the service's store
(:class:`~services.matchmaking.domain.queues.repository.QueueRepository`): the namespaces, keys
and encodings of tickets, queues and matches, with the players' presence
(:class:`~services.matchmaking.storage.player_records.PresenceRecords`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from services.matchmaking.domain import records
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.queues.quick_match import Ticket
from services.matchmaking.storage.player_records import PresenceRecords

R = TypeVar("R")

TICKETS = "mm_tickets"
QUEUES = "mm_queues"
MATCHES = "mm_matches"
QUEUE_PREFIX = "mm_queue/"


def _index_key(ticket: Ticket) -> str:
    return f"{int(ticket.created_at * 1000):015d}-{ticket.ticket_id}"


class QueueRecords(PresenceRecords):
    """Tickets, queues and matches in ``store`` (and presence, :class:`PresenceRecords`)."""

    def __init__(self, store: Records) -> None:
        super().__init__(store)

    def ticket(self, ticket_id: str) -> Ticket | None:
        rec = self.store.get(TICKETS, ticket_id)
        return None if rec is None else Ticket.from_json(rec.value)

    def add_ticket(self, ticket: Ticket) -> None:
        self.store.create(TICKETS, ticket.ticket_id, ticket.to_json())
        self.store.put(QUEUES, ticket.queue, b"")
        self.store.put(QUEUE_PREFIX + ticket.queue, _index_key(ticket), ticket.ticket_id.encode())

    def drop_ticket(self, ticket_id: str) -> None:
        self.store.delete(TICKETS, ticket_id)

    def update_ticket(self, ticket_id: str, fn: Callable[[Ticket], tuple[Ticket | None, R]]) -> R:
        def apply(raw: bytes | None) -> tuple[bytes | None, R]:
            new, result = fn(Ticket.from_json(raw))  # type: ignore[arg-type]
            return (None if new is None else new.to_json()), result

        return self.store.update(TICKETS, ticket_id, apply)

    def unlist_ticket(self, ticket: Ticket) -> None:
        self.store.delete(QUEUE_PREFIX + ticket.queue, _index_key(ticket))

    def queues(self) -> list[str]:
        return [queue for queue, _ in self.store.scan(QUEUES)]

    def listed(self, queue: str) -> list[str]:
        return [rec.value.decode() for _, rec in self.store.scan(QUEUE_PREFIX + queue)]

    def match_ids(self) -> list[str]:
        return [match_id for match_id, _ in self.store.scan(MATCHES)]

    def match(self, match_id: str) -> dict[str, Any] | None:
        rec = self.store.get(MATCHES, match_id)
        return None if rec is None else records.load(rec.value)

    def put_match(self, match_id: str, body: dict[str, Any]) -> None:
        self.store.put(MATCHES, match_id, records.dump(body))

    def drop_match(self, match_id: str) -> None:
        self.store.delete(MATCHES, match_id)
