"""Bots benchmark (issue 5 (b) and the planning bot's strength), printed side by side:

1. whole hands per second of our in-process engine (the gateway's table session on the
   in-process wall, rules and scoring) with four random legal-move bots, against RLCard's
   mahjong environment with four random agents, in one run (target: at least 20×, issue 22).
   RLCard runs in ``.venv-bench`` (:func:`tests.bench.bench_venv`; never in the main venv,
   whose generated stubs are the package ``mahjong`` too) in a subprocess reading its inputs
   from a JSON file;
2. the planning bot's win rate against three random bots over 500 hands (five tables of 100,
   the planner in a different seat at each), with draws, hand types and chips;
3. the planning bot's time per decision.

``MAHJONG_BENCH_SECONDS`` (default 1.5) scales the time given to each speed measurement.
"""

from __future__ import annotations

import cProfile
import importlib
import pstats
import sys
import time
from collections import Counter
from pathlib import Path

from services.gateway.bots import PlanningBot, RandomBot
from tests.bench import bench_seconds, bench_venv, run_peer
from tests.support.arena import play_table

TARGET_RATIO = 20.0  # issue 22 (it was 10×)
WIN_RATE_HANDS = 500

RLCARD_SCRIPT = r"""
import json, sys, time
cfg = json.load(open(sys.argv[1]))
import rlcard
from rlcard.agents import RandomAgent
env = rlcard.make("mahjong", config={"seed": cfg["seed"]})
env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(4)])
env.run(is_training=False)  # warm up
hands, start, cpu = 0, time.perf_counter(), time.process_time()
while hands < cfg["max_hands"] and time.perf_counter() - start < cfg["seconds"]:
    env.run(is_training=False)
    hands += 1
print(json.dumps({"hands": hands, "seconds": time.perf_counter() - start,
                  "cpu_seconds": time.process_time() - cpu}))
"""


def rlcard_rate(seconds: float, seed: int) -> tuple[float, float, int] | None:
    """RLCard's hands per second (wall clock, CPU time) and hands, in ``.venv-bench``."""
    python = bench_venv("rlcard", "rlcard")
    if python is None:
        return None
    out = run_peer(
        python,
        RLCARD_SCRIPT,
        {"seed": seed, "seconds": seconds, "max_hands": 100_000},
        timeout=seconds * 10 + 120,
    )
    if out is None:
        return None
    return out["hands"] / out["seconds"], out["hands"] / out["cpu_seconds"], out["hands"]


def engine_build() -> str:
    """How the engine's hot path runs here: compiled (setup.py, mypyc) or as Python."""
    hot = (
        "shared.hand.waits",
        "services.rules.domain.claims",
        "services.gateway.domain.hand.engine",
    )
    compiled = [m for m in hot if (importlib.import_module(m).__file__ or "").endswith(".so")]
    if len(compiled) == len(hot):
        return "compiled with mypyc (the hot path setup.py builds)"
    if not compiled:
        return "as pure Python (no compiled extensions: MAHJONG_PURE_PYTHON or `make pure`)"
    return f"partly compiled ({', '.join(compiled)})"


ENGINE_SCRIPT = r"""
import json, sys, time
cfg = json.load(open(sys.argv[1]))
from services.gateway.bots import RandomBot
from tests.support.arena import play_table
seed, ruleset = cfg["seed"], cfg["ruleset"]
play_table(RandomBot(seed), 1, seed=seed, ruleset=ruleset)  # warm up (imports, tables)
from infra.gc_tuning import settle_after_start_up
settle_after_start_up()  # as a service does once started (infra.server.serve)
hands, start, cpu, table = 0, time.perf_counter(), time.process_time(), 0
while time.perf_counter() - start < cfg["seconds"]:
    table += 1
    bot = RandomBot(seed + table)
    hands += len(play_table(bot, 10, seed=seed + table, ruleset=ruleset).hands)
print(json.dumps({"hands": hands, "seconds": time.perf_counter() - start,
                  "cpu_seconds": time.process_time() - cpu}))
"""


def engine_rate(
    seconds: float, seed: int, ruleset: str = "shanghai-qiaoma"
) -> tuple[float, float, int]:
    """Whole hands per second (wall clock, CPU time) of our engine with four random legal-move
    bots, and the hands played: in a fresh process of the main venv, as RLCard runs in one of
    its own (not in this one, which earlier benchmarks have filled with objects the garbage
    collector keeps visiting)."""
    out = run_peer(
        Path(sys.executable),
        ENGINE_SCRIPT,
        {"seed": seed, "seconds": seconds, "ruleset": ruleset},
        timeout=seconds * 10 + 120,
    )
    if out is None:
        raise RuntimeError("the engine's run failed")
    return out["hands"] / out["seconds"], out["hands"] / out["cpu_seconds"], out["hands"]


OTHER = "builtins and the standard library"
_GROUPS = (
    ("rules domain", "services/rules/"),
    ("hand evaluation (shared/hand)", "shared/hand/"),
    ("tile notation (event encoding)", "shared/tiles.py"),
    ("gateway engine", "services/gateway/domain/"),
    ("bots", "services/gateway/bots/"),
    ("wall domain", "services/wall/"),
    ("scoring domain", "services/scoring/"),
)


def engine_profile(hands: int = 20, seed: int = 11) -> list[tuple[str, float]]:
    """Where the engine's time goes with four random bots: own time by package, in percent."""
    profiler = cProfile.Profile()
    profiler.enable()
    play_table(RandomBot(seed), hands, seed=seed)
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in stats.values()) or 1.0
    shares = dict.fromkeys([name for name, _ in _GROUPS] + [OTHER], 0.0)
    for (filename, _, _), v in stats.items():
        path = filename.replace("\\", "/")
        group = next((name for name, part in _GROUPS if part in path), OTHER)
        shares[group] += v[2]
    return sorted(((g, 100 * t / total) for g, t in shares.items()), key=lambda x: -x[1])


class TimedBot(PlanningBot):
    """The planning bot with a stopwatch on its decisions."""

    def __init__(self) -> None:
        self.spent = 0.0
        self.decisions = 0

    def own_turn(self, view, options):
        t = time.perf_counter()
        try:
            return super().own_turn(view, options)
        finally:
            self.spent += time.perf_counter() - t
            self.decisions += 1

    def claim(self, view, options, tile):
        t = time.perf_counter()
        try:
            return super().claim(view, options, tile)
        finally:
            self.spent += time.perf_counter() - t
            self.decisions += 1


def win_rate(total: int) -> dict:
    planner = TimedBot()
    tables = 5
    stats = Counter(hands=0, draws=0, planner_wins=0, random_wins=0)
    hand_types: Counter[str] = Counter()
    win_kinds: Counter[str] = Counter()
    planner_chips = 0
    for t in range(tables):
        seat = t % 4
        bots = {s: (planner if s == seat else RandomBot(100 * t + s)) for s in range(4)}
        res = play_table(bots, total // tables, seed=1000 + t)
        stats["hands"] += len(res.hands)
        stats["draws"] += res.draws
        for hand in res.hands:
            for w in hand.winners:
                if w.seat == seat:
                    stats["planner_wins"] += 1
                    hand_types[w.hand] += 1
                    win_kinds[w.win_kind] += 1
                else:
                    stats["random_wins"] += 1
        planner_chips += res.chips[seat]
    return {
        **stats,
        "hand_types": dict(hand_types),
        "planner_chips": planner_chips,
        "ms_per_decision": 1000 * planner.spent / max(planner.decisions, 1),
        "wins_by_kind": dict(win_kinds),
        "decisions": planner.decisions,
    }


def main() -> int:
    seconds = max(3.0, 2 * bench_seconds())
    print("(b) whole hands per second, four random legal-move bots, one run side by side")
    print("  (wall clock, and per CPU second, which a busy machine distorts less)")
    print(f"  our engine runs {engine_build()}")
    ours, ours_cpu, ours_hands = engine_rate(seconds, seed=7)
    print(
        f"  our in-process engine : {ours:8.1f} hands/s, {ours_cpu:8.1f} per CPU s "
        f"({ours_hands} hands)"
    )
    peer = rlcard_rate(seconds, seed=7)
    if peer is None:
        print("  RLCard mahjong        :      n/a")
    else:
        theirs, theirs_cpu, their_hands = peer
        ratio, ratio_cpu = ours / theirs, ours_cpu / theirs_cpu
        verdict = "met" if ratio >= TARGET_RATIO else "NOT met"
        print(
            f"  RLCard mahjong        : {theirs:8.1f} hands/s, {theirs_cpu:8.1f} per CPU s "
            f"({their_hands} hands)"
        )
        print(
            f"  ratio                 : {ratio:8.2f}× wall clock, {ratio_cpu:.2f}× CPU "
            f"(target ≥ {TARGET_RATIO:.0f}×: {verdict})"
        )

    print(
        "  where our engine's time goes (own time by package, profiled; cProfile does not see "
        "inside compiled modules, whose time counts in their Python callers):"
    )
    for group, share in engine_profile():
        print(f"    {group:<34} {share:5.1f}%")

    print("  the same engine under each preset (four random bots, fresh process each):")
    for preset in ("shanghai-qiaoma", "shanghai-old", "shanghai-baida"):
        rate, rate_cpu, n = engine_rate(seconds / 2, seed=7, ruleset=preset)
        print(f"    {preset:<18} : {rate:8.1f} hands/s, {rate_cpu:8.1f} per CPU s ({n} hands)")

    print(f"planning bot vs three random bots, {WIN_RATE_HANDS} hands")
    t = time.perf_counter()
    r = win_rate(WIN_RATE_HANDS)
    hands = r["hands"]
    print(
        f"  planner win rate      : {100 * r['planner_wins'] / hands:6.1f}% "
        f"({r['planner_wins']}/{hands} hands)"
    )
    print(
        f"  random bots' wins     : {r['random_wins']} in all "
        f"({100 * r['random_wins'] / hands / 3:.1f}% each on average)"
    )
    print(f"  drawn hands (流局)     : {100 * r['draws'] / hands:6.1f}%")
    print(f"  planner's hands       : {r['hand_types']}")
    print(f"  planner's win kinds   : {r['wins_by_kind']}")
    print(f"  planner's chips       : {r['planner_chips']:+d} at stake 1 over {hands} hands")
    print(
        f"  planner decision time : {r['ms_per_decision']:.2f} ms mean over "
        f"{r['decisions']} decisions ({time.perf_counter() - t:.1f}s for the {hands} hands)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
