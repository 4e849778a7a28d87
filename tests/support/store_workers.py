"""Work for the store suite's multi-process tests, run in spawned processes (importable by
name). Each worker opens its own store on the shared URL, waits at the barrier so that all
run at once, and puts what it saw on the queue."""

from __future__ import annotations

from infra.store import open_store


def _incr(old: bytes | None) -> tuple[bytes, int]:
    n = int(old or b"0") + 1
    return str(n).encode(), n


def updates_and_appends(url: str, rounds: int, name: str, barrier, queue) -> None:
    """``rounds`` increments of one counter and ``rounds`` appends to one log."""
    store = open_store(url, pool_size=2)
    try:
        barrier.wait(60)
        seen = [store.update("ns", "counter", _incr) for _ in range(rounds)]
        numbers = [store.append("log", f"{name}-{i}".encode()) for i in range(rounds)]
        queue.put((name, seen, numbers))
    except BaseException as exc:
        queue.put((name, repr(exc), []))
        raise
    finally:
        store.close()


def open_only(url: str, name: str, barrier, queue) -> None:
    """Open the store (its schema created or migrated at start) at the same time as others."""
    barrier.wait(60)
    try:
        store = open_store(url, pool_size=1)
        store.put("opened", name, b"1")
        store.close()
        queue.put((name, "ok"))
    except BaseException as exc:
        queue.put((name, repr(exc)))
        raise


def takeover_rounds(store, name: str, rounds: int, seed: int) -> tuple[list[int], int]:
    """Compete for one lease: acquire it (20 ms), append up to 3 fenced entries with pauses
    that sometimes outlast the lease, sometimes release it. Returns the epochs this owner got
    and how many of its writes were fenced."""
    import random
    import time

    from infra.store.base import Fenced, LeaseHeld

    rng = random.Random(seed)
    got: list[int] = []
    fenced = 0
    for _ in range(rounds):
        try:
            lease = store.acquire_lease("table", name, 20)
        except LeaseHeld:
            time.sleep(rng.uniform(0, 0.004))
            continue
        got.append(lease.epoch)
        for _ in range(3):
            try:
                store.append("table-log", f"{lease.epoch}:{name}".encode(), fence=lease.fence)
            except Fenced:
                fenced += 1
                break
            time.sleep(rng.uniform(0, 0.015))
        if rng.random() < 0.3:
            store.release_lease(lease)
    return got, fenced


def takeovers(url: str, rounds: int, name: str, barrier, queue) -> None:
    store = open_store(url, pool_size=2)
    try:
        barrier.wait(60)
        got, fenced = takeover_rounds(store, name, rounds, hash(name))
        queue.put((name, got, fenced))
    except BaseException as exc:
        queue.put((name, repr(exc), 0))
        raise
    finally:
        store.close()
