"""The in-process gateway stack the GatewayService servicer tests share (one per module)."""

from __future__ import annotations

import pytest

from tests.support.stacks import inprocess_gateway


@pytest.fixture(scope="module")
def gateway():
    """A stub of a gateway with slow timers (a minute to discard or claim) and bots that
    answer at once, over wall, rules and scoring served in-process."""
    with inprocess_gateway(
        seat_secret="test-secret", discard_ms=60_000, claim_ms=60_000, auto_play_delay_ms=0
    ) as gw:
        yield gw.stub
