"""Running test work at once in several threads or spawned processes, failures reported."""

from __future__ import annotations

import multiprocessing
import threading


def run_threads(fn, n: int, *, with_index: bool = False) -> None:
    errors: list[BaseException] = []

    def guarded(i):
        try:
            fn(i) if with_index else fn()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def run_processes(target, url: str, n: int, *, extra: tuple = ()) -> list[tuple]:
    """``target(url, *extra, name, barrier, queue)`` in ``n`` spawned processes at once; what
    each put on the queue (a failure's repr fails the test)."""
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    procs = [
        ctx.Process(target=target, args=(url, *extra, f"p{i}", barrier, queue)) for i in range(n)
    ]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
    failed = [r for r in results if isinstance(r[1], str) and r[1] != "ok"]
    assert not failed, failed
    assert all(p.exitcode == 0 for p in procs)
    return results


def run_threads_each(fns) -> None:
    """Each of ``fns`` in its own thread, all at once."""
    run_threads(lambda i: fns[i](), len(fns), with_index=True)
