"""Claim windows that tell nothing (RULES §4 "Claim windows"): the hold of every window.

A discard (or an added kong) opens a claim (or 抢杠) window. If the hand went on at once when
nobody may claim, and waited for the seat that may, the pause before the next draw would tell
everyone that some seat holds a pair of the tile or waits on it. So at a table with a person
seated every window is held for ``timers.claim_window_floor_ms`` plus a uniform random
0..``timers.claim_window_jitter_ms``, drawn afresh for each window: a window nobody may answer
ends when its hold runs out, one that somebody may answer when every prompted seat answered or
the hold ran out, whichever is later (:meth:`HandEngine.after_hold`). A claim prompt's own timer
is unchanged. A table with no person seated (bots, a tournament of bots) has no hold: nobody
is there to read the pauses, and it plays at full speed.

The hold drawn for a window is written with its discard (``hold_ms`` of ``tile_discarded`` or
``meld_declared``; no viewer sees it), so a replica taking the table over mid-window ends that
window when its first owner would have (:mod:`services.gateway.domain.restore`). It is drawn
from the operating system's randomness: nobody can predict it, and a replay needs no seed (the
hold changes when the hand goes on, never what happens in it).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession


def window_timing(t: TableSession) -> tuple[int, int]:
    """(floor, jitter) of a window's hold, in ms: the session's (the gateway's
    ``--claim-window-floor-ms``, ``--claim-window-jitter-ms``), else the ruleset's."""
    cfg, timers = t.config, t.config.ruleset.timers
    floor = cfg.claim_window_floor_ms
    jitter = cfg.claim_window_jitter_ms
    return (
        int(timers.claim_window_floor_ms) if floor is None else floor,
        int(timers.claim_window_jitter_ms) if jitter is None else jitter,
    )


def person_seated(t: TableSession) -> bool:
    """A person holds a seat (on 托管 too: they watch the table); not a bot, not one who left."""
    return any(not (s.bot or s.left) for s in t.seats)


def window_hold(t: TableSession) -> int:
    """The hold of the window about to open: floor + uniform 0..jitter ms when a person is
    seated, else 0 (full speed)."""
    if not person_seated(t):
        return 0
    floor, jitter = window_timing(t)
    return floor + (t.window_rng.randint(0, jitter) if jitter > 0 else 0)


def defer_later(t: TableSession, step: Callable[[], None], ms: int) -> None:
    """Run an engine step once a window's hold ran out (``ms`` from now): :meth:`TableSession.
    defer`'s retries apply to it as to any step."""
    t.defer(step, delay_ms=ms)


def hold_hook(t: TableSession) -> Callable[[], int]:
    """The hand engine's ``window_hold`` for the session ``t``."""
    return functools.partial(window_hold, t)


def defer_hook(t: TableSession) -> Callable[[Callable[[], None], int], None]:
    """The hand engine's ``defer_later`` for the session ``t``."""
    return functools.partial(defer_later, t)


def new_rng() -> random.Random:
    """The source of the holds: the operating system's randomness (unpredictable)."""
    return random.SystemRandom()
