"""A scripted wall port for engine unit tests: hands, live draws and replacement draws given in
mpsz, so each test builds exactly the situation it checks."""

from __future__ import annotations

from collections import deque

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.domain.hand import HandConfig, HandEngine
from services.gateway.domain.ports import WallDraw, WallHand, WallReveal
from shared import tiles as T
from shared.errors import FailedPrecondition
from shared.ruleset import resolve_ruleset
from tests.support.events import json_recorder


class ScriptedWall:
    def __init__(self, hands: list[str], live: str = "", tail: str = "", dice=(2, 5)) -> None:
        self.hands = [T.parse(h) for h in hands]
        self.live = deque(T.parse(live))
        self.tail = deque(T.parse(tail))
        self.dice = dice
        self.calls = 0

    @property
    def remaining(self) -> int:
        return len(self.live) + len(self.tail)

    def new_hand(self, ruleset_name, overrides, dealer, request_id) -> WallHand:
        self.calls += 1
        return WallHand("h_test", self.dice, "00" * 32, 144)

    def deal(self, hand_id):
        self.calls += 1
        return [list(h) for h in self.hands], self.remaining

    def _take(self, q: deque) -> WallDraw:
        self.calls += 1
        if not q:
            raise FailedPrecondition("scripted wall is empty")
        tile = q.popleft()
        return WallDraw(tile, self.remaining)

    def draw(self, hand_id, seat, number=0, *, epoch=0) -> WallDraw:
        return self._take(self.live)

    def draw_replacement(self, hand_id, seat, number=0, *, epoch=0) -> WallDraw:
        return self._take(self.tail)

    def reveal(self, hand_id, number=0, *, epoch=0) -> WallReveal:
        self.calls += 1
        return WallReveal("11" * 32, "00" * 32)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


def engine(
    wall: ScriptedWall, *, dealer: int = 0, overrides: dict | None = None, huangfan: int = 0
) -> tuple[HandEngine, list[tuple[str, dict]]]:
    events: list[tuple[str, dict]] = []
    overrides = overrides or {}
    eng = HandEngine(
        HandConfig(
            table_id="t_test",
            hand_number=1,
            dealer=dealer,
            huangfan=huangfan,
            stake=1,
            ruleset=resolve_ruleset("shanghai-qiaoma", overrides),
            ruleset_name="shanghai-qiaoma",
            overrides=overrides,
            discard_ms=20_000,
            claim_ms=20_000,
        ),
        wall=wall,
        rules=InProcessRules(),
        scoring=InProcessScoring(),
        emit=json_recorder(events),
        now_ms=Clock(),
    )
    return eng, events


def kinds(events) -> list[str]:
    return [k for k, _ in events if k not in ("prompt", "action")]
