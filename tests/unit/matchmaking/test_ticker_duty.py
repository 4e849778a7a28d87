"""The ticker duty (services/matchmaking/storage/duty.py) on each store backend: one replica holds
it at a time; a released duty is taken at the next tick, an abandoned one once its lease runs out by
the store's clock; a holder paused past its lease finds the other's epoch and stops ticking; two
servers' tickers on one store never tick at once."""

from __future__ import annotations

import threading
import time

from services.matchmaking.server import Ticker
from services.matchmaking.storage.duty import PREFIX, TICKER, TickerDuty

TTL_MS = 400


def duties(backend, n: int = 2, ttl_ms: int = TTL_MS) -> list[TickerDuty]:
    return [TickerDuty(backend.open(), f"mm-{i}", ttl_ms) for i in range(n)]


def wait_for(fn, seconds: float) -> float:
    """Seconds until ``fn()`` is true (AssertionError after ``seconds``)."""
    start = time.monotonic()
    while not fn():
        assert time.monotonic() - start < seconds, "timed out"
        time.sleep(0.01)
    return time.monotonic() - start


def test_one_replica_holds_the_duty_and_a_release_hands_it_over_at_once(backend):
    # A lease far longer than the test: a hand-over here is the release's, never an expiry's
    # (with 400 ms, a holder stalled that long between its acquire and b's, as on a loaded
    # machine, lost the duty to b by expiry and the test saw two holders in turn).
    a, b = duties(backend, ttl_ms=60_000)
    try:
        assert a.held() and not b.held() and a.held()
        lease = a.ownership.store.get_lease(PREFIX + TICKER)
        assert lease.owner == "mm-0" and lease.held
        a.close()  # a draining replica
        assert b.held() and not a.held()
        after = b.ownership.store.get_lease(PREFIX + TICKER)
        assert after.owner == "mm-1" and after.epoch == lease.epoch + 1
    finally:
        a.close()
        b.close()


def test_an_abandoned_duty_is_taken_once_its_lease_runs_out(backend):
    a, b = duties(backend)
    try:
        assert a.held()
        a.ownership.close(release=False)  # stops renewing, as a killed replica
        gone = time.monotonic()
        assert not b.held()  # still running by the store's clock
        waited = wait_for(b.held, 5)
        assert 0 < time.monotonic() - gone < TTL_MS / 1000 + 1.0, waited
    finally:
        b.close()


def test_a_holder_paused_past_its_lease_stops_ticking(backend):
    a, b = duties(backend)
    try:
        assert a.held()
        a.ownership._stop.set()  # a paused process: its renewals stop, its memory stays
        a.ownership._thread.join()
        wait_for(b.held, 5)
        assert a.ownership.owns(TICKER)  # it still believes it holds the duty…
        assert not a.held()  # …but the store has b's epoch: no tick, the lease dropped
        assert not a.ownership.owns(TICKER) and b.held()
    finally:
        a.close()
        b.close()


def test_two_tickers_on_one_store_never_tick_at_once(backend):
    ticking = []
    ticks = [0, 0]
    overlap = threading.Event()
    lock = threading.Lock()

    def tick(i: int) -> None:
        with lock:
            ticking.append(i)
            if len(ticking) > 1:
                overlap.set()
        ticks[i] += 1
        time.sleep(0.005)
        with lock:
            ticking.remove(i)

    # A lease long enough that a loaded machine never delays a renewal past it: the duty
    # moves here only when released (the other tests expire it on purpose).
    a, b = duties(backend, ttl_ms=3000)
    tickers = [Ticker(lambda i=i: tick(i), 0.01, d) for i, d in enumerate((a, b))]
    wait_for(lambda: max(ticks) > 10, 5)
    holder = 0 if ticks[0] else 1
    assert ticks[holder] > 10 and ticks[1 - holder] == 0  # the other stood by
    tickers[holder].close()  # releases: the other goes on
    wait_for(lambda: ticks[1 - holder] > 10, 5)
    tickers[1 - holder].close()
    assert not overlap.is_set()
