"""A table's event log as the gateway reads it: numbered, timed, typed events."""

from __future__ import annotations

from typing import NamedTuple

from services.gateway.domain.events.kinds import TableEvent


class LoggedEvent(NamedTuple):
    """One entry of a table's log: its sequence number (the per-table number clients see, from
    1), when it was written (unix ms) and the event."""

    seq: int
    t: int
    event: TableEvent

    @property
    def kind(self) -> str:
        return self.event.KIND
