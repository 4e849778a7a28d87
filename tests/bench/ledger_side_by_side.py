"""The ledger's side of ``bench_identity``: settled hands per second of one tree's ledger.

Run by :func:`tests.bench.bench_identity.ledger_side_by_side` as ``python
ledger_side_by_side.py KIND DIR SECONDS`` with ``PYTHONPATH`` set to the tree measured: this
checkout, or the ledger before items and asset legs (commit ``c7055cb``, extracted with
``git archive``). It uses only what both ledgers have in common (``grant``, ``record_hand``,
``HandReport`` of seats and payments), so one workload times both: four funded players, each
hand won by one seat from the other three.

Output (stdout, JSON): ``{"hand": settled hands per second}``.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import Callable

from infra.store import open_store
from infra.store.base import Store
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HandReport

FUNDS = 10**9


def funded_players(store: Store) -> tuple[str, ...]:
    """Four players, each granted :data:`FUNDS`."""
    players = tuple(f"bench-l{s}" for s in range(4))
    for p in players:
        ledger.grant(store, p, "bench", FUNDS, 1.0)
    return players


def winning_hands(store: Store, players: tuple[str, ...]) -> Callable[[], int]:
    """Records one settled hand per call (seat ``n % 4`` wins 3 from the others); returns 1."""
    hands = itertools.count()

    def hand() -> int:
        n = next(hands)
        pay = [-1, -1, -1, -1]
        pay[n % 4] = 3
        report = HandReport(f"h-{n}", "bench-t", "quick/bench", players, tuple(pay))
        ledger.record_hand(store, report, 2.0)
        return 1

    return hand


def main(kind: str, directory: str, seconds: float) -> dict[str, float]:
    url = "memory://" if kind == "memory" else f"sqlite:///{directory}/ledger.db"
    store = open_store(url)
    try:
        hand = winning_hands(store, funded_players(store))
        hand()  # warm up
        done, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            done += hand()
        assert ledger.reconcile(store) == []
        return {"hand": done / elapsed}
    finally:
        store.close()


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], float(sys.argv[3]))))
