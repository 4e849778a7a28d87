"""The wall's own refusals, kept out of the compiled modules (wall.py, record.py): mypyc drops
a class attribute that overrides one of a Python base class, so there ``reason`` would read as
the base's."""

from __future__ import annotations

from shared.errors import Aborted, FailedPrecondition


class WallExhausted(FailedPrecondition):
    """No drawable tile is left: the hand is drawn (流局, 荒)."""

    reason = "WALL_EXHAUSTED"


class StaleOwner(Aborted):
    """An operation under an owner epoch older than the hand's latest: another replica owns
    the table this hand is played at now, so this caller's calls are refused (fencing)."""

    reason = "STALE_OWNER"
