"""Change notification: what open streams wait on (WatchAssignments, WatchTournament).

:class:`Changes` counts this replica's changes — one counter for quick match and rooms, one per
tournament (10,000 watchers of one tournament must not wake for every other change) — and wakes
the threads waiting on a counter. Its observers (:meth:`Changes.observe`) hear each change from
the thread that made it: the asyncio servicer's bridge to its event loop registers there, so the
threaded server and the asyncio one share one facade.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

Observer = Callable[[str | None], None]  # None: a quick-match or room change; else a tournament
MAX_TOPICS = 4096  # tournaments whose counters are kept (finished ones' are dropped first)


class Changes:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._version = 0
        self._topics: dict[str, list] = {}  # tournament id -> [version, Condition]
        self._topics_lock = threading.Lock()
        self._observers: list[Observer] = []

    def observe(self, observer: Observer) -> None:
        """Tell ``observer`` of every change from now on."""
        self._observers.append(observer)

    def unobserve(self, observer: Observer) -> None:
        if observer in self._observers:
            self._observers.remove(observer)

    # --- quick match and rooms ---------------------------------------------------------------
    @property
    def version(self) -> int:
        return self._version

    def notify(self) -> None:
        with self._changed:
            self._version += 1
            self._changed.notify_all()
        for observe in self._observers:
            observe(None)

    def wait_for_change(self, since: int, timeout: float) -> int:
        """Block until something changed after ``since`` (or ``timeout``); the new version."""
        with self._changed:
            self._changed.wait_for(lambda: self._version != since, timeout)
            return self._version

    # --- one tournament ----------------------------------------------------------------------
    def _topic(self, name: str) -> list:
        with self._topics_lock:
            found = self._topics.get(name)
            if found is None:
                found = self._topics[name] = [0, threading.Condition()]
                if len(self._topics) > MAX_TOPICS:  # finished tournaments' topics
                    self._topics.pop(next(iter(self._topics)))
            return found

    def tournament_version(self, tournament_id: str) -> int:
        return self._topic(tournament_id)[0]

    def notify_tournament(self, tournament_id: str) -> None:
        """Wake the watchers of one tournament only."""
        topic = self._topic(tournament_id)
        with topic[1]:
            topic[0] += 1
            topic[1].notify_all()
        for observe in self._observers:
            observe(tournament_id)

    def wait_for_tournament(self, tournament_id: str, since: int, timeout: float) -> int:
        topic = self._topic(tournament_id)
        with topic[1]:
            topic[1].wait_for(lambda: topic[0] != since, timeout)
            return topic[0]
