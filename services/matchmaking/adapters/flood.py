"""Flood control of matchmaking's public calls (限流), in memory on each replica, before any
store read.

* Calls: a token bucket per signed-in player (its session's player id) and one per client
  address (:class:`infra.rate_limit.RateLimiter`). A call with a session takes from the
  player's bucket first, then from its address's; one without (signing in, the level table, a
  token that does not verify) only from its address's. A player past its rate is refused before
  its address is charged, so one flooding player leaves the rest of its address (a household, a
  campus behind one NAT) their share. Refused: RESOURCE_EXHAUSTED ``RATE_LIMITED`` with the delay
  to wait (``retry_delay_ms``, also a google.rpc.RetryInfo).
* Streams (WatchAssignments, WatchTournament): at most ``streams_per_player`` open at once per
  player and ``streams_per_address`` per client address, counted while they are open; past it,
  RESOURCE_EXHAUSTED ``TOO_MANY_STREAMS``. Every open stream holds a handler thread, and the
  server's threads are shared: without a per-caller count, a few callers hold them all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from infra.rate_limit import RateLimiter
from shared.errors import ResourceExhausted

STREAM_RETRY_MS = 1000  # when a refused stream may be tried again


@dataclass(frozen=True)
class FloodSettings:
    """Rates are calls per second (0 = no limit), bursts calls at once; stream counts 0 = no
    limit. The defaults let a person click as fast as they like and a client poll, and keep a
    script from taking the replica."""

    player_rate: float = 20.0
    player_burst: float = 40.0
    address_rate: float = 200.0
    address_burst: float = 400.0
    streams_per_player: int = 8
    streams_per_address: int = 32


class StreamCounter:
    """How many streams each key holds open now, at most ``limit`` (0 = no limit)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def acquire(self, key: str, what: str) -> None:
        if self.limit <= 0:
            return
        with self._lock:
            n = self._open.get(key, 0)
            if n >= self.limit:
                raise ResourceExhausted(
                    f"{what} already holds {n} open watch streams, the most allowed; close one "
                    "(a stream of a ticket or tournament ends by itself when it is done)",
                    reason="TOO_MANY_STREAMS",
                    retry_delay_ms=STREAM_RETRY_MS,
                    limit=self.limit,
                )
            self._open[key] = n + 1

    def release(self, key: str) -> None:
        if self.limit <= 0:
            return
        with self._lock:
            n = self._open.get(key, 0) - 1
            if n > 0:
                self._open[key] = n
            else:
                self._open.pop(key, None)

    def open(self, key: str) -> int:
        with self._lock:
            return self._open.get(key, 0)


class FloodControl:
    def __init__(
        self, settings: FloodSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self.players = RateLimiter(settings.player_rate, settings.player_burst, clock=clock)
        self.addresses = RateLimiter(settings.address_rate, settings.address_burst, clock=clock)
        self.player_streams = StreamCounter(settings.streams_per_player)
        self.address_streams = StreamCounter(settings.streams_per_address)

    def admit(self, address: str, player: str | None) -> None:
        """Take one call of ``player`` (None: no verified session) from ``address``, or refuse
        it RESOURCE_EXHAUSTED."""
        if player is not None:
            self.players.take(player, "calls of this player")
        self.addresses.take(address, f"calls from the client address {address}")

    @contextmanager
    def stream(self, address: str, player: str | None) -> Iterator[None]:
        """Hold one open stream of ``player`` from ``address`` while the block runs."""
        self.address_streams.acquire(address, f"the client address {address}")
        try:
            if player is not None:
                self.player_streams.acquire(player, "this player")
        except BaseException:
            self.address_streams.release(address)
            raise
        try:
            yield
        finally:
            if player is not None:
                self.player_streams.release(player)
            self.address_streams.release(address)
