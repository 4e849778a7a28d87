"""The garbage collector's settings for a long-running process once it has started: a service
(:func:`infra.server.serve`), and the engine benchmark's process, which stands for the gateway's.

Start-up leaves a large heap that never becomes garbage: imported modules, the rulesets, the
hand-evaluation tables, the compiled classes. :func:`gc.freeze` moves it out of the collector's
generations, so no later collection walks it again. The young generation's threshold is raised
from CPython's 700 to :data:`YOUNG_THRESHOLD` allocations: a hand allocates tuples and small
objects by the thousand, nearly all freed by reference counting, and at 700 the collector ran
every few decisions to find almost nothing. The older generations keep their ratios (a full
collection still follows ten of the middle one), so cycles are still reclaimed, only in larger
batches.

A frozen object is never collected as part of a cycle: what start-up built (tables a gateway
recovered while starting included) is freed by reference counting when it goes, and a cycle
among those objects stays, at most the start-up heap, once.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000


def settle_after_start_up() -> None:
    """Collect once, freeze what start-up left, and raise the young generation's threshold."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
