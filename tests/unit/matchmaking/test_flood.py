"""Matchmaking's flood control (services/matchmaking/adapters/flood.py) on a fake clock: a flooding
player or address is refused with the delay to wait, and nobody else is slowed by it; open
streams are counted per player and per address."""

from __future__ import annotations

import pytest

from services.matchmaking.adapters.flood import FloodControl, FloodSettings, StreamCounter
from shared.errors import ResourceExhausted


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


SETTINGS = FloodSettings(
    player_rate=10,
    player_burst=5,
    address_rate=50,
    address_burst=20,
    streams_per_player=2,
    streams_per_address=3,
)


def flood(control: FloodControl, address: str, player: str | None, calls: int) -> int:
    """How many of ``calls`` were admitted."""
    admitted = 0
    for _ in range(calls):
        try:
            control.admit(address, player)
            admitted += 1
        except ResourceExhausted:
            pass
    return admitted


def test_a_flooding_player_is_refused_with_the_delay_and_its_neighbour_is_not():
    clock = Clock()
    control = FloodControl(SETTINGS, clock=clock)
    assert flood(control, "10.0.0.1", "p-flood", 1000) == 5  # its burst, then refused
    with pytest.raises(ResourceExhausted) as refused:
        control.admit("10.0.0.1", "p-flood")
    assert refused.value.reason == "RATE_LIMITED"
    assert refused.value.details["retry_delay_ms"] == "100"  # 10 a second
    # the refused calls cost its address nothing: another player there has the address's room
    assert flood(control, "10.0.0.1", "p-quiet", 5) == 5
    clock.now += 0.2
    assert flood(control, "10.0.0.1", "p-flood", 3) == 2  # two more a fifth of a second later


def test_a_flooding_address_is_refused_and_other_addresses_are_not():
    clock = Clock()
    control = FloodControl(SETTINGS, clock=clock)
    # without sessions (forged tokens, sign-ins) every call counts against the address
    assert flood(control, "10.0.0.9", None, 1000) == 20
    with pytest.raises(ResourceExhausted) as refused:
        control.admit("10.0.0.9", "p-new")  # its players share the address's refusal
    assert "10.0.0.9" in refused.value.message
    assert flood(control, "10.0.0.2", None, 20) == 20
    assert flood(control, "10.0.0.3", "p-other", 5) == 5


def test_zero_rates_turn_it_off():
    control = FloodControl(FloodSettings(player_rate=0, address_rate=0))
    assert flood(control, "10.0.0.1", "p", 10_000) == 10_000


def test_streams_are_counted_per_player_and_per_address_while_open():
    control = FloodControl(SETTINGS)
    held = []
    for _ in range(2):
        cm = control.stream("10.0.0.1", "p-a")
        cm.__enter__()
        held.append(cm)
    with pytest.raises(ResourceExhausted) as refused, control.stream("10.0.0.1", "p-a"):
        pass
    assert refused.value.reason == "TOO_MANY_STREAMS"
    assert refused.value.details["retry_delay_ms"] == "1000"
    with control.stream("10.0.0.1", "p-b"):  # the address's third
        with pytest.raises(ResourceExhausted), control.stream("10.0.0.1", "p-c"):
            pass
        with control.stream("10.0.0.2", "p-c"):  # another address is not held back
            pass
    assert control.address_streams.open("10.0.0.1") == 2  # a refusal holds nothing
    held.pop().__exit__(None, None, None)
    with control.stream("10.0.0.1", "p-a"):  # a closed stream frees its place
        assert control.player_streams.open("p-a") == 2
    for cm in held:
        cm.__exit__(None, None, None)
    assert control.player_streams.open("p-a") == 0
    assert control.address_streams.open("10.0.0.1") == 0


def test_a_stream_counter_without_a_limit_counts_nothing():
    counter = StreamCounter(0)
    for _ in range(1000):
        counter.acquire("k", "k")
    assert counter.open("k") == 0
