"""Flood control: token buckets by key (the gateway's calls per seat token and new tables per
client address, matchmaking's calls per player and per address).

A key may make ``burst`` calls at once and ``rate`` per second after that; a call past it is
refused RESOURCE_EXHAUSTED with the delay after which one more is allowed (``retry_delay_ms``,
sent as a ``google.rpc.RetryInfo`` detail as well). Refusing costs a dictionary lookup and never
waits, so one flooding seat slows nobody else. Buckets that are full again (their key idle) are
dropped when there are many, so memory stays bounded by the keys active in the last
``burst / rate`` seconds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from shared.errors import ResourceExhausted

SWEEP_AT = 10_000  # buckets held before idle ones are dropped


class RateLimiter:
    def __init__(
        self, rate: float, burst: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = max(1.0, burst)
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._lock = threading.Lock()
        self._sweep_at = SWEEP_AT

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def wait_for(self, key: str) -> float:
        """Take one call for ``key``: 0.0 if allowed, else the seconds until one is."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        with self._lock:
            tokens, when = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - when) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                if len(self._buckets) > self._sweep_at:
                    self._sweep(now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def _sweep(self, now: float) -> None:
        full = self.burst / self.rate
        self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < full}
        self._sweep_at = max(SWEEP_AT, 2 * len(self._buckets))

    def take(self, key: str, what: str) -> None:
        """Take one call for ``key`` or refuse it: ``what`` names the calls in the message."""
        delay = self.wait_for(key)
        if delay > 0:
            raise self.refusal(delay, what)

    def refusal(self, delay: float, what: str) -> ResourceExhausted:
        """The refusal of a call ``delay`` seconds too early (:meth:`wait_for`)."""
        ms = max(1, round(delay * 1000))
        return ResourceExhausted(
            f"too many {what}: at most {self.rate:g} per second (bursts of "
            f"{self.burst:g}); retry in {ms} ms",
            reason="RATE_LIMITED",
            retry_delay_ms=ms,
        )
