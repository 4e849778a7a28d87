"""infra/store/ownership.py on every backend: two replicas sharing tables through the store's
leases — claims, fences the store enforces, renewals that notice a takeover, release on
drain, orphans to adopt."""

from __future__ import annotations

import time

import pytest

from infra.store.base import Fenced
from infra.store.ownership import NotOwner, Ownership


def replicas(backend, ttl_ms=60_000, **kw):
    a = Ownership(backend.open(), "gw-a", ttl_ms=ttl_ms, prefix="table/", **kw)
    b = Ownership(backend.open(), "gw-b", ttl_ms=ttl_ms, prefix="table/")
    return a, b


def test_one_owner_per_table_and_its_fence_is_enforced(backend):
    a, b = replicas(backend)
    lease = a.claim("t1")
    assert lease.epoch == 1 and a.owns("t1") and a.owned() == ["t1"]
    assert b.claim("t1") is None and not b.owns("t1")
    assert b.holder("t1").owner == "gw-a"
    a.store.append("log/t1", b"x", fence=a.fence("t1"))
    with pytest.raises(NotOwner) as err:
        b.fence("t1")
    assert err.value.code == "UNAVAILABLE"
    assert a.claim("t1").epoch == 1  # claiming again: still the same tenure


def test_a_drained_replica_hands_over_at_once(backend):
    a, b = replicas(backend)
    for t in ("t1", "t2"):
        a.claim(t)
    old = a.fence("t1")
    assert a.release_all() == 2 and a.owned() == []
    assert sorted(b.orphans()) == ["t1", "t2"]
    assert b.claim("t1").epoch == 2
    with pytest.raises(Fenced):
        b.store.append("log/t1", b"late", fence=old)  # a's last epoch is refused
    assert b.orphans() == ["t2"]


def test_renewal_notices_a_takeover_and_reports_it(backend):
    lost: list[str] = []
    a, b = replicas(backend, ttl_ms=30, on_lost=lost.append)
    a.claim("t1")
    a.claim("t2")
    time.sleep(0.06)  # a was paused past its leases
    assert b.claim("t1").epoch == 2
    assert a.renew() == ["t1"] and lost == ["t1"]
    assert a.owned() == ["t2"]  # nobody took t2: renewed, same epoch
    assert a.holder("t2").epoch == 1 and not a.holder("t2").expired
    with pytest.raises(NotOwner):
        a.fence("t1")


def test_the_renewal_thread_keeps_leases_and_close_releases_them(backend):
    """Renewed by the thread (each ``ttl / 3``), the lease outlives its first term: waited for
    by its expiry moving a whole term on (so the first has ended), not by a sleep that a
    loaded machine could outlast between two renewals."""
    ttl_ms = 1_500
    a, b = replicas(backend, ttl_ms=ttl_ms)
    first = a.claim("t1").expires_ms
    a.start()
    try:
        deadline = time.monotonic() + 30
        while b.holder("t1").expires_ms < first + ttl_ms:
            assert time.monotonic() < deadline, "the lease was not renewed for a whole term"
            time.sleep(0.05)
        assert b.claim("t1") is None
    finally:
        a.close()
    assert b.claim("t1").epoch == 2


def test_a_lease_not_renewed_within_its_time_is_not_current_until_confirmed(backend):
    """A replica paused past its lease does not trust it on waking: ``current`` is False by its
    own clock; ``confirm`` renews it (nobody took it) or finds it lost (another did)."""
    lost: list[str] = []
    a, b = replicas(backend, ttl_ms=500, on_lost=lost.append)
    a.claim("t1")
    a.claim("t2")
    assert a.current("t1") and not b.current("t1") and not a.unsure("t1")
    time.sleep(0.6)  # paused: no renewal ran
    assert not a.current("t1") and not a.current("t2")
    assert a.unsure("t1") and not b.unsure("t1")  # only a lease held can be unsure
    assert b.claim("t1").epoch == 2
    assert a.confirm("t2") and a.current("t2")  # renewed now: still a's
    assert not a.confirm("t1") and lost == ["t1"] and not a.owns("t1")
    assert not a.confirm("t3")  # never held
