"""换牌 tile swap: its wall calls (the swap, then 补花 of the flowers it gave) all come before
anything changes, so a failed call refuses the answer with nothing changed, and the same answer
sent again makes the same numbered calls, which the wall answers with the same tiles."""

from __future__ import annotations

from services.gateway.domain.hand import SWAP, HandConfig, HandEngine
from shared import tiles as T
from shared.errors import Unavailable
from shared.ruleset import resolve_ruleset
from shared.table import TileSwap
from tests.support.events import json_recorder
from tests.unit.gateway.test_resume_steps import Faults, Rules, Scoring, Wall

OVERRIDES = {"table.tile_swap": "true"}


class SwapWall(Wall):
    """The seeded wall of test_resume_steps, its swaps failing as ``faults`` say too."""

    def swap(self, hand_id, seat, buried, number=0, *, epoch=0):
        return self.faults.call("swap", super().swap, hand_id, seat, buried, number, epoch=epoch)


def engine(seed: int, faults: Faults) -> tuple[HandEngine, list]:
    events: list = []
    ruleset = resolve_ruleset("shanghai-qiaoma", OVERRIDES)
    cfg = HandConfig(
        f"t-swap-{seed}", 1, seed % 4, 0, 1, ruleset, "shanghai-qiaoma", OVERRIDES, 1_000, 500
    )
    eng = HandEngine(
        cfg,
        wall=SwapWall(faults, seed),
        rules=Rules(faults),
        scoring=Scoring(faults),
        emit=json_recorder(events),
        now_ms=lambda: 0,
    )
    eng.start()
    return eng, events


def bury(eng: HandEngine, seat: int) -> TileSwap:
    """The seat's lowest held tiles, as many as the swap takes."""
    count = eng.pending[seat].options.count  # type: ignore[union-attr]
    held = [k for k, n in enumerate(eng.seats[seat].counts) for _ in range(n)]
    return TileSwap(tuple(held[:count]))


def swap_with_flowers() -> tuple[int, int]:
    """A seed and a seat whose swap takes a flower (so it is replaced from the tail)."""
    for seed in range(60):
        for seat in range(4):
            eng, events = engine(seed, Faults())
            assert all(p.kind == SWAP for p in eng.pending.values())
            eng.act(seat, bury(eng, seat))
            if any(k == "flowers_exposed" and d["draw"] == "swap" for k, d in events):
                return seed, seat
    raise AssertionError("no swap of the first 60 seeds takes a flower")


def test_a_failed_replacement_draw_refuses_the_swap_and_the_same_swap_goes_through():
    seed, seat = swap_with_flowers()
    plain, expected = engine(seed, Faults())
    plain.act(seat, bury(plain, seat))

    faults = Faults("draw_replacement", 1, 1, lost=True)
    eng, events = engine(seed, faults)
    before, seen = eng.copy_state(), len(events)
    faults.armed = True
    try:
        eng.act(seat, bury(eng, seat))
        raise AssertionError("the replacement draw should have failed")
    except Unavailable:
        pass
    assert eng.copy_state() == before and len(events) == seen  # nothing changed
    eng.act(seat, bury(eng, seat))  # the same answer again
    assert faults.failed == 1
    assert events == expected
    assert eng.copy_state() == plain.copy_state()
    assert eng.tiles_accounted() == T.WALL_SIZE
