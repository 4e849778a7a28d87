"""The timing side of ``bench_rules``; runs inside ``.venv-bench`` (PyPI ``mahjong``).

Run by :func:`tests.bench.run_peer` as ``python rules_side_by_side.py HANDS.json`` with the
repository root on PYTHONPATH (our hand code is pure standard-library Python, so this
interpreter imports it as it is). Both
sides run in this one process with their rounds interleaved, each keeping its best round, so a
busy machine slows both alike.

Input: ``{"repeat": R, "sets": {name: {"kind": "win" | "waits", "hands": [[34 counts]...]}}}``.
Output (stdout, JSON): ``{name: {"ours_ns": …, "peer_ns": …, "agari": [...]}}`` per hand;
``agari`` holds is_agari's answers (win sets) or the kinds completing each hand (waits sets).
"""

from __future__ import annotations

import json
import sys
import time

from mahjong.agari import Agari

from shared.hand import is_winning_hand, waits
from shared.ruleset import load_ruleset


def peer_loop(kind: str, hands: list[list[int]]):
    is_agari = Agari.is_agari
    if kind == "win":

        def run():
            for h in hands:
                is_agari(h)

    else:  # waits the only way the package offers: each of the 34 kinds with is_agari

        def run():
            for h in hands:
                for k in range(34):
                    if h[k] < 4:
                        h[k] += 1
                        is_agari(h)
                        h[k] -= 1

    return run


def our_loop(kind: str, hands: list[list[int]]):
    ruleset = load_ruleset()
    melds: tuple = ()
    if kind == "win":

        def run():
            for h in hands:
                is_winning_hand(h, melds, ruleset)

    else:

        def run():
            for h in hands:
                waits(h, melds, ruleset)

    return run


def completing(h: list[int]) -> list[int]:
    out = []
    for k in range(34):
        if h[k] < 4:
            h[k] += 1
            if Agari.is_agari(h):
                out.append(k)
            h[k] -= 1
    return out


def best_of(loops, repeat: int) -> list[float]:
    best = [float("inf")] * len(loops)
    for _ in range(repeat):
        for i, loop in enumerate(loops):
            start = time.perf_counter()
            loop()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def main(path: str) -> int:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    out = {}
    for name, spec in data["sets"].items():
        kind, hands = spec["kind"], spec["hands"]
        ours, theirs = best_of((our_loop(kind, hands), peer_loop(kind, hands)), data["repeat"])
        answers = (
            [Agari.is_agari(h) for h in hands] if kind == "win" else list(map(completing, hands))
        )
        out[name] = {
            "ours_ns": ours / len(hands) * 1e9,
            "peer_ns": theirs / len(hands) * 1e9,
            "agari": answers,
        }
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
