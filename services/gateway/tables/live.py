"""A live table in a replica's memory: its session behind a lock, the events of its current and
previous hand (older ones are read from the store), its request ids, whether it is still owned."""

from __future__ import annotations

import threading

from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.session import TableSession
from services.gateway.tables.records import RequestRecord


class LiveTable:
    def __init__(self, table_id: str, tag: str, report_hands: bool = True) -> None:
        self.id = table_id
        self.tag = tag
        self.report_hands = report_hands
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        # The events of the current and the previous hand (older ones are read from the
        # store): ``events[i].seq == base + i + 1``.
        self.events: list[LoggedEvent] = []
        self.base = 0
        self.hand_starts: list[int] = []
        # (seat, request id) -> its first result
        self.requests: dict[tuple[int, str], RequestRecord] = {}
        self.session: TableSession | None = None
        self.owned = True
        # seat -> the sequence of its latest decision event: its latest prompt, or the action
        # that answered it (the seat's own, the timer's or 托管's). A request whose last
        # sequence is older was decided on a stale state: ABORTED, even once the prompt is
        # gone (a late answer after the timer decided for the seat).
        self.last_decision: dict[int, int] = {}

    @property
    def head(self) -> int:
        return self.base + len(self.events)

    def keep(self, e: LoggedEvent) -> None:
        """Hold ``e``; when a hand starts, drop what came before the previous hand."""
        self.events.append(e)
        ev = e.event
        if isinstance(ev, K.Prompt | K.ActionTaken):
            self.last_decision[ev.seat] = e.seq
        elif isinstance(ev, K.HandStarted):
            self.hand_starts.append(e.seq)
            if len(self.hand_starts) > 2:
                cut = self.hand_starts[-2]  # first event of the previous hand
                del self.events[: cut - 1 - self.base]
                self.base = cut - 1
                self.hand_starts = self.hand_starts[-2:]
