"""Clocks: the service reads time only through a ``Clock`` so tests control it."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]  # seconds since the epoch


def system_clock() -> float:
    """Wall-clock seconds (the production clock)."""
    return time.time()
