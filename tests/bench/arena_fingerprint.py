"""The fixed-seed arena's fingerprint: what a refactor of the engine must leave unchanged.

120 tables of four random bots (40 seeds under each preset: shanghai-qiaoma, shanghai-old,
shanghai-baida), 10 hands each, in-process (tests/support/arena.py), with the wall's secret seeds
and hand ids drawn from a counter instead of the OS (so a run repeats exactly). Two SHA-256
hashes are printed: ``records``, of every event's log record (the codec's bytes, time 0), and
``results``, of each table's hand results (repr), decisions and chips. Run it in the trees to
compare, with the same PYTHONHASHSEED, compiled or pure (``MAHJONG_PURE_PYTHON=1``):

    PYTHONHASHSEED=0 PYTHONPATH=<tree> python -m tests.bench.arena_fingerprint
"""

from __future__ import annotations

import hashlib
import itertools
import sys
from collections.abc import Callable
from typing import Any

import tests.support.arena as arena
from services.gateway.adapters import inprocess
from services.gateway.bots import RandomBot
from services.gateway.domain.events import codec
from services.gateway.domain.events.kinds import TableEvent
from services.wall.domain import shuffle

PRESETS = ("shanghai-qiaoma", "shanghai-old", "shanghai-baida")
SEEDS = 40
HANDS = 10


class _CountedSecrets:
    """Hand ids and wall seeds from a counter, restarted for each table."""

    def __init__(self) -> None:
        self.counter = itertools.count()

    def token_hex(self, n: int) -> str:
        return hashlib.sha256(b"id%d" % next(self.counter)).hexdigest()[: 2 * n]

    def new_seed(self) -> bytes:
        return hashlib.sha256(b"seed%d" % next(self.counter)).digest()


def fingerprint() -> tuple[str, str, int]:
    """(records hash, results hash, events) over the fixed-seed tables."""
    secrets = _CountedSecrets()
    inprocess.secrets = secrets  # type: ignore[assignment]
    shuffle.new_seed = secrets.new_seed
    events: list[TableEvent] = []
    session = arena.TableSession

    def recording_session(*args: Any, emit: Callable[[TableEvent], int], **kwargs: Any) -> Any:
        def emit_and_keep(event: TableEvent) -> int:
            events.append(event)
            return emit(event)

        return session(*args, emit=emit_and_keep, **kwargs)

    arena.TableSession = recording_session  # type: ignore[misc]
    decisions: list[str] = []

    def record_decision(_pending: Any, action: Any) -> None:
        decisions.append(repr(action))

    records, results, count = hashlib.sha256(), hashlib.sha256(), 0
    try:
        for preset in PRESETS:
            for seed in range(SEEDS):
                secrets.counter = itertools.count()
                decisions.clear()
                res = arena.play_table(
                    RandomBot(seed),
                    HANDS,
                    seed=seed,
                    ruleset=preset,
                    check=record_decision,
                )
                for event in events:
                    records.update(codec.encode(0, event) + b"\n")
                count += len(events)
                events.clear()
                for hand in res.hands:
                    results.update(repr(hand).encode())
                results.update(("|".join(decisions) + repr(res.chips)).encode())
    finally:
        arena.TableSession = session  # type: ignore[misc]
    return records.hexdigest(), results.hexdigest(), count


def main() -> int:
    records, results, count = fingerprint()
    print(f"records {records}  results {results}  ({count} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
