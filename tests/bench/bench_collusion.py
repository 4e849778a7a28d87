"""``python -m tests.bench collusion``: do the collusion signals find a colluding pair, and leave
honest pairs alone?

A population of 40 bots (the gateway's planning bot, in-process: :mod:`tests.support.arena`,
the gateway's own table engine) plays sittings of :data:`HANDS_PER_SITTING` hands at tables of
four drawn at random. Each hand's facts are read from its events exactly as the gateway reports
them (:func:`services.gateway.domain.hand_facts.hand_facts`) and counted as matchmaking counts
them (:mod:`services.matchmaking.domain.integrity`); every sitting counts as a table formed from
the queue, with each player's join time.

In the colluding run, one pair (``p00``, ``p01``) colludes whenever it shares a table: each sees
the other's concealed tiles, discards what the partner can claim (a tile it can pong, or chow
as the partner's 上家), never discards a tile the partner waits on, claims what the partner
feeds it, and passes every win on the partner's discard. They queue at the same moment for
half their sittings (then the queue seats them together, as quick match seats simultaneous
tickets); otherwise they are seated at random like everyone else. The runs with no colluders
use other seeds. Figures (printed): the colluding pair must rank first (either direction), and
across the honest runs fewer than 1% of honest pairs may score above the threshold.

``MAHJONG_BENCH_COLLUSION_HANDS`` (default 2000) sets the hands per run,
``MAHJONG_BENCH_COLLUSION_SEEDS`` (default 3) the runs without colluders,
``MAHJONG_BENCH_COLLUSION_TOGETHER`` (default 50) the percentage of the colluders' sittings
they queue for together (0: seated at random like everyone else); the runs go to
``MAHJONG_BENCH_COLLUSION_WORKERS`` processes (default 2).
"""

from __future__ import annotations

import concurrent.futures
import os
import random
import time
from typing import Any

from infra.store.memory import MemoryStore
from services.gateway.domain.events.kinds import HandResult, TableEvent
from services.gateway.domain.hand_facts import hand_facts
from services.matchmaking.domain.integrity import counts, scoring
from services.matchmaking.domain.integrity import facts as mm_facts
from services.matchmaking.storage.integrity_records import RecordsIntegrity
from shared.hand.waits import waits
from shared.table import (
    Chow,
    ClaimOptions,
    DeclareReady,
    Discard,
    OwnTurnOptions,
    Pass,
    Pong,
    previous_seat,
)
from tests.support import arena

PLAYERS = 40
COLLUDERS = ("p00", "p01")
HANDS_PER_SITTING = 8
TOGETHER_PERCENT = 50  # the colluders' sittings they queue for at the same moment


def _env(name: str, default: int) -> int:
    return int(os.environ.get(f"MAHJONG_BENCH_COLLUSION_{name}", default))


# --- the colluding partners ------------------------------------------------------------------
def colluding(partners: dict[int, int]):
    """A policy wrapper: seats in ``partners`` (seat -> partner's seat) play for their pair."""

    def wrap(inner):
        def policy(pending: Any, hand: Any):
            seat = pending.seat
            partner = partners.get(seat)
            options = pending.options
            if partner is None:
                return inner(pending, hand)
            if isinstance(options, ClaimOptions):
                if pending.from_seat != partner:
                    return inner(pending, hand)
                if options.win is not None:
                    return Pass()  # never win off the partner
                if options.pong:
                    return Pong()
                if options.chows:
                    return Chow(options.chows[0])
                return inner(pending, hand)
            action = inner(pending, hand)
            if not isinstance(options, OwnTurnOptions):
                return action
            tile = action.tile if isinstance(action, Discard) else None
            if isinstance(action, DeclareReady):
                tile = action.discard
            if tile is None:
                return action  # a win, a kong
            snap = hand.snapshot()
            mate = snap.seats[partner]
            waiting = set(waits(mate.concealed, mate.melds, snap.ruleset))
            feeds = {k for k, n in enumerate(mate.concealed) if n >= 2}
            if previous_seat(partner) == seat:  # the partner's 上家: runs it can chow
                c = mate.concealed
                for k in range(27):  # suited tiles: 9 of each suit
                    r = k % 9
                    if r <= 7 and c[k] and c[k + 1]:
                        feeds.update(x for x, fits in ((k - 1, r >= 1), (k + 2, r <= 6)) if fits)
                    if r <= 6 and c[k] and c[k + 2]:
                        feeds.add(k + 1)
            safe = [t for t in options.discards if t not in waiting]
            fed = [t for t in safe if t in feeds]
            if fed:
                return Discard(fed[0])
            if tile in waiting and safe:
                return Discard(safe[0])
            return action

        return policy

    return wrap


# --- one run ---------------------------------------------------------------------------------
def run(seed: int, hands: int, collude: bool, together_percent: int = TOGETHER_PERCENT) -> dict:
    """Play ``hands`` hands; the counts' ranking and what the colluders did."""
    rng = random.Random(seed)
    players = [f"p{i:02d}" for i in range(PLAYERS)]
    repo = RecordsIntegrity(MemoryStore())
    played = sitting = 0
    together = 0
    clock = 0.0
    while played < hands:
        sitting += 1
        clock += 600.0
        pair_joins = collude and rng.random() * 100 < together_percent
        if pair_joins:
            others = rng.sample([p for p in players if p not in COLLUDERS], 2)
            seats = [*COLLUDERS, *others]
            rng.shuffle(seats)
        else:
            seats = rng.sample(players, 4)
        joined = [(p, clock + rng.uniform(0, 120)) for p in seats]
        if pair_joins:
            first = next(t for p, t in joined if p == COLLUDERS[0])
            joined = [(p, first if p in COLLUDERS else t) for p, t in joined]
        counts.record_table(repo, f"s{seed}-{sitting}", joined)
        partners = {}
        if collude and all(c in seats for c in COLLUDERS):
            a, b = seats.index(COLLUDERS[0]), seats.index(COLLUDERS[1])
            partners = {a: b, b: a}
            together += 1
        events: list[TableEvent] = []
        n = min(HANDS_PER_SITTING, hands - played)
        result = arena.play_table(
            None,
            n,
            seed=seed * 100_000 + sitting,
            wrap=colluding(partners) if partners else None,
            on_event=events.append,
        )
        for h in result.hands:
            assert isinstance(h, HandResult)
            f = hand_facts(e for e in events if e.hand_id == h.hand_id)
            facts = mm_facts.HandFacts(f.version, f.discard_wins, f.claims, f.passed_wins, f.chows)
            counts.record_hand(repo, f"s{seed}-{sitting}/{h.hand_id}", tuple(seats), facts)
        played += len(result.hands)
    ranked, pop = scoring.score_all(repo)
    return {
        "seed": seed,
        "collude": collude,
        "hands": played,
        "sittings_together": together,
        "population": pop,
        "ranked": [(s.a, s.b, s.hands, s.score, s.evidence) for s in ranked],
    }


def _evidence_line(evidence) -> str:
    return "  ".join(f"{e.signal} {e.observed}/{e.expected:.1f} (z {e.z:+.1f})" for e in evidence)


def report(results: list[dict]) -> bool:
    ok = True
    threshold = scoring.THRESHOLD
    for r in results:
        pop = r["population"]
        ranked = r["ranked"]
        honest = [x for x in ranked if not (x[0] in COLLUDERS and x[1] in COLLUDERS)]
        above = [x for x in honest if x[3] > threshold]
        share = len(above) / max(len(honest), 1)
        kind = "colluding pair p00+p01" if r["collude"] else "no colluders"
        print(
            f"seed {r['seed']} ({kind}): {r['hands']} hands, {len(ranked)} ordered pairs; "
            f"per player-hand: wins off a discard {pop.wins:.3f}, claims {pop.claims:.3f}, "
            f"passed wins {pop.passed:.4f}; same-moment tables {pop.queued:.3f}"
        )
        print(
            f"  honest pairs above {threshold}: {len(above)}/{len(honest)} = {share:.2%}; "
            f"highest honest score {honest[0][3]:.2f}"
            f" ({honest[0][0]} -> {honest[0][1]}, {honest[0][2]} hands)"
        )
        if share >= 0.01:
            ok = False
            print("  FAIL: 1% or more of honest pairs score above the threshold")
        if r["collude"]:
            ranks = {(x[0], x[1]): i + 1 for i, x in enumerate(ranked)}
            for a, b in (COLLUDERS, COLLUDERS[::-1]):
                x = ranked[ranks[(a, b)] - 1]
                print(
                    f"  {a} -> {b}: rank {ranks[(a, b)]}, score {x[3]:.2f}, {x[2]} hands "
                    f"together ({r['sittings_together']} sittings): {_evidence_line(x[4])}"
                )
            top = ranked[0]
            print(f"  rank 1: {top[0]} -> {top[1]}, score {top[3]:.2f}")
            if {top[0], top[1]} != set(COLLUDERS):
                ok = False
                print("  FAIL: the colluding pair does not rank first")
    return ok


def main() -> int:
    hands = _env("HANDS", 2000)
    seeds = _env("SEEDS", 3)
    workers = _env("WORKERS", 2)
    together = _env("TOGETHER", TOGETHER_PERCENT)
    jobs = [(1, hands, True, together), *((100 + i, hands, False, 0) for i in range(seeds))]
    start = time.perf_counter()
    print(
        f"{PLAYERS} bots, {hands} hands per run in sittings of {HANDS_PER_SITTING}, "
        f"1 run with a colluding pair (queueing together for {together}% of its sittings) "
        f"and {seeds} without; threshold {scoring.THRESHOLD}"
    )
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(run, *zip(*jobs, strict=True)))
    ok = report(results)
    print(f"{len(jobs)} runs in {time.perf_counter() - start:.0f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
