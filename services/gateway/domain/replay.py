"""Replays of finished hands: export as JSON lines, and verification.

``export_hand`` picks one hand's events out of a table's log (complete, with every seat's tiles
and every applied action: the log is the gateway's private record) as JSON lines, each event in
its log record's format (:mod:`services.gateway.domain.events.codec`, with its schema version).
``verify_hand`` checks an export, of any version this project has written:

1. the wall commitment holds: the revealed seed hashes to the published commitment and every
   tile dealt and drawn is the tile that seed puts there (services.wall.domain.verify);
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

from services.gateway.domain.events import codec
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.hand import HandConfig, HandEngine
from services.gateway.domain.ports import RulesPort, ScoringPort, WallDraw, WallHand, WallReveal
from shared import tiles as T
from shared.errors import DomainError
from shared.melds import MeldKind
from shared.ruleset import resolve_ruleset
from shared.table import NUM_SEATS, TileSwap
from shared.tile_set import tile_set_of

# The events the hand engine emits (an escape's result is the session's, not the hand's).
ENGINE_KINDS = frozenset(
    {
        K.HandStarted,
        K.TilesDealt,
        K.FlowersExposed,
        K.TileDrawn,
        K.TileDiscarded,
        K.MeldDeclared,
        K.ReadyDeclared,
        K.Prompt,
        K.ActionTaken,
        K.TilesSwapped,
        K.WildFlipped,
        K.WinDeclared,
        K.HandResult,
        K.SeedRevealed,
        K.HandDrawn,
        K.WindowPadding,
    }
)


def is_engine_event(ev: K.TableEvent) -> bool:
    """An event the hand engine emits (an escape's result is the session's, not the hand's)."""
    if isinstance(ev, K.HandResult) and ev.outcome == "escape":
        return False
    return type(ev) in ENGINE_KINDS


def _comparable(ev: K.TableEvent) -> K.TableEvent:
    """An event without what a replay cannot reproduce: deadlines (the clock), the request id
    of a player's decision (the client's), the hand's id and number (the header's) and a claim
    window's hold (drawn at random; it changes when the hand goes on, never what happens)."""
    if isinstance(ev, (K.TileDiscarded, K.MeldDeclared)):
        return ev.replace(hold_ms=0, hand_id="", hand_number=0)
    if isinstance(ev, K.Prompt):
        return ev.replace(deadline_ms=0, hand_id="", hand_number=0)
    if isinstance(ev, K.ActionTaken):
        return ev.replace(request_id="", hand_id="", hand_number=0)
    if isinstance(ev, K.HandResult):
        # a line's counterparty (other_seat) is written since issue 33: earlier records have
        # none (the line's label names it too), so it is left out of the comparison
        lines = tuple(replace(b, other_seat=None) for b in ev.breakdown)
        return ev.replace(breakdown=lines, hand_id="", hand_number=0)
    return ev.replace(hand_id="", hand_number=0)


def table_header(table_id: str, log: Iterable[LoggedEvent]) -> dict[str, Any]:
    """The header of a hand export: the table and the rules it plays (from table_started)."""
    started = next(e.event for e in log if isinstance(e.event, K.TableStarted))
    assert isinstance(started, K.TableStarted)
    return {
        "table_id": table_id,
        "ruleset": started.ruleset,
        "overrides": dict(started.overrides),
        "stake": started.stake,
    }


def export_hand(
    table: dict[str, Any], events: Iterable[LoggedEvent], hand_id: str
) -> list[dict[str, Any]]:
    """JSON-lines records of one hand: a header with the table's rules, then its events."""
    out: list[dict[str, Any]] = [{"type": "hand", "hand_id": hand_id, **table}]
    for e in events:
        if getattr(e.event, "hand_id", "") == hand_id:
            out.append(
                {
                    "v": codec.SCHEMA_VERSION,
                    "seq": e.seq,
                    "t": e.t,
                    "kind": e.event.KIND,
                    "data": codec.to_json(e.event),
                }
            )
    return out


def read_export(records: list[dict[str, Any]]) -> list[LoggedEvent]:
    """The events of an export (after its header), of any schema version written."""
    return [
        LoggedEvent(
            int(r.get("seq", 0)),
            int(r.get("t", 0)),
            codec.from_json(r["kind"], r.get("data", {}), int(r.get("v", 1))),
        )
        for r in records[1:]
    ]


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    actions: int = 0
    wall_summary: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


class RecordedWall:
    """A wall port that hands out a hand's recorded tiles: the deal, then the live draws,
    replacement draws, 换牌 tiles and the 翻百搭 flip in the order the log holds them."""

    def __init__(self, started: K.HandStarted, dealt: K.TilesDealt | None, wall: dict[str, Any]):
        self.started, self.dealt = started, dealt
        self.live: deque[int] = deque()
        self.tail: deque[int] = deque()
        self.swaps: deque[list[int]] = deque()
        self.flip: list[int] | None = None  # the recorded 翻百搭 flip (set aside, indicator)
        for e in wall["events"]:
            if e["kind"] == "indicator":
                self.flip = T.parse(e["tiles"])
            elif e["kind"] == "draw":
                self.live.extend(T.parse(e["tiles"]))
            elif e["kind"] == "replacement":
                self.tail.extend(T.parse(e["tiles"]))
            elif e["kind"] == "swap":
                self.swaps.append(T.parse(e["tiles"]))
        self.seed = wall["seed"]
        self.remaining = dealt.tiles_left if dealt is not None else 0

    def new_hand(self, ruleset_name, overrides, dealer, request_id) -> WallHand:
        s = self.started
        size = tile_set_of(resolve_ruleset(ruleset_name, overrides)).size  # 144, 148 or 152
        return WallHand(s.hand_id, s.dice, s.commitment, size)

    def deal(self, hand_id):
        if self.dealt is None:
            raise DomainError("the record has no deal")
        self.remaining = self.dealt.tiles_left
        return [list(h) for h in self.dealt.hands], self.remaining

    def _take(self, q: deque[int]) -> WallDraw:
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

    def flip_indicator(self, hand_id) -> tuple[list[int], int]:
        if self.flip is None:
            raise DomainError("the record has no 百搭 indicator here")
        turned, self.flip = self.flip, None
        self.remaining -= len(turned)
        return turned, self.remaining

    def reveal(self, hand_id, number=0) -> WallReveal:
        return WallReveal(self.seed, self.started.commitment)


def wall_record(
    events: list[K.TableEvent],
    reserved: int,
    swap_count: int = 0,
    tile_set: dict[str, bool] | None = None,
) -> dict[str, Any]:
    """The wall verifier's record (services.wall.domain.verify) of a hand's events; ``tile_set`` the
    wall record's facts of a 百搭 set (None: the 144 tiles)."""
    started = next(e for e in events if isinstance(e, K.HandStarted))
    assert isinstance(started, K.HandStarted)
    seed = next((e.seed for e in events if isinstance(e, K.SeedRevealed)), "")
    out: list[dict[str, Any]] = []
    dealer = started.dealer
    fmt = T.format_tiles
    for e in events:
        if isinstance(e, K.TilesDealt):
            for i in range(NUM_SEATS):
                seat = (dealer + i) % NUM_SEATS
                out.append({"kind": "deal", "seat": seat, "tiles": fmt(e.hands[seat], sort=False)})
        elif isinstance(e, K.TilesSwapped):
            out.append(
                {
                    "kind": "swap",
                    "seat": e.seat,
                    "buried": fmt(e.buried, sort=False),
                    "tiles": fmt(e.taken, sort=False),
                }
            )
        elif isinstance(e, K.FlowersExposed):
            if e.draw in ("deal", "swap"):
                for k in e.replacements:
                    out.append({"kind": "replacement", "seat": e.seat, "tiles": T.format_tile(k)})
            else:
                kind_w = "replacement" if e.draw == "replacement" else "draw"
                out.append({"kind": kind_w, "seat": e.seat, "tiles": fmt(e.flowers, sort=False)})
        elif isinstance(e, K.WildFlipped):
            turned = fmt((*e.set_aside, e.indicator), sort=False)
            out.append({"kind": "indicator", "seat": dealer, "tiles": turned})
        elif isinstance(e, K.TileDrawn) and e.tile is not None:
            kind_w = "replacement" if e.replacement else "draw"
            out.append({"kind": kind_w, "seat": e.seat, "tiles": T.format_tile(e.tile)})
    return {
        "seed": seed,
        "commitment": started.commitment,
        "dealer": dealer,
        "dice": list(started.dice),
        "reserved_tiles": reserved,
        "tile_swap_count": swap_count,
        **({"tile_set": tile_set} if tile_set else {}),
        "events": out,
    }


def _why(exc: Exception) -> str:
    if isinstance(exc, DomainError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"


def _before_result(events: list[K.TableEvent]) -> list[K.TableEvent]:
    """A hand's events up to its own result (an escape's result is not the hand's)."""
    for i, ev in enumerate(events):
        if isinstance(ev, K.HandResult) and ev.outcome != "escape":
            return events[:i]
    return events


def logged_holds(events: Iterable[LoggedEvent]) -> deque[tuple[int, int]]:
    """Each claim window's hold as the log has it, in order: (when its discard or added kong
    was logged, the hold drawn; 0: none). A replay draws these again, so its windows are
    padded (``window_padding``) as the logged ones were (RULES §4 "Claim windows")."""
    return deque(
        (e.t, e.event.hold_ms)
        for e in events
        if isinstance(e.event, K.TileDiscarded)
        or (isinstance(e.event, K.MeldDeclared) and e.event.meld.kind is MeldKind.ADDED_KONG)
    )


def verify_hand(
    records: list[dict[str, Any]], *, rules: RulesPort, scoring: ScoringPort
) -> Verdict:
    """Check an exported hand (see the module docstring) against ``rules`` and ``scoring``
    (:func:`services.gateway.verify.verify_hand` gives the in-process domain packages)."""
    from services.rules.domain import validate_action
    from services.wall.domain.verify import RecordError, verify_record

    verdict = Verdict()
    header = records[0]
    try:
        logged = read_export(records)
    except (codec.RecordError, KeyError, TypeError, ValueError) as exc:
        verdict.problems.append(f"unreadable record: {exc}")
        return verdict
    ruleset = resolve_ruleset(header.get("ruleset", ""), header.get("overrides", {}))
    everything = [e.event for e in logged]
    events = [e for e in logged if is_engine_event(e.event)]
    started = next((e.event for e in events if isinstance(e.event, K.HandStarted)), None)
    dealt = next((e.event for e in events if isinstance(e.event, K.TilesDealt)), None)
    if not isinstance(started, K.HandStarted) or not isinstance(dealt, K.TilesDealt):
        verdict.problems.append("the record has no hand_started or tiles_dealt event")
        return verdict
    swap_count = ruleset.table.tile_swap_count if ruleset.table.tile_swap else 0
    from services.wall.domain.record import tile_set_to_json

    facts = tile_set_to_json(tile_set_of(ruleset))
    wall = wall_record(everything, ruleset.table.reserved_tiles, swap_count, facts)
    if not wall["seed"]:
        verdict.problems.append("the seed was never revealed: the hand is not finished")
        return verdict
    try:
        w = verify_record(wall)
        verdict.wall_summary = w.summary()
        verdict.problems += [f"wall: {p}" for p in w.problems]
    except RecordError as exc:
        verdict.problems.append(f"wall record: {exc}")
    produced: list[K.TableEvent] = []
    steps: deque[Callable[[], None]] = deque()  # what follows each action (service calls)
    holds = logged_holds(events)

    def emit(ev: K.TableEvent) -> int:
        produced.append(ev)
        return len(produced)

    engine = HandEngine(
        HandConfig(
            table_id=header.get("table_id", ""),
            hand_number=started.hand_number,
            dealer=started.dealer,
            huangfan=started.huangfan - (started.huangfan_dice or 0),
            stake=int(header.get("stake", 1)),
            ruleset=ruleset,
            ruleset_name=header.get("ruleset", ""),
            overrides=dict(header.get("overrides", {})),
            discard_ms=0,
            claim_ms=0,
            garden_stacks=started.garden_stacks,
            doubled_seats=started.doubled_seats,
            fees=started.fees,
        ),
        wall=RecordedWall(started, dealt, wall),
        rules=rules,
        scoring=scoring,
        emit=emit,
        now_ms=lambda: 0,
        defer=steps.append,
        window_hold=lambda: holds.popleft()[1] if holds else 0,
    )
    # A player who left during the hand reset the 荒番 counter: the result says so. (One who
    # escapes once the hand is settled, 掉线 past its grace, resets the next hand's.)
    before = _before_result(everything)
    engine.huangfan_reset = any(isinstance(e, K.SeatChanged) and e.left for e in before)
    try:
        engine.start()
    except Exception as exc:  # a service of the replay (wall record, rules, scoring) failed
        verdict.problems.append(f"replay failed at the start of the hand: {_why(exc)}")
        return verdict
    for entry in logged:
        ev = entry.event
        if isinstance(ev, K.HandResult) and ev.outcome == "escape":
            # A player left: the session settled the escape and the hand goes on with the
            # stacks left after the penalty (escape.leave).
            if ev.garden_stacks is not None:
                engine.config = replace(engine.config, garden_stacks=ev.garden_stacks)
            continue
        if not isinstance(ev, K.ActionTaken):
            continue
        action = ev.action
        try:
            if not isinstance(action, TileSwap):  # 换牌 is the engine's own check
                validate_action(engine.snapshot(), ev.seat, action)
            engine.act(ev.seat, action, auto=ev.auto)
        except DomainError as exc:
            verdict.problems.append(
                f"event {entry.seq}: illegal action by seat {ev.seat}: {exc.message}"
            )
            return verdict
        verdict.actions += 1
        try:  # the action was legal; what follows it is the services' work
            while steps:
                steps.popleft()()
        except Exception as exc:
            verdict.problems.append(
                f"event {entry.seq}: replay failed after seat {ev.seat}'s "
                f"{codec.action_to_json(action)['type']} (a legal action): {_why(exc)}"
            )
            return verdict
    recorded = [_comparable(e.event) for e in events]
    replayed = [_comparable(e) for e in produced]
    if recorded != replayed:
        for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)):
            if a != b:
                verdict.problems.append(
                    f"event {i}: recorded {a.KIND} {codec.to_json(a)} but the replay gives "
                    f"{b.KIND} {codec.to_json(b)}"
                )
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
