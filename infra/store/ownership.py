"""The shards one replica owns, on the store's leases (:meth:`Store.acquire_lease`): what a
gateway needs to own tables (Temporal's shard controller, in small).

* :meth:`Ownership.claim` takes a shard's lease (``<prefix><shard>``) or returns None while
  another replica holds it; :meth:`Ownership.fence` is the fence to pass to every write of the
  shard (the store refuses it once another replica has taken over).
* :meth:`Ownership.renew` (every ``ttl_ms / 3`` on :meth:`start`'s thread) extends every lease
  held; a lease another replica took over (or that cannot be renewed before it runs out) is
  dropped and ``on_lost(shard)`` is called: stop serving it, it is no longer ours.
* :meth:`Ownership.release` / :meth:`release_all` give leases up at once (a draining replica
  hands its shards over without waiting for expiry).
* :meth:`Ownership.orphans` lists shards whose lease expired or was released: candidates to
  :meth:`claim`.
* :meth:`Ownership.current` says whether a lease held is still sure to run by this replica's
  own clock (taken or renewed less than ``ttl_ms`` ago, counted from before the store was
  asked); :meth:`Ownership.confirm` renews one lease now. A replica that was paused (a long GC
  pause, a frozen VM) longer than the lease finds its leases not current when it wakes, and
  confirms before it serves: it steps down instead of answering as an owner it may no longer
  be.

Thread-safe. The store's clock judges expiry; this replica's clock only paces renewals and
says when a lease can no longer be trusted without asking the store.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import structlog

from infra.store.base import Fence, Fenced, Lease, LeaseHeld, Store, StoreError

log = structlog.get_logger("mahjong.store.ownership")


class NotOwner(StoreError):
    """A fence asked for a shard this replica does not own (any more)."""

    code = "UNAVAILABLE"
    reason = "NOT_OWNER"


class Ownership:
    def __init__(
        self,
        store: Store,
        owner: str,
        *,
        ttl_ms: int,
        prefix: str = "",
        on_lost: Callable[[str], None] = lambda shard: None,
    ) -> None:
        self.store = store
        self.owner = owner
        self.ttl_ms = ttl_ms
        self.prefix = prefix
        self.on_lost = on_lost
        self._held: dict[str, Lease] = {}
        # when each lease held stops being sure by this replica's clock (time.monotonic)
        self._sure_until: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _name(self, shard: str) -> str:
        return self.prefix + shard

    # --- claiming and writing ----------------------------------------------------------------
    def claim(self, shard: str) -> Lease | None:
        """This replica's lease on ``shard`` (taken, or renewed if it already held it); None
        while another replica holds it."""
        asked = time.monotonic()
        try:
            lease = self.store.acquire_lease(self._name(shard), self.owner, self.ttl_ms)
        except LeaseHeld:
            return None
        with self._lock:
            self._held[shard] = lease
            self._sure_until[shard] = asked + self.ttl_ms / 1000
        return lease

    def current(self, shard: str) -> bool:
        """Whether ``shard`` is held and its lease still sure to run: taken or renewed less
        than the lease ago by this replica's monotonic clock (from before the store was
        asked, so a slow answer only shortens it)."""
        with self._lock:
            return shard in self._held and time.monotonic() < self._sure_until.get(shard, 0.0)

    def unsure(self, shard: str) -> bool:
        """Whether ``shard`` is held but its lease no longer sure to run (to :meth:`confirm`
        before serving it)."""
        with self._lock:
            return shard in self._held and time.monotonic() >= self._sure_until.get(shard, 0.0)

    def confirm(self, shard: str) -> bool:
        """Renew ``shard``'s lease now (a lease that is not :meth:`current`): True when it is
        still this replica's, False when another replica took it over meanwhile (then it is
        dropped and ``on_lost`` called) or it was not held. A store that cannot be reached
        raises: ownership cannot be confirmed."""
        with self._lock:
            lease = self._held.get(shard)
        if lease is None:
            return False
        return self._renew_one(shard, lease) is not None

    def owns(self, shard: str) -> bool:
        with self._lock:
            return shard in self._held

    def owned(self) -> list[str]:
        with self._lock:
            return sorted(self._held)

    def fence(self, shard: str) -> Fence:
        """The fence for a write of ``shard``; NotOwner when this replica does not hold it."""
        with self._lock:
            lease = self._held.get(shard)
        if lease is None:
            raise NotOwner(f"{self.owner} does not own {shard}")
        return lease.fence

    def holder(self, shard: str) -> Lease | None:
        """The shard's lease as the store has it now (whoever holds it)."""
        return self.store.get_lease(self._name(shard))

    def orphans(self) -> list[str]:
        """Shards whose lease expired or was released (by the store's clock), not held here."""
        out = []
        for lease in self.store.scan_leases(self.prefix):
            shard = lease.name[len(self.prefix) :]
            if not lease.held and not self.owns(shard):
                out.append(shard)
        return out

    # --- keeping and giving up ---------------------------------------------------------------
    def renew(self) -> list[str]:
        """Extend every lease held; returns the shards lost (each also sent to ``on_lost``)."""
        with self._lock:
            held = list(self._held.items())
        lost = []
        for shard, lease in held:
            try:
                if self._renew_one(shard, lease) is None:
                    lost.append(shard)
            except StoreError as exc:  # the store is down: try again next round
                log.warning("lease_renewal_failed", shard=shard, error=str(exc))
        return lost

    def _renew_one(self, shard: str, lease: Lease) -> Lease | None:
        """Renew ``lease``; None when it was lost (dropped, ``on_lost`` called)."""
        asked = time.monotonic()
        try:
            renewed = self.store.renew_lease(lease, self.ttl_ms)
        except Fenced:
            self._lose(shard)
            return None
        with self._lock:
            if self._held.get(shard) == lease:
                self._held[shard] = renewed
                self._sure_until[shard] = asked + self.ttl_ms / 1000
        return renewed

    def _lose(self, shard: str) -> None:
        with self._lock:
            self._sure_until.pop(shard, None)
            if self._held.pop(shard, None) is None:
                return
        log.warning("shard_lost", shard=shard, owner=self.owner)
        self.on_lost(shard)

    def release(self, shard: str) -> bool:
        """Give ``shard`` up at once; False when it was not held (or no longer ours)."""
        with self._lock:
            lease = self._held.pop(shard, None)
            self._sure_until.pop(shard, None)
        return lease is not None and self.store.release_lease(lease)

    def release_all(self) -> int:
        """Give every shard up (on SIGTERM, after draining); how many were released."""
        return sum(self.release(shard) for shard in self.owned())

    # --- the renewal thread ------------------------------------------------------------------
    def start(self) -> Ownership:
        self._thread = threading.Thread(target=self._run, name="lease-renewal", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        interval = max(0.01, self.ttl_ms / 3000)
        while not self._stop.wait(interval):
            try:
                self.renew()
            except Exception as exc:  # one bad round must not end the renewals
                log.warning("lease_renewal_round_failed", error=repr(exc))

    def close(self, *, release: bool = True) -> None:
        """Stop renewing; with ``release``, hand every shard over at once."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if release:
            self.release_all()
