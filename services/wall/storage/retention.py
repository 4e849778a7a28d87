"""Retention of walls: a background sweeper deletes walls older than the retention period
(revealed hands and hands a table abandoned), so the store does not grow without end.

A hand's wall is needed only while the hand runs and until its seed is revealed; records that
players keep for verification are the reveal output, not the store."""

from __future__ import annotations

import threading

import structlog

from services.wall.storage.repository import WallRepository

log = structlog.get_logger("mahjong.wall.retention")


class Sweeper:
    """Calls :meth:`WallRepository.prune` every ``interval`` seconds on a daemon thread."""

    def __init__(self, repo: WallRepository, retain_seconds: float, interval: float) -> None:
        if retain_seconds <= 0 or interval <= 0:
            raise ValueError("retention and interval must be positive")
        self.repo = repo
        self.retain_seconds = retain_seconds
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wall-sweeper", daemon=True)

    def start(self) -> Sweeper:
        self._thread.start()
        return self

    def sweep_once(self) -> int:
        deleted = self.repo.prune(self.retain_seconds)
        if deleted:
            log.info("walls_pruned", deleted=deleted, retain_seconds=self.retain_seconds)
        return deleted

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sweep_once()
            except Exception as exc:  # a failed sweep must not end the sweeper
                log.warning("wall_sweep_failed", error=repr(exc))

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
