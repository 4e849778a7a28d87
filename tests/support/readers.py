"""A Subscribe stream read on a thread of its own, each event noted with the time it arrived:
what a fault test or benchmark needs to say how long after a signal the next event came."""

from __future__ import annotations

import queue
import threading
import time

import grpc
from mahjong.gateway.v1 import gateway_pb2 as pb


class Reader(threading.Thread):
    """Reads ``stream`` into ``events``, a queue of (monotonic arrival time, event); ``error``
    is the status it ended with, if any."""

    def __init__(self, stream) -> None:
        super().__init__(daemon=True, name="stream-reader")
        self.stream = stream
        self.events: queue.Queue = queue.Queue()
        self.error: grpc.RpcError | None = None

    def run(self) -> None:
        try:
            for r in self.stream:
                self.events.put((time.monotonic(), r.event))
        except grpc.RpcError as exc:
            self.error = exc

    def next_event(self, timeout: float) -> tuple[float, pb.Event]:
        try:
            return self.events.get(timeout=max(0.01, timeout))
        except queue.Empty:
            raise AssertionError(
                f"no event in {timeout:g} s (the stream: {self.error!r})"
            ) from None

    def next_prompt(self, timeout: float = 30) -> pb.Event:
        """The next own-turn prompt (the events before it are passed over)."""
        deadline = time.monotonic() + timeout
        while True:
            _, e = self.next_event(deadline - time.monotonic())
            if e.WhichOneof("kind") == "prompt" and e.prompt.kind == pb.PROMPT_KIND_OWN_TURN:
                return e

    def until(self, sequence: int, timeout: float) -> float:
        """When event ``sequence`` (or a later one) arrived."""
        deadline = time.monotonic() + timeout
        while True:
            at, e = self.next_event(deadline - time.monotonic())
            if e.sequence >= sequence:
                return at
