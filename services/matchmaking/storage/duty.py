"""The ticker's duty (定时任务): with several matchmaking replicas on one store, one at a time
drives the timers and the pending work (:meth:`Matchmaking.tick`).

The duty is a store lease (``matchmaking-duty/ticker``) held through
:class:`infra.store.ownership.Ownership`: its epoch rises on every change of holder, its
expiry is judged by the store's clock, and the holder renews it every ``ttl_ms / 3`` on the
ownership thread (so a tick that waits on a slow gateway does not lose it). Before each tick
:meth:`TickerDuty.held` reads the lease back from the store: a holder paused past the lease
(GC, SIGSTOP) finds another replica's epoch there and ticks no more. A replica without the duty
takes it as soon as the store says it is free, expired or released; a draining replica releases
it (:meth:`close`), so the next holder takes over at its next tick rather than after expiry.

The lease only keeps replicas from doing the same work at once. What makes a second tick
harmless anyway is the store: a ticket, a room and a tournament table each move on by one
atomic update, and a gateway table is created under a request id derived from what it is for
(:mod:`~services.matchmaking.domain.queues.quick_match`,
:mod:`~services.matchmaking.domain.rooms.start`,
:mod:`~services.matchmaking.domain.tournaments.tournament`), so nothing is formed twice even by a
stale holder.
"""

from __future__ import annotations

import structlog
from prometheus_client import Counter, Gauge

from infra.store.base import Store, StoreError
from infra.store.ownership import Ownership

log = structlog.get_logger("mahjong.matchmaking.duty")

PREFIX = "matchmaking-duty/"
TICKER = "ticker"

DUTY_HELD = Gauge(
    "mahjong_matchmaking_ticker_duty", "1 while this replica holds the ticker duty, else 0."
)
DUTY_TAKEN = Counter(
    "mahjong_matchmaking_ticker_duty_taken_total",
    "Times this replica took the ticker duty (at start, or over from another replica).",
)
DUTY_LOST = Counter(
    "mahjong_matchmaking_ticker_duty_lost_total",
    "Times this replica found another replica holding the ticker duty it held.",
)


class TickerDuty:
    def __init__(self, store: Store, replica_id: str, ttl_ms: int) -> None:
        self.replica_id = replica_id
        self.ownership = Ownership(
            store, replica_id, ttl_ms=ttl_ms, prefix=PREFIX, on_lost=self._lost
        ).start()

    def _lost(self, shard: str) -> None:
        DUTY_HELD.set(0)
        DUTY_LOST.inc()
        log.warning("ticker_duty_lost", replica=self.replica_id)

    def held(self) -> bool:
        """Whether this replica holds the duty now, by the store: taken when nobody holds it,
        dropped when the store has another holder or epoch."""
        try:
            current = self.ownership.holder(TICKER)
            if self.ownership.owns(TICKER):
                mine = self.ownership.fence(TICKER)
                if current is not None and current.epoch == mine.epoch and current.owner:
                    return True
                self.ownership.renew()  # refused by the store: drops the lease, calls _lost
                return False
            if current is not None and current.held:
                return False
            lease = self.ownership.claim(TICKER)
        except StoreError as exc:  # the store is down: no tick this round
            log.warning("ticker_duty_check_failed", error=str(exc))
            return False
        if lease is None:
            return False
        DUTY_HELD.set(1)
        DUTY_TAKEN.inc()
        log.info("ticker_duty_taken", replica=self.replica_id, epoch=lease.epoch)
        return True

    def close(self) -> None:
        """Stop renewing and release the duty at once (the next replica takes it)."""
        try:
            self.ownership.close(release=True)
        except StoreError as exc:
            log.warning("ticker_duty_release_failed", error=str(exc))
        DUTY_HELD.set(0)
