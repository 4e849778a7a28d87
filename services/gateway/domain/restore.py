"""Restoring a table from its event log (a replica taking over a table whose owner died).

The log holds every fact and every applied action, so a table is rebuilt by reading it:

* the session (seats, who joined, left or is on 托管, chips — and so 逛花园 stacks —, hands
  and rounds played, dealer, 荒番) from the table-level events and each hand's result;
* a hand in progress by playing it again with the same engine: the wall hands out the recorded
  tiles, then (``ResumingWall``) goes on with the live wall service for new draws, numbered on
  from the recorded ones by the engine (their request ids) so a draw the dead owner made but
  never logged is returned again, not lost; rules and scoring are the live ports; every
  recorded action is applied in order; events already in the log are not written again (their
  recorded sequence numbers are reused), anything beyond the log (a step the dead owner never
  finished) is;
* a table still waiting for open seats keeps the deadline its ``table_started`` announced
  (absolute, so the wait is not extended by the takeover; already passed: it ends at once).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from services.gateway.domain.hand import HandEngine, action_from_json
from services.gateway.domain.ports import WallDraw, WallHand, WallReveal
from services.gateway.domain.replay import is_engine_event, wall_record
from services.gateway.domain.session import (
    BETWEEN_HANDS,
    FINISHED,
    PLAYING,
    WAITING,
    Ports,
    Seat,
    SessionConfig,
    TableSession,
)
from shared import tiles as T
from shared.ruleset import resolve_ruleset
from shared.tile_set import tile_set_of

LogEntry = tuple[int, int, str, dict[str, Any]]


class ResumingWall:
    """Recorded tiles first, then the live wall."""

    def __init__(self, live_wall, started: dict, dealt: dict, record: dict) -> None:
        self.live_wall = live_wall
        self.started, self.dealt = started, dealt
        self.live: deque[int] = deque()
        self.tail: deque[int] = deque()
        self.swaps: deque[list[int]] = deque()
        self.flip: list[int] | None = None  # the recorded 翻百搭 flip
        for e in record["events"]:
            if e["kind"] == "indicator":
                self.flip = T.parse(e["tiles"])
            elif e["kind"] == "draw":
                self.live.extend(T.parse(e["tiles"]))
            elif e["kind"] == "replacement":
                self.tail.extend(T.parse(e["tiles"]))
            elif e["kind"] == "swap":
                self.swaps.append(T.parse(e["tiles"]))
        self.remaining = dealt["tiles_left"]

    def new_hand(self, ruleset_name, overrides, dealer, request_id) -> WallHand:
        s = self.started
        size = tile_set_of(resolve_ruleset(ruleset_name, overrides)).size  # 144, 148 or 152
        return WallHand(s["hand_id"], tuple(s["dice"]), s["commitment"], size)

    def deal(self, hand_id):
        return [T.parse(h) for h in self.dealt["hands"]], self.remaining

    def draw(self, hand_id, seat, number) -> WallDraw:
        if self.live:
            self.remaining -= 1
            return WallDraw(self.live.popleft(), self.remaining)
        return self.live_wall.draw(hand_id, seat, number)

    def draw_replacement(self, hand_id, seat, number) -> WallDraw:
        if self.tail:
            self.remaining -= 1
            return WallDraw(self.tail.popleft(), self.remaining)
        return self.live_wall.draw_replacement(hand_id, seat, number)

    def flip_indicator(self, hand_id) -> tuple[list[int], int]:
        if self.flip is not None:
            turned, self.flip = self.flip, None
            self.remaining -= len(turned)
            return turned, self.remaining
        return self.live_wall.flip_indicator(hand_id)

    def swap(self, hand_id, seat, buried, number) -> list[int]:
        if self.swaps:
            return self.swaps.popleft()
        return self.live_wall.swap(hand_id, seat, buried, number)

    def reveal(self, hand_id) -> WallReveal:
        return self.live_wall.reveal(hand_id)


def restore_session(
    table_id: str,
    log: list[LogEntry],
    *,
    timers: dict[str, int | None],
    ports: Ports,
    scheduler,
    emit: Callable[[str, dict[str, Any]], int],
    report: Callable[[str, dict[str, Any]], None],
    policy,
    on_step_failed: Callable[[int, Exception], None] | None = None,
) -> TableSession:
    """The session of a logged table, ready to go on (timers scheduled, next step queued)."""
    started = next(d for _, _, k, d in log if k == "table_started")
    ruleset = resolve_ruleset(started["ruleset"], started["overrides"])
    seats = [
        Seat(
            player_id=s["player_id"],
            display_name=s.get("display_name", ""),
            bot=s["bot"],
            joined=bool(s["player_id"]) or s["bot"],
        )
        for s in started["seats"]
    ]
    hand_starts = [i for i, (_, _, k, _) in enumerate(log) if k == "hand_started"]
    config = SessionConfig(
        table_id=table_id,
        ruleset=ruleset,
        ruleset_name=started["ruleset"],
        overrides=dict(started["overrides"]),
        stake=started["stake"],
        max_hands=started["max_hands"],
        max_rounds=started.get("max_rounds", 0),
        tag=started["tag"],
        discard_ms=timers.get("discard_ms"),
        claim_ms=timers.get("claim_ms"),
        bot_delay_ms=timers.get("bot_delay_ms") or 0,
        auto_play_delay_ms=timers.get("auto_play_delay_ms") or 0,
        between_hands_ms=timers.get("between_hands_ms") or 0,
    )
    session = TableSession(
        config,
        seats,
        ports=ports,
        scheduler=scheduler,
        emit=emit,
        report=report,
        policy=policy,
        on_step_failed=on_step_failed,
    )
    hand_open = False
    left_in_hand = False
    result: dict[str, Any] | None = None
    for _, _, k, d in log:
        if k == "seat_changed":
            s = seats[d["seat"]]
            reason = d.get("reason")
            if reason == "joined":
                s.player_id, s.joined = d.get("player_id", s.player_id), True
            elif reason == "left":
                s.left = True
                session.huangfan = 0
                left_in_hand = left_in_hand or hand_open
            elif reason in ("auto_play_on", "auto_play_off"):
                s.auto_play = reason == "auto_play_on"
                if s.auto_play and d.get("private"):  # not announced to the others yet
                    session.auto_play_hidden.add(d["seat"])
                else:
                    session.auto_play_hidden.discard(d["seat"])
        elif k == "timed_out":
            seats[d["seat"]].timeouts_in_row = d["in_a_row"]
        elif k == "action" and not d.get("auto"):
            seats[d["seat"]].timeouts_in_row = 0
        elif k == "hand_started":
            hand_open, left_in_hand = True, False
            session.dealer = d["dealer"]
        elif k == "hand_result" and d["outcome"] == "escape":
            for i, p in enumerate(d["payments"]):
                seats[i].chips += p
        elif k == "hand_result":
            result = d  # counted once the hand is complete in the log (seed revealed)
        elif k == "seed_revealed" and result is not None:
            for i, p in enumerate(result["payments"]):
                seats[i].chips += p
            session.hands_played += 1
            session.count_deal(session.dealer, result["next_dealer"])
            session.dealer = result["next_dealer"]
            session.huangfan = 0 if left_in_hand else result["next_huangfan"]
            hand_open, result = False, None
        elif k == "table_finished":
            session.phase = FINISHED
            session.finish_reason = d.get("reason", "")
    if session.phase == FINISHED:
        return session
    if hand_open:
        _resume_hand(session, log[hand_starts[-1] :], left_in_hand)
        return session
    if any(s.open for s in seats):
        session.phase = WAITING
        session.seat_deadline_ms = int(started.get("seat_deadline_ms", 0))
        session.resume_seat_wait()
        return session
    session.phase = BETWEEN_HANDS
    reason = session._limit_reached() if hand_starts else ""
    if reason or (session.had_humans and all(s.bot or s.left for s in seats)):
        session._finish(reason or "players_left")
    else:
        scheduler.call_later(config.between_hands_ms, session._next_hand)
    return session


def _resume_hand(session: TableSession, entries: list[LogEntry], left_in_hand: bool) -> None:
    records = [{"seq": q, "t": t, "kind": k, "data": d} for q, t, k, d in entries]
    engine_events = [r for r in records if is_engine_event(r["kind"], r["data"])]
    by_kind = {r["kind"]: r["data"] for r in engine_events}
    started = by_kind["hand_started"]
    ruleset = session.config.ruleset
    swap_count = ruleset.table.tile_swap_count if ruleset.table.tile_swap else 0
    wall = ResumingWall(
        session.ports.wall,
        started,
        by_kind["tiles_dealt"],
        wall_record(records, ruleset.table.reserved_tiles, swap_count),
    )
    recorded = deque(r["seq"] for r in engine_events)
    last_recorded = engine_events[-1]["seq"]

    def emit(kind: str, data: dict[str, Any]) -> int:
        if recorded:
            return recorded.popleft()
        return session.engine_emit(kind, data)  # a step the dead owner never finished

    session.phase = PLAYING
    session.dealer = started["dealer"]
    session.left_during_hand = left_in_hand
    cfg = replace(
        session._hand_config(),
        hand_number=started["hand_number"],
        huangfan=started["huangfan"] - started.get("huangfan_dice", 0),  # the counter
    )
    hand = HandEngine(
        cfg,
        wall=wall,
        rules=session.ports.rules,
        scoring=session.ports.scoring,
        emit=emit,
        now_ms=session.scheduler.now_ms,
        timer_ms=session._timer_ms,
    )
    session.hand = hand
    hand.huangfan_reset = left_in_hand
    hand.start()
    for r in engine_events:
        if r["kind"] == "action":
            d = r["data"]
            hand.act(d["seat"], action_from_json(d["action"]), auto=bool(d.get("auto")))
    hand._emit = session.engine_emit
    hand.defer = session._defer
    for p in hand.pending.values():  # timers of prompts already in the log
        if p.sequence <= last_recorded:
            session._schedule_decision(
                p.seat,
                p.sequence,
                session.scheduler.now_ms()
                + (session.discard_ms if p.kind == "own_turn" else session.claim_ms),
            )
    session._after_engine()
