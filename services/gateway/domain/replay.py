"""Replays of finished hands: export as JSON lines, and verification.

``export_hand`` picks one hand's events out of a table's log (complete, with every seat's tiles
and every applied action: the log is the gateway's private record). ``verify_hand`` checks it:

1. the wall commitment holds: the revealed seed hashes to the published commitment and every
   tile dealt and drawn is the tile that seed puts there (services.wall.verify);
2. every action was legal: the hand is played again by the same engine against the recorded
   tiles and the rules domain, each recorded action must be one of the options the rules give
   (and pass ``validate_action``), and the replayed events must equal the recorded ones;
3. all the set's tiles (144; 152 or 148 in the 百搭 sets) are accounted for at the end, and
   payments plus the house sum to zero.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from services.gateway.domain.hand import (
    HandConfig,
    HandEngine,
    TileSwap,
    action_from_json,
)
from services.gateway.domain.ports import WallDraw, WallHand, WallReveal
from shared import tiles as T
from shared.errors import DomainError
from shared.ruleset import resolve_ruleset
from shared.tile_set import tile_set_of

ENGINE_KINDS = frozenset(
    {
        "hand_started",
        "tiles_dealt",
        "flowers_exposed",
        "tile_drawn",
        "tile_discarded",
        "meld_declared",
        "ready_declared",
        "prompt",
        "action",
        "tiles_swapped",
        "wild_flipped",
        "win_declared",
        "hand_result",
        "seed_revealed",
        "hand_drawn",
    }
)


def is_engine_event(kind: str, data: dict[str, Any]) -> bool:
    """An event the hand engine emits (an escape's result is the session's, not the hand's)."""
    if kind == "hand_result" and data.get("outcome") == "escape":
        return False
    return kind in ENGINE_KINDS


IGNORED_FIELDS = frozenset({"deadline_ms", "hand_id", "hand_number"})


def table_header(table_id: str, log: Iterable[tuple[int, int, str, dict[str, Any]]]) -> dict:
    """The header of a hand export: the table and the rules it plays (from table_started)."""
    started = next(d for _, _, k, d in log if k == "table_started")
    return {
        "table_id": table_id,
        "ruleset": started["ruleset"],
        "overrides": started["overrides"],
        "stake": started["stake"],
    }


def export_hand(
    table: dict[str, Any], events: Iterable[tuple[int, int, str, dict[str, Any]]], hand_id: str
) -> list[dict[str, Any]]:
    """JSON-lines records of one hand: a header with the table's rules, then its events."""
    header = {"type": "hand", "hand_id": hand_id, **table}
    out = [header]
    for seq, t, kind, data in events:
        if data.get("hand_id") == hand_id:
            out.append({"seq": seq, "t": t, "kind": kind, "data": data})
    return out


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    actions: int = 0
    wall_summary: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


class _ReplayWall:
    """A wall port that hands out the recorded tiles."""

    def __init__(
        self,
        started: dict,
        dealt: dict,
        live: list[int],
        tail: list[int],
        seed: dict,
        swaps: list[list[int]],
        flip: dict | None = None,
    ):
        self.started, self.dealt, self.seed = started, dealt, seed
        self.live, self.tail, self.swaps = deque(live), deque(tail), deque(swaps)
        self.flip = flip or {}  # the recorded wild_flipped event (翻百搭)
        self.remaining = 0

    def new_hand(self, ruleset_name, overrides, dealer, request_id) -> WallHand:
        s = self.started
        size = tile_set_of(resolve_ruleset(ruleset_name, overrides)).size  # 144, 148 or 152
        return WallHand(s["hand_id"], tuple(s["dice"]), s["commitment"], size)

    def deal(self, hand_id):
        hands = [T.parse(h) for h in self.dealt["hands"]]
        self.remaining = self.dealt["tiles_left"]
        return hands, self.remaining

    def _take(self, q: deque) -> WallDraw:
        if not q:
            raise DomainError("the record has no more tiles for this draw")
        self.remaining -= 1
        return WallDraw(q.popleft(), self.remaining)

    def draw(self, hand_id, seat, number=0) -> WallDraw:
        return self._take(self.live)

    def draw_replacement(self, hand_id, seat, number=0) -> WallDraw:
        return self._take(self.tail)

    def swap(self, hand_id, seat, buried, number=0) -> list[int]:
        if not self.swaps:
            raise DomainError("the record has no tile swap here")
        return self.swaps.popleft()

    def reveal(self, hand_id) -> WallReveal:
        return WallReveal(self.seed.get("seed", ""), self.seed.get("commitment", ""))

    def flip_indicator(self, hand_id) -> tuple[list[int], int]:
        if not self.flip:
            raise DomainError("the record has no 百搭 indicator here")
        turned = [*T.parse(self.flip["set_aside"]), *T.parse(self.flip["indicator"])]
        self.remaining = self.flip["tiles_left"]
        return turned, self.remaining


def wall_record(
    records: list[dict[str, Any]],
    reserved: int,
    swap_count: int = 0,
    tile_set: dict[str, bool] | None = None,
) -> dict[str, Any]:
    """The wall verifier's record (services.wall.verify) of an exported hand; ``tile_set``
    the wall record's facts of a 百搭 set (None: the 144 tiles)."""
    started = next(r["data"] for r in records if r.get("kind") == "hand_started")
    seed = next((r["data"] for r in records if r.get("kind") == "seed_revealed"), {})
    events: list[dict[str, Any]] = []
    dealer = started["dealer"]
    for r in records:
        kind, d = r.get("kind"), r.get("data", {})
        if kind == "tiles_dealt":
            for i in range(4):
                seat = (dealer + i) % 4
                events.append({"kind": "deal", "seat": seat, "tiles": d["hands"][seat]})
        elif kind == "tiles_swapped":
            events.append(
                {"kind": "swap", "seat": d["seat"], "buried": d["buried"], "tiles": d["taken"]}
            )
        elif kind == "flowers_exposed":
            if d.get("draw") in ("deal", "swap"):
                for k in T.parse(d["replacements"]):
                    events.append(
                        {"kind": "replacement", "seat": d["seat"], "tiles": T.format_tile(k)}
                    )
            else:
                kind_w = "replacement" if d["draw"] == "replacement" else "draw"
                events.append({"kind": kind_w, "seat": d["seat"], "tiles": d["flowers"]})
        elif kind == "tile_drawn":
            kind_w = "replacement" if d["replacement"] else "draw"
            events.append({"kind": kind_w, "seat": d["seat"], "tiles": d["tile"]})
        elif kind == "wild_flipped":
            turned = d["set_aside"] + d["indicator"]
            events.append({"kind": "indicator", "seat": dealer, "tiles": turned})
    return {
        "seed": seed.get("seed", ""),
        "commitment": started["commitment"],
        "dealer": dealer,
        "dice": started["dice"],
        "reserved_tiles": reserved,
        "tile_swap_count": swap_count,
        **({"tile_set": tile_set} if tile_set else {}),
        "events": events,
    }


def _draw_queues(wall: dict[str, Any]) -> tuple[list[int], list[int]]:
    live, tail = [], []
    for e in wall["events"]:
        if e["kind"] == "draw":
            live += T.parse(e["tiles"])
        elif e["kind"] == "replacement":
            tail += T.parse(e["tiles"])
    return live, tail


def _strip(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if k not in IGNORED_FIELDS}
    if isinstance(d, list):
        return [_strip(v) for v in d]
    return d


def _why(exc: Exception) -> str:
    if isinstance(exc, DomainError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"


def verify_hand(records: list[dict[str, Any]], *, rules=None, scoring=None) -> Verdict:
    """Check an exported hand (see the module docstring)."""
    from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
    from services.rules.domain import validate_action
    from services.wall.verify import RecordError, verify_record

    verdict = Verdict()
    header = records[0]
    ruleset = resolve_ruleset(header.get("ruleset", ""), header.get("overrides", {}))
    events = [r for r in records[1:] if is_engine_event(r.get("kind", ""), r.get("data", {}))]
    by_kind = {r["kind"]: r["data"] for r in events}
    if "hand_started" not in by_kind or "tiles_dealt" not in by_kind:
        verdict.problems.append("the record has no hand_started or tiles_dealt event")
        return verdict
    swap_count = ruleset.table.tile_swap_count if ruleset.table.tile_swap else 0
    from services.wall.record import tile_set_to_json

    facts = tile_set_to_json(tile_set_of(ruleset))
    wall = wall_record(records[1:], ruleset.table.reserved_tiles, swap_count, facts)
    if not wall["seed"]:
        verdict.problems.append("the seed was never revealed: the hand is not finished")
        return verdict
    try:
        w = verify_record(wall)
        verdict.wall_summary = w.summary()
        verdict.problems += [f"wall: {p}" for p in w.problems]
    except RecordError as exc:
        verdict.problems.append(f"wall record: {exc}")
    started = by_kind["hand_started"]
    live, tail = _draw_queues(wall)
    swaps = [T.parse(r["data"]["taken"]) for r in events if r["kind"] == "tiles_swapped"]
    replay_wall = _ReplayWall(
        started,
        by_kind["tiles_dealt"],
        live,
        tail,
        by_kind.get("seed_revealed", {}),
        swaps,
        by_kind.get("wild_flipped"),
    )
    produced: list[tuple[str, dict[str, Any]]] = []
    steps: deque[Callable[[], None]] = deque()  # what follows each action (service calls)
    stacks = started.get("garden_stacks")
    engine = HandEngine(
        HandConfig(
            table_id=header.get("table_id", ""),
            hand_number=started["hand_number"],
            dealer=started["dealer"],
            huangfan=started["huangfan"] - started.get("huangfan_dice", 0),
            stake=int(header.get("stake", 1)),
            ruleset=ruleset,
            ruleset_name=header.get("ruleset", ""),
            overrides=dict(header.get("overrides", {})),
            discard_ms=0,
            claim_ms=0,
            garden_stacks=tuple(stacks) if stacks is not None else None,
        ),
        wall=replay_wall,
        rules=rules or InProcessRules(),
        scoring=scoring or InProcessScoring(),
        emit=lambda kind, data: produced.append((kind, data)) or len(produced),
        now_ms=lambda: 0,
        defer=steps.append,
    )
    # A player who left during the hand reset the 荒番 counter: the result says so.
    engine.huangfan_reset = any(
        r.get("kind") == "seat_changed" and r.get("data", {}).get("left") for r in records[1:]
    )
    try:
        engine.start()
    except Exception as exc:  # a service of the replay (wall record, rules, scoring) failed
        verdict.problems.append(f"replay failed at the start of the hand: {_why(exc)}")
        return verdict
    for r in records[1:]:
        d = r.get("data", {})
        if r.get("kind") == "hand_result" and d.get("outcome") == "escape":
            # A player left: the session settled the escape and the hand goes on with the
            # stacks left after the penalty (TableSession.leave).
            if d.get("garden_stacks") is not None:
                engine.config = replace(engine.config, garden_stacks=tuple(d["garden_stacks"]))
            continue
        if r.get("kind") != "action":
            continue
        action = action_from_json(d["action"])
        try:
            if not isinstance(action, TileSwap):  # 换牌 is the engine's own check
                validate_action(engine.snapshot(), d["seat"], action)
            engine.act(d["seat"], action, auto=bool(d.get("auto")))
        except DomainError as exc:
            verdict.problems.append(
                f"event {r['seq']}: illegal action by seat {d['seat']}: {exc.message}"
            )
            return verdict
        verdict.actions += 1
        try:  # the action was legal; what follows it is the services' work
            while steps:
                steps.popleft()()
        except Exception as exc:
            verdict.problems.append(
                f"event {r['seq']}: replay failed after seat {d['seat']}'s "
                f"{d['action'].get('type', 'action')} (a legal action): {_why(exc)}"
            )
            return verdict
    recorded = [(r["kind"], _strip(r["data"])) for r in events]
    replayed = [(k, _strip(d)) for k, d in produced]
    if recorded != replayed:
        for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)):
            if a != b:
                verdict.problems.append(f"event {i}: recorded {a} but the replay gives {b}")
                break
        else:
            verdict.problems.append(
                f"recorded {len(recorded)} events, the replay gives {len(replayed)}"
            )
    if not engine.finished:
        verdict.problems.append("the hand did not finish in the replay")
    else:
        if engine.tiles_accounted() != engine.tile_set.size:
            verdict.problems.append(
                f"{engine.tiles_accounted()} tiles accounted for, not {engine.tile_set.size}"
            )
        st = engine.settlement
        assert st is not None
        if sum(st.payments) + st.house != 0:
            verdict.problems.append(f"payments {st.payments} plus house {st.house} are not zero")
    return verdict
