"""Not waiting on a paused gateway replica (issue 32): no server answers from a frozen process
(a long GC pause, a stopped VM, a node cut off with its connections half open), so the client
must not wait on one. The rules, for this client and for clients in any language (README,
"Client API"):

* Subscribe with ``heartbeats``: the gateway sends a ``StreamHeartbeat`` as the stream opens
  and whenever it sent nothing for a third of the lease; it names the lease
  (``lease_ms``), which times everything below. Until one arrives, the gateway's default lease
  (30 s) is assumed.
* A stream silent for the lease and a second is broken (:class:`SilenceWatch`): it is cancelled
  and resumed on another connection (:meth:`Connections.rotate`) from the last event seen.
  Silence is counted from the last message received, while the client waits for the next
  (after handling a message it waits a half second at least: messages sent meanwhile are
  already buffered). A stream that missed two heartbeats and a second is broken sooner
  (three seconds with a three-second lease): that is what lets its next event arrive within
  the lease and a second.
* Each unary try has a deadline of the lease and a second; a try unanswered after half the
  lease is hedged: the same request (the same request id: the gateway applies it once and
  answers every copy with the first result) is sent on the next connection too, and the first
  answer wins (:func:`call_hedged`). A try that fails UNAVAILABLE / DEADLINE_EXCEEDED is sent
  again on the next connection at once; all within the caller's overall deadline. A call
  answered on another connection than the stream's moves the stream there too (its
  connection did not answer for half the lease).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc

from infra.addresses import CLIENT_KEEPALIVE_OPTIONS
from infra.tls import client_channel

DEFAULT_LEASE_S = 30.0  # the gateway's default --lease-ms, until a heartbeat names the lease
GRACE_S = 0.5  # a client's wait after handling a message before its stream may count as silent
TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class Lease:
    """The replicas' table lease as the client knows it (given, or from the last heartbeat),
    and the times it sets."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds if seconds is not None else DEFAULT_LEASE_S
        self.interval = self.seconds / 3  # the gateway's heartbeat interval

    def heard(self, heartbeat: gateway_pb2.StreamHeartbeat) -> None:
        if heartbeat.lease_ms > 0:
            self.seconds = heartbeat.lease_ms / 1000
            self.interval = (heartbeat.interval_ms or heartbeat.lease_ms / 3) / 1000

    @property
    def silence_s(self) -> float:
        """How long a stream may stay silent: the lease and a second, or two heartbeats missed
        and a second if sooner."""
        return min(self.seconds, 2 * self.interval) + 1.0

    @property
    def try_s(self) -> float:
        """One unary try's deadline."""
        return self.seconds + 1.0

    @property
    def hedge_s(self) -> float:
        """How long a try waits before the same request also goes to the next connection."""
        return self.seconds / 2


class Connections:
    """The gateway addresses a client may call, each with its channel (opened when first
    used), one of them current. ``first`` may be an open channel (the caller's, never closed
    here). With one address only, a rotation opens a new channel to it (behind a load balancer
    a new connection may reach another replica)."""

    def __init__(
        self, first: str | grpc.Channel, others: Sequence[str | grpc.Channel] = ()
    ) -> None:
        self.targets: list[str | grpc.Channel] = [first, *others]
        self._channels: dict[int, grpc.Channel] = {}
        self.current = 0
        self._lock = threading.Lock()

    def channel(self, k: int) -> grpc.Channel:
        with self._lock:
            if k not in self._channels:
                t = self.targets[k]
                self._channels[k] = (
                    t
                    if isinstance(t, grpc.Channel)
                    else client_channel(t, CLIENT_KEEPALIVE_OPTIONS)
                )
            return self._channels[k]

    def stub(self, k: int | None = None) -> gateway_pb2_grpc.GatewayServiceStub:
        return gateway_pb2_grpc.GatewayServiceStub(self.channel(self.current if k is None else k))

    def rotate(self, away_from: int | None = None) -> int:
        """Make the connection after ``away_from`` (the current one) current; its index."""
        with self._lock:
            k = self.current if away_from is None else away_from
            if len(self.targets) == 1 and isinstance(self.targets[0], str):
                old = self._channels.pop(0, None)
                if old is not None:
                    old.close()
            self.current = (k + 1) % len(self.targets)
            return self.current

    def close(self) -> None:
        with self._lock:
            for k, ch in self._channels.items():
                if isinstance(self.targets[k], str):
                    ch.close()
            self._channels.clear()


def call_hedged(
    connections: Connections,
    method: str,
    request: Any,
    *,
    try_s: float,
    hedge_s: float,
    overall_s: float,
    retry_delay: Callable[[grpc.RpcError], float | None] = lambda exc: None,
    most: int = 2,
) -> Any:
    """``method`` (a GatewayService method name) with ``request`` (its request id set: every
    copy is the same call), as the module's rules say: tries of ``try_s`` at most
    (:attr:`Lease.try_s`), hedged on the next connection after ``hedge_s``
    (:attr:`Lease.hedge_s`), sent again at once on the next connection
    after UNAVAILABLE / DEADLINE_EXCEEDED, after the wait a RESOURCE_EXHAUSTED refusal's
    ``retry_delay`` asks for, until ``overall_s`` has passed; at most ``most`` tries under way
    at once (one per connection: no storm of copies on a slow one). The first answer wins (its
    connection becomes current); any other error is raised as it came."""
    deadline = time.monotonic() + overall_s
    woke = threading.Event()
    pending: dict[Any, int] = {}
    last: grpc.RpcError | None = None

    def launch(k: int) -> float:
        left = deadline - time.monotonic()
        call = getattr(connections.stub(k), method).future(
            request, timeout=max(0.05, min(try_s, left))
        )
        call.add_done_callback(lambda _: woke.set())
        pending[call] = k
        return time.monotonic() + hedge_s

    k = connections.current
    again_at = launch(k)
    try:
        while True:
            now = time.monotonic()
            if pending:  # until a try ends, the next is due, or (past the deadline) a while
                woke.wait(max(0.0, min(again_at, deadline) - now) if now < deadline else 0.05)
            woke.clear()
            for call in [c for c in pending if c.done()]:
                answered_by = pending.pop(call)
                exc = call.exception()
                if exc is None:
                    connections.current = answered_by
                    return call.result()
                asked = retry_delay(exc)
                if asked is not None:  # flood control: the server says when
                    deadline += asked
                    again_at = time.monotonic() + asked
                elif exc.code() in TRANSIENT:
                    last = exc
                    again_at = min(again_at, time.monotonic() + 0.05)
                else:
                    raise exc
            now = time.monotonic()
            if now >= deadline:
                if not pending:
                    if last is not None:
                        raise last
                    raise TimeoutError(f"{method}: no answer within {overall_s:g} s")
                again_at = deadline + 3600  # only the tries under way may still answer
            elif now >= again_at and len(pending) < most:
                again_at = launch(connections.rotate(k))
                k = connections.current
            elif now >= again_at:  # as many tries under way as allowed: the next when one ends
                again_at = deadline
    finally:
        for call in pending:
            call.cancel()


class SilenceWatch:
    """Cancels a stream its client waits on once nothing came for ``lease.silence_s`` (its
    replica is paused or cut off), and no sooner than :data:`GRACE_S` after it began to wait;
    ``silent`` tells the client why its stream ended. One thread per watch, looking every
    tenth of a second; :meth:`close` ends it."""

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        self.silent = False
        self._stream: Any = None
        self._since: float | None = None
        self._last = time.monotonic()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="silence-watch", daemon=True)
        self._thread.start()

    def watch(self, stream: Any) -> None:
        self._stream, self._since, self.silent = stream, None, False
        self._last = time.monotonic()

    def waiting(self) -> None:
        self._since = time.monotonic()

    def got(self) -> None:
        self._since = None
        self._last = time.monotonic()

    def _run(self) -> None:
        while not self._closed.wait(0.1):
            since, stream = self._since, self._stream
            if since is not None and stream is not None:
                now = time.monotonic()
                if now > max(self._last + self.lease.silence_s, since + GRACE_S):
                    self.silent = True
                    self._since = None
                    stream.cancel()

    def close(self) -> None:
        self._closed.set()
