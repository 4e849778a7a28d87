"""Token buckets and per-address call limits (pure: a fake clock, no server)."""

from __future__ import annotations

import pytest

from infra.aio_server import CallLimits
from infra.interceptor import peer_address
from infra.rate_limit import RateLimiter
from infra.status import rich_status
from shared.errors import ResourceExhausted


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate_then_a_refusal_naming_the_delay():
    clock = Clock()
    limiter = RateLimiter(10, 3, clock=clock)
    assert [limiter.wait_for("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.wait_for("a") == pytest.approx(0.1)
    assert limiter.wait_for("b") == 0.0  # another key is not slowed
    clock.now = 0.1
    assert limiter.wait_for("a") == 0.0
    with pytest.raises(ResourceExhausted) as refused:
        limiter.take("a", "calls")
    assert refused.value.reason == "RATE_LIMITED"
    assert refused.value.details["retry_delay_ms"] == "100"


def test_the_refusal_carries_retry_info_as_well_as_error_info():
    from google.rpc import error_details_pb2

    limiter = RateLimiter(1, 1, clock=Clock())
    limiter.take("a", "calls")
    with pytest.raises(ResourceExhausted) as refused:
        limiter.take("a", "calls")
    status = rich_status(refused.value)
    retry = error_details_pb2.RetryInfo()
    assert status.details[1].Unpack(retry)
    assert retry.retry_delay.seconds == 1 and retry.retry_delay.nanos == 0


def test_idle_buckets_are_dropped_so_memory_stays_bounded():
    clock = Clock()
    limiter = RateLimiter(100, 1, clock=clock)
    for i in range(30_000):
        clock.now = i * 0.001
        limiter.wait_for(f"k{i}")
    assert len(limiter._buckets) < 12_000


def test_a_zero_rate_is_no_limit():
    limiter = RateLimiter(0, 1)
    assert not limiter.enabled
    assert all(limiter.wait_for("a") == 0.0 for _ in range(1000))


def test_peer_addresses_of_each_transport():
    assert peer_address("ipv4:10.0.0.7:51234") == ("10.0.0.7", "10.0.0.7:51234")
    assert peer_address("ipv6:[::1]:5000") == ("[::1]", "[::1]:5000")
    assert peer_address("web:1.2.3.4") == ("1.2.3.4", "1.2.3.4")


def test_call_limits_count_streams_and_connections_per_address():
    limits = CallLimits(max_streams=3, streams_per_address=2, connections_per_address=2)
    a1 = limits.enter("ipv4:1.1.1.1:1", stream=True)
    limits.enter("ipv4:1.1.1.1:2", stream=True)
    with pytest.raises(ResourceExhausted) as per_address:
        limits.enter("ipv4:1.1.1.1:1", stream=True)
    assert per_address.value.reason == "ADDRESS_STREAM_LIMIT"
    with pytest.raises(ResourceExhausted) as connections:
        limits.enter("ipv4:1.1.1.1:3", stream=False)
    assert connections.value.reason == "CONNECTION_LIMIT"
    limits.enter("ipv4:2.2.2.2:1", stream=True)
    with pytest.raises(ResourceExhausted) as total:
        limits.enter("ipv4:3.3.3.3:1", stream=True)
    assert total.value.reason == "STREAM_LIMIT"
    a1()  # one ends: its slot and its connection are free again
    assert limits.streams == 2
    limits.enter("ipv4:1.1.1.1:3", stream=False)()
