"""The ready seats the gateway reports to scoring (RULES §5, §9 承包): with
``ready.require_declare_ready`` false nobody declares 敲 and "ready" means "the hand waits on at
least one tile", judged on the seat's concealed tiles and melds when the hand is won."""

from __future__ import annotations

from services.gateway.adapters.inprocess import InProcessScoring
from services.gateway.domain.hand import CLAIM
from services.gateway.domain.hand.settlement import facts
from services.gateway.domain.ports import HandFacts
from shared import tiles as T
from shared.table import DeclareReady, Discard, Pass, Win
from tests.unit.gateway.scripted import ScriptedWall, engine

NO_DECLARE = {"ready.require_declare_ready": "false"}

# Seat 0 (dealer) discards 9p and then waits on 1m-5m; seat 1 waits on 9p (碰碰胡); seats 2
# and 3 wait on nothing.
HANDS = [
    "1112223334445m9p",
    "111s222s333p444p9p",
    "1m5m9m1p5p1s5s9s1z2z3z4z5z",
    "2m6m2p6p8p2s6s8s6z7z3m7m3p",
]


class RecordingScoring(InProcessScoring):
    def __init__(self) -> None:
        super().__init__()
        self.facts: list[HandFacts] = []

    def settle_win(self, facts: HandFacts):
        self.facts.append(facts)
        return super().settle_win(facts)


def win_on_the_dealers_discard(overrides):
    eng, _ = engine(ScriptedWall(HANDS, live="7s7s7s"), overrides=overrides)
    scoring = eng.scoring = RecordingScoring()
    eng.start()
    eng.act(0, Discard(T.parse("9p")[0]))
    assert eng.pending[1].kind == CLAIM and eng.pending[1].options.win is not None
    for seat in sorted(eng.pending):
        eng.act(seat, Win() if seat == 1 else Pass())
    assert eng.finished and eng.outcome == "win"
    return scoring.facts[-1]


def test_without_declaring_a_waiting_discarder_counts_as_ready():
    facts = win_on_the_dealers_discard(NO_DECLARE)
    assert facts.win == "discard" and facts.from_seat == 0
    assert set(facts.ready) == {0, 1}  # the waiting discarder and the winner; not 2 or 3


def test_with_declaring_only_declared_seats_are_ready():
    for declare, expected in ((False, ()), (True, (0,))):
        eng, _ = engine(ScriptedWall(HANDS, live="7s7s7s"))
        eng.start()
        nine_pin = T.parse("9p")[0]
        eng.act(0, DeclareReady(nine_pin) if declare else Discard(nine_pin))
        # Seat 0 waits on 1m-5m either way; only the declaration makes it ready here.
        assert facts(eng).ready == expected
