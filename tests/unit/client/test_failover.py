"""mahjong_client.failover (issue 32) with doubles of the gateway's calls: a try its connection
never answers is hedged on the next one after half the lease, the same request, the first
answer wins; a refusal is the caller's at once; nothing outlives the overall deadline; a stream
silent past the lease and a second is cancelled, one that keeps talking is not."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import grpc
import pytest

from mahjong_client.failover import Lease, SilenceWatch, call_hedged


class Refused(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code


class Try:
    """One try's future: answered (``answer``, or raising ``error``) after ``after`` seconds,
    never (``after`` None; it then fails DEADLINE_EXCEEDED at its timeout)."""

    def __init__(self, after: float | None, answer=None, error=None, timeout: float = 1.0):
        self._done = threading.Event()
        self._callbacks: list = []
        self.answer, self.error, self.cancelled = answer, error, False
        if after is None:
            self.error, after = Refused(grpc.StatusCode.DEADLINE_EXCEEDED), timeout
        threading.Timer(after, self._finish).start()

    def _finish(self) -> None:
        if not self._done.is_set():
            self._done.set()
            for cb in self._callbacks:
                cb(self)

    def add_done_callback(self, cb) -> None:
        self._callbacks.append(cb)

    def done(self) -> bool:
        return self._done.is_set()

    def exception(self):
        return self.error

    def result(self):
        return self.answer

    def cancel(self) -> None:
        self.cancelled = True


class Replicas:
    """Connections doubles: replica k answers each Act as ``behaviour[k](request, timeout)``."""

    def __init__(self, *behaviour) -> None:
        self.behaviour = behaviour
        self.current = 0
        self.sent: list[tuple[int, object]] = []

    def stub(self, k: int):
        def future(request, timeout):
            self.sent.append((k, request))
            return self.behaviour[k](request, timeout)

        return SimpleNamespace(Act=SimpleNamespace(future=future))

    def rotate(self, away_from: int | None = None) -> int:
        k = self.current if away_from is None else away_from
        self.current = (k + 1) % len(self.behaviour)
        return self.current


def test_an_unanswered_try_is_hedged_on_the_next_replica_with_the_same_request():
    frozen = lambda req, timeout: Try(None, timeout=timeout)  # noqa: E731
    live = lambda req, timeout: Try(0.05, answer=("ok", req))  # noqa: E731
    replicas = Replicas(frozen, live)
    request = object()
    began = time.monotonic()
    got = call_hedged(replicas, "Act", request, try_s=2.0, hedge_s=0.3, overall_s=5)
    took = time.monotonic() - began
    assert got == ("ok", request)
    assert 0.3 <= took < 0.9, took  # at the hedge, not at the frozen try's deadline
    assert [k for k, _ in replicas.sent] == [0, 1]
    assert all(r is request for _, r in replicas.sent)
    assert replicas.current == 1  # where the answer came from: the next call goes there


def test_a_refusal_is_the_callers_at_once_and_not_sent_elsewhere():
    refuse = lambda req, timeout: Try(0.01, error=Refused(grpc.StatusCode.ABORTED))  # noqa: E731
    replicas = Replicas(refuse, refuse)
    with pytest.raises(Refused) as refused:
        call_hedged(replicas, "Act", object(), try_s=2.0, hedge_s=0.5, overall_s=5)
    assert refused.value.code() is grpc.StatusCode.ABORTED
    assert len(replicas.sent) == 1


def test_an_unreachable_replica_is_left_at_once_for_the_next():
    gone = lambda req, timeout: Try(0.01, error=Refused(grpc.StatusCode.UNAVAILABLE))  # noqa: E731
    live = lambda req, timeout: Try(0.01, answer="ok")  # noqa: E731
    replicas = Replicas(gone, live)
    began = time.monotonic()
    assert call_hedged(replicas, "Act", object(), try_s=2.0, hedge_s=1.0, overall_s=5) == "ok"
    assert time.monotonic() - began < 0.5  # not after the hedge


def test_nothing_outlives_the_overall_deadline():
    frozen = lambda req, timeout: Try(None, timeout=timeout)  # noqa: E731
    replicas = Replicas(frozen, frozen)
    began = time.monotonic()
    with pytest.raises(Refused) as failed:
        call_hedged(replicas, "Act", object(), try_s=0.4, hedge_s=0.2, overall_s=0.7)
    assert failed.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - began < 1.2


def test_the_lease_sets_the_times_and_a_heartbeat_names_it():
    lease = Lease()
    assert (lease.seconds, lease.try_s, lease.hedge_s) == (30.0, 31.0, 15.0)
    lease.heard(SimpleNamespace(lease_ms=3000, interval_ms=1000))
    assert (lease.try_s, lease.hedge_s, lease.silence_s) == (4.0, 1.5, 3.0)


class Stream:
    def __init__(self) -> None:
        self.cancelled = threading.Event()

    def cancel(self) -> None:
        self.cancelled.set()


def test_a_silent_stream_is_cancelled_and_a_talking_one_is_not():
    lease = Lease(0.3)  # silent past min(0.3, 2 * 0.1) + 1 = 1.2 s
    watch = SilenceWatch(lease)
    try:
        talking = Stream()
        watch.watch(talking)
        for _ in range(15):  # 1.5 s of a message every 0.1 s
            watch.waiting()
            time.sleep(0.1)
            watch.got()
        assert not talking.cancelled.is_set() and not watch.silent
        silent = Stream()
        watch.watch(silent)
        watch.waiting()
        began = time.monotonic()
        assert silent.cancelled.wait(5)
        assert watch.silent
        assert 1.0 < time.monotonic() - began < 1.6
    finally:
        watch.close()


def test_a_slow_single_connection_gets_no_storm_of_copies():
    frozen = lambda req, timeout: Try(None, timeout=timeout)  # noqa: E731
    replicas = Replicas(frozen)
    with pytest.raises(Refused):
        call_hedged(replicas, "Act", object(), try_s=0.5, hedge_s=0.05, overall_s=0.6, most=2)
    assert len(replicas.sent) <= 3  # two at once at most; another only once one ended
