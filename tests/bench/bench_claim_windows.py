"""What claim windows that leak nothing cost in table duration (RULES §4 "Claim windows").

Whole hands of the gateway's table session, in-process on a manual clock (so the durations are
the table's own, not this machine's speed), played twice on the same seeded walls: with the
default ruleset's holds (600 ms + 0..400 ms on every discard) and without (floor and jitter 0:
the hand goes on as soon as every prompted seat answered). Play is identical in both runs (the
holds change when the hand goes on, never what happens), so the ratio is the holds' cost alone.

Every seat is played by the planning bot; a person's seat answers after a human-like delay,
drawn from one seeded source in the same order in both runs:
  own turn: 0.8 s + an exponential of mean 1.2 s; claim prompt: uniform 0.4-1.2 s.
Bots answer after ``bot_delay_ms`` (0, as the arena and tournaments of bots, or 800 ms, a table
whose bots should look like people). Printed: the median hand duration with and without holds,
their ratio, and the mean added time per discard. A table of bots only is its own row: no hold.

    PYTHONPATH=. python -m tests.bench.bench_claim_windows [hands]
"""

from __future__ import annotations

import random
import statistics
import sys
from dataclasses import dataclass

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.bots import engine_policy, make_bot
from services.gateway.domain.events.kinds import (
    OWN_TURN,
    HandResult,
    HandStarted,
    Prompt,
    TableEvent,
    TileDiscarded,
)
from services.gateway.domain.session import PLAYING, Ports, Seat, TableSession
from tests.doubles.scheduler import ManualScheduler
from tests.support.sessions import SeededWall, session_config

HANDS = 24
WITH_HOLDS: dict[str, str] = {
    "timers.claim_window_floor_ms": "600",
    "timers.claim_window_jitter_ms": "400",
}
NO_HOLDS = {"timers.claim_window_floor_ms": "0", "timers.claim_window_jitter_ms": "0"}


@dataclass
class Run:
    durations_ms: list[int]
    discards: int
    holds_ms: int


def human_delay_ms(rng: random.Random, kind: str) -> int:
    if kind == OWN_TURN:
        return int(800 + rng.expovariate(1 / 1200))
    return int(rng.uniform(400, 1200))


def play(people: int, bot_delay_ms: int, overrides: dict[str, str], hands: int) -> Run:
    """``hands`` hands at one table of ``people`` persons and 4 - people bots."""
    sched = ManualScheduler()
    policy = engine_policy(make_bot("planner"))
    human = random.Random(7)
    started: dict[str, int] = {}
    run = Run([], 0, 0)
    session: TableSession | None = None

    def answer(seat: int, sequence: int) -> None:
        assert session is not None and session.hand is not None
        p = session.hand.pending.get(seat)
        if p is None or p.sequence != sequence or session.phase != PLAYING:
            return
        with session.steps_inline():
            session.act(seat, policy(p, session.hand))

    seq = 0

    def emit(event: TableEvent) -> int:
        nonlocal seq
        seq += 1
        now = sched.now_ms()
        if isinstance(event, HandStarted):
            started[event.hand_id] = now
        elif isinstance(event, HandResult):
            run.durations_ms.append(now - started[event.hand_id])
        elif isinstance(event, TileDiscarded):
            run.discards += 1
            run.holds_ms += event.hold_ms
        elif isinstance(event, Prompt) and event.seat < people:
            delay = human_delay_ms(human, event.kind)
            sched.call_later(delay, lambda s=event.seat, q=seq: answer(s, q))
        return seq

    seats = [Seat(player_id=f"p{i}", bot=i >= people) for i in range(4)]
    session = TableSession(
        session_config(
            "bench-windows",
            overrides,
            max_hands=hands,
            first_dealer=0,
            discard_ms=60_000,
            claim_ms=60_000,
            bot_delay_ms=bot_delay_ms,
        ),
        seats,
        ports=Ports(SeededWall("windows"), InProcessRules(), InProcessScoring()),
        scheduler=sched,
        emit=emit,
        report=lambda *_: None,
        policy=policy,
        rng=random.Random(1),
    )
    session.window_rng = random.Random(3)
    session.start()
    sched.drain()
    assert len(run.durations_ms) == hands, (len(run.durations_ms), session.phase)
    return run


def row(label: str, people: int, bot_delay_ms: int, hands: int) -> float:
    held = play(people, bot_delay_ms, WITH_HOLDS, hands)
    bare = play(people, bot_delay_ms, NO_HOLDS, hands)
    assert held.discards == bare.discards, "the holds changed the play"
    m_held = statistics.median(held.durations_ms) / 1000
    m_bare = statistics.median(bare.durations_ms) / 1000
    added = (sum(held.durations_ms) - sum(bare.durations_ms)) / held.discards
    ratio = m_held / m_bare if m_bare else float("inf")
    print(
        f"{label:<34} median hand {m_bare:7.1f} s without, {m_held:7.1f} s with holds: "
        f"x{ratio:.2f}; +{added:.0f} ms a discard (holds drawn: mean "
        f"{held.holds_ms / held.discards:.0f} ms)"
    )
    return ratio


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    hands = int(args[0]) if args else HANDS
    print(f"{hands} hands a row, the same seeded walls with and without holds (600 + 0..400 ms)")
    row("1 person + 3 bots (bots 800 ms)", 1, 800, hands)
    row("1 person + 3 bots (bots 0 ms)", 1, 0, hands)
    row("4 people", 4, 0, hands)
    bots = row("4 bots (bots 100 ms; no person)", 0, 100, hands)
    assert bots == 1.0, "a table of bots was held"
    return 0


if __name__ == "__main__":
    sys.exit(main())
