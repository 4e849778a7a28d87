"""Rules benchmark: our win check and waits against the PyPI ``mahjong`` package, side by side
on the same hands in one run.

* win check: :func:`shared.hand.is_winning_hand` on 14-tile hands vs ``Agari.is_agari``;
* waits: :func:`shared.hand.waits` on 13-tile hands vs trying all 34 kinds with ``is_agari``
  (the only way that package finds waits).

The hands are drawn here (seeded) and written to a JSON file; a ``.venv-bench`` subprocess
(:mod:`tests.bench.rules_side_by_side`) times both sides on them, rounds interleaved, best round
kept. The peer cannot live in the main venv (our generated stubs are the top-level package
``mahjong`` too), and our hand code is plain Python, so it runs there unchanged.

Targets: both ratios ≥ 3× on uniformly random hands (the headline); figures for hands that are
complete or one tile off, where ``is_agari`` has to do its full work, are printed beside them.

Then the table decisions the gateway asks for on every turn and discard: own-turn options and
claim options for all seats, in-process and over a loopback gRPC server; and the 百搭 hands of
shanghai-baida: win check and waits with 0-4 百搭 per hand, per call and as a ratio to the
natural-hand check on hands of the same kind.

The two checks answer different questions (``is_agari`` accepts any riichi shape, ours only the
winning hands of RULES §6), so the run also checks that the inputs are the same: our standard
shape plus seven pairs and thirteen orphans must give exactly ``is_agari``'s answers.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from mahjong.rules.v1 import rules_pb2, rules_pb2_grpc

from infra.logs import configure_logging
from services.rules import convert as R
from services.rules.domain import claim_options, own_turn_options
from services.rules.server import SPEC
from shared.hand import is_standard_shape, waits
from shared.ruleset import load_ruleset
from tests.bench import BENCH_VENV, bench_seconds, bench_venv, rate, run_peer
from tests.support.grpc_server import serving
from tests.unit.rules.builders import random_table

PEER_PACKAGE = "mahjong==2.1.0"
TARGET = 3.0
SEED = 20260
SIZES = {"win": 4000, "waits": 1000}
TERMINALS_HONORS = (0, 8, 9, 17, 18, 26, *range(27, 34))


# --- hands -----------------------------------------------------------------------------------
def random_hand(rnd: random.Random, size: int) -> list[int]:
    """``size`` tiles drawn uniformly from the 136 suited and honor tiles."""
    tiles = rnd.sample(range(136), size)
    counts = [0] * 34
    for t in tiles:
        counts[t // 4] += 1
    return counts


def complete_hand(rnd: random.Random) -> list[int]:
    """Four sets and a pair: mixed suits, one suit, one suit with honors, or all honors."""
    style = rnd.choice(("mixed", "one_suit", "half", "honors"))
    suit = rnd.randrange(3) * 9
    pool = {
        "mixed": list(range(34)),
        "one_suit": list(range(suit, suit + 9)),
        "half": list(range(suit, suit + 9)) + list(range(27, 34)),
        "honors": list(range(27, 34)),
    }[style]
    while True:
        counts = [0] * 34
        for _ in range(4):
            k = rnd.choice(pool)
            run = k < 27 and k % 9 <= 6 and rnd.random() < 0.5
            for t in (k, k + 1, k + 2) if run else (k, k, k):
                counts[t] += 1
        pair = rnd.choice(pool)
        counts[pair] += 2
        if max(counts) <= 4:
            return counts


def near_hand(rnd: random.Random, size: int) -> list[int]:
    """A complete hand, half the time with one tile swapped; for ``size`` 13 one tile less."""
    counts = complete_hand(rnd)
    held = [k for k in range(34) for _ in range(counts[k])]
    if size == 13:
        counts[rnd.choice(held)] -= 1
    elif rnd.random() < 0.5:
        counts[rnd.choice(held)] -= 1
        counts[rnd.choice([k for k in range(34) if counts[k] < 4])] += 1
    return counts


def hand_sets(rnd: random.Random) -> dict[str, dict]:
    n_win, n_waits = SIZES["win"], SIZES["waits"]
    return {
        "win/random": {"kind": "win", "hands": [random_hand(rnd, 14) for _ in range(n_win)]},
        "win/near": {"kind": "win", "hands": [near_hand(rnd, 14) for _ in range(n_win)]},
        "waits/random": {"kind": "waits", "hands": [random_hand(rnd, 13) for _ in range(n_waits)]},
        "waits/near": {"kind": "waits", "hands": [near_hand(rnd, 13) for _ in range(n_waits)]},
    }


# --- the peer --------------------------------------------------------------------------------
def run_side_by_side(sets: dict, repeat: int) -> dict | None:
    """Both sides timed in one ``.venv-bench`` process (:mod:`tests.bench.rules_side_by_side`)."""
    python = bench_venv(PEER_PACKAGE, "mahjong.agari")
    if python is None:
        return None
    script = (Path(__file__).parent / "rules_side_by_side.py").read_text(encoding="utf-8")
    return run_peer(python, script, {"repeat": repeat, "sets": sets})


# --- checks ----------------------------------------------------------------------------------
def riichi_shape(h: list[int]) -> bool:
    """What ``is_agari`` accepts: a standard shape, seven pairs or thirteen orphans."""
    if is_standard_shape(h):
        return True
    if h.count(2) == 7:
        return True
    return all(h[k] for k in TERMINALS_HONORS) and sum(h[k] for k in TERMINALS_HONORS) == 14


def same_inputs(sets: dict, peer: dict) -> int:
    """Hands on which the peer's answers contradict ours (0 when the inputs are the same)."""
    wrong = 0
    for name, spec in sets.items():
        answers = peer[name]["agari"]
        for h, answer in zip(spec["hands"], answers, strict=True):
            if spec["kind"] == "win":
                wrong += riichi_shape(h) != answer
            else:
                all_honors = not any(h[:27])
                ours = set(waits(h, (), load_ruleset()))
                wrong += not all_honors and not ours <= set(answer)
    return wrong


# --- table decisions -------------------------------------------------------------------------
def decisions() -> None:
    """Own-turn and claim options per second on random tables, in-process and over gRPC."""
    own = [random_table(random.Random(i), claim=False) for i in range(200)]
    claims = [random_table(random.Random(i), claim=True) for i in range(200)]
    print("table decisions on 200 random tables each (near-complete hands, 敲, 漏胡, melds)")
    per_s, _ = rate(lambda: sum(1 for s in own if own_turn_options(s, s.turn)))
    print(f"  {'own-turn options, in-process':<44} {per_s:>10,.0f} calls/s")
    per_s, _ = rate(lambda: sum(1 for s in claims if claim_options(s)))
    print(f"  {'claim options (all seats), in-process':<44} {per_s:>10,.0f} calls/s")
    own_pb = [
        rules_pb2.GetOwnTurnOptionsRequest(table=R.snapshot_to_proto(s), seat=s.turn + 1)
        for s in own
    ]
    claim_pb = [rules_pb2.GetClaimOptionsRequest(table=R.snapshot_to_proto(s)) for s in claims]
    with serving(SPEC) as (_server, channel):
        stub = rules_pb2_grpc.RulesServiceStub(channel)
        per_s, _ = rate(lambda: sum(1 for r in own_pb if stub.GetOwnTurnOptions(r, timeout=10)))
        print(f"  {'GetOwnTurnOptions, gRPC loopback, 1 client':<44} {per_s:>10,.0f} calls/s")
        per_s, _ = rate(lambda: sum(1 for r in claim_pb if stub.GetClaimOptions(r, timeout=10)))
        print(f"  {'GetClaimOptions, gRPC loopback, 1 client':<44} {per_s:>10,.0f} calls/s")


# --- 百搭 wildcard hands (shanghai-baida) -------------------------------------------------
BAIDA_KINDS = tuple(range(31))  # suited and winds: dragons are bonus tiles in baida
WILD_HANDS = 2000


def baida_hand(rnd: random.Random, size: int, jokers: int) -> list[int]:
    """A complete hand of sets and a pair of suited tiles and winds (often one suit) with
    ``jokers`` tiles turned into 百搭, half the time one natural tile swapped; ``size`` 13
    drops a natural."""
    while True:
        suit = rnd.randrange(3) * 9
        pool = rnd.choice([BAIDA_KINDS, tuple(range(suit, suit + 9))])
        tiles: list[int] = []
        for _ in range(4):
            k = rnd.choice(pool)
            run = k < 27 and k % 9 <= 6 and rnd.random() < 0.5
            tiles += [k, k + 1, k + 2] if run else [k, k, k]
        k = rnd.choice(pool)
        tiles += [k, k]
        rnd.shuffle(tiles)
        naturals = tiles[jokers:]
        if rnd.random() < 0.5:
            naturals[0] = rnd.choice(BAIDA_KINDS)
        if size == 13:
            naturals.pop()
        counts = [0] * 34
        for t in naturals:
            counts[t] += 1
        if max(counts) <= 4:
            return counts


def _best_ns(fn, items: list, rounds: int) -> float:
    """Nanoseconds per item of ``fn`` over ``items``: the best of ``rounds`` timed passes (the
    machine is shared; the best pass is the least disturbed)."""
    import time

    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for h in items:
            fn(h)
        best = min(best, (time.perf_counter_ns() - start) / len(items))
    return best


def wildcards() -> None:
    """Win check and waits of 百搭 hands with 0-4 百搭: per call, and the ratio to the natural
    (qiaoma) check on hands of the same kind; rounds interleaved, best kept."""
    from shared.hand.hand_type import is_winning_hand
    from shared.hand.preset_hands import hand_waits, is_winning

    baida, qiaoma = load_ruleset("shanghai-baida"), load_ruleset()
    old = load_ruleset("shanghai-old")
    rnd = random.Random(SEED)
    rounds = max(3, int(bench_seconds() * 4))
    rows = [
        (
            j,
            [baida_hand(rnd, 14, j) for _ in range(WILD_HANDS)],
            [baida_hand(rnd, 13, j) for _ in range(WILD_HANDS // 4)],
        )
        for j in range(5)
    ]
    natural14, natural13 = rows[0][1], rows[0][2]
    best: dict[tuple[str, int], float] = {}
    for _ in range(rounds):  # interleaved: every figure sees the same machine load
        for key, fn, items in [
            (("win", -1), lambda h: is_winning_hand(h, (), qiaoma), natural14),
            (("waits", -1), lambda h: waits(h, (), qiaoma), natural13),
            (("waits-any", -1), lambda h: hand_waits(h, (), old), natural13),
            *[(("win", j), lambda h, j=j: is_winning(h, (), baida, j), h14) for j, h14, _ in rows],
            *[
                (("waits", j), lambda h, j=j: hand_waits(h, (), baida, j), h13)
                for j, _, h13 in rows
            ],
        ]:
            ns = _best_ns(fn, items, 1)
            best[key] = min(best.get(key, ns), ns)
    win_ns, waits_ns = best["win", -1], best["waits", -1]
    print(f"百搭 hands (shanghai-baida), {WILD_HANDS} near-complete hands per row (seed {SEED})")
    print(
        f"  natural check on the 0-百搭 hands (qiaoma is_winning_hand / waits): "
        f"{win_ns / 1000:.2f}µs / {waits_ns / 1000:.2f}µs"
    )
    print(
        "  natural waits where any standard shape wins (shanghai-old hand_waits): "
        f"{best['waits-any', -1] / 1000:.2f}µs"
    )
    print(f"  {'百搭':<6} {'win check':>10} {'× natural':>10} {'waits':>10} {'× natural':>10}")
    for j in range(5):
        w_ns, t_ns = best["win", j], best["waits", j]
        print(
            f"  {j:<6} {w_ns / 1000:>8.2f}µs {w_ns / win_ns:>9.1f}× "
            f"{t_ns / 1000:>8.2f}µs {t_ns / waits_ns:>9.1f}×",
            flush=True,
        )


def main() -> int:
    repeat = max(3, int(bench_seconds() * 4))  # rounds per side; each round times every hand
    sets = hand_sets(random.Random(SEED))
    peer = run_side_by_side(sets, repeat)
    if peer is None:
        return 1
    print(f"PyPI {PEER_PACKAGE} in {BENCH_VENV.name} vs ours, same hands (seed {SEED})")
    print(f"  {'hands':<44} {'ours':>10} {'is_agari':>10} {'ratio':>7}")
    ratios = {}
    for name in sets:
        ours, theirs = peer[name]["ours_ns"], peer[name]["peer_ns"]
        ratios[name] = theirs / ours
        label = {
            "win/random": "win check, uniformly random 14 tiles",
            "win/near": "win check, complete or one tile off",
            "waits/random": "waits, uniformly random 13 tiles (vs 34 ×)",
            "waits/near": "waits, one tile from complete (vs 34 ×)",
        }[name]
        print(
            f"  {label:<44} {ours / 1000:>8.2f}µs {theirs / 1000:>8.2f}µs {ratios[name]:>6.1f}×",
            flush=True,
        )
    wrong = same_inputs(sets, peer)
    print(f"  same inputs: {'yes' if not wrong else f'NO, {wrong} hands disagree'}")
    for name, what in (("win/random", "win check ratio"), ("waits/random", "waits ratio")):
        verdict = "met" if ratios[name] >= TARGET else "MISSED"
        print(f"{what}: {ratios[name]:.2f}× (target ≥ {TARGET:.0f}×: {verdict})")
    configure_logging("warning")  # the server's per-call logs would drown the figures
    decisions()
    wildcards()
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
