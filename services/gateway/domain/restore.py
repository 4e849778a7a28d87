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
* a claim window the dead owner had open keeps the hold it drew (``hold_ms`` of its discard),
  counted from when the discard was logged, so it ends when it would have (RULES §4 "Claim
  windows"); windows the log shows closed are not held again;
* a table still waiting for open seats keeps the deadline its ``table_started`` announced
  (absolute, so the wait is not extended by the takeover; already passed: it ends at once);
* so does the table's own deadline (``end_by_ms``; absent from logs written before it existed:
  none): past it, a table between hands ends instead of dealing, and the hand in play goes on
  under the overtime timer;
* between hands, the pause (RULES §11 "Between hands") ends when it would have: counted from
  when the last hand's ``seed_revealed`` was logged, with the seats whose ``next_hand_ready``
  the log holds still ready (everyone ready: the next hand is dealt at once); a table whose
  owner died before its first hand deals it at once (there is no result to pause after);
* 掉线: a seat the log says is disconnected (not reconnected, not left) stays so, on 托管, and
  escapes at the hand's end as it would have on the dead owner (:mod:`.session.presence`);
  the streams are the new owner's to count, so every seat's grace starts afresh (``watch``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import replace

from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.hand import HandEngine
from services.gateway.domain.ports import Emit, Report, WallDraw, WallReveal
from services.gateway.domain.replay import (
    RecordedWall,
    is_engine_event,
    logged_holds,
    wall_record,
)
from services.gateway.domain.session import (
    BETWEEN_HANDS,
    FINISHED,
    HALTED,
    PLAYING,
    WAITING,
    Ports,
    Seat,
    SessionConfig,
    TableSession,
    between_hands,
    claim_windows,
    decisions,
    presence,
)
from services.gateway.domain.session.bankruptcy import HandAnswer
from shared.ruleset import resolve_ruleset


class ResumingWall(RecordedWall):
    """Recorded tiles first, then the live wall (numbered on by the engine). ``dealt`` None:
    the dead owner logged the hand's start but not its deal, which the wall deals again (a
    repeated Deal gets the same tiles)."""

    def __init__(
        self, live_wall, started: K.HandStarted, dealt: K.TilesDealt | None, record
    ) -> None:
        super().__init__(started, dealt, record)
        self.live_wall = live_wall

    def deal(self, hand_id):
        if self.dealt is None:
            return self.live_wall.deal(hand_id)
        return super().deal(hand_id)

    def draw(self, hand_id, seat, number=0) -> WallDraw:
        if self.live:
            return self._take(self.live)
        return self.live_wall.draw(hand_id, seat, number)

    def draw_replacement(self, hand_id, seat, number=0) -> WallDraw:
        if self.tail:
            return self._take(self.tail)
        return self.live_wall.draw_replacement(hand_id, seat, number)

    def swap(self, hand_id, seat, buried, number=0) -> list[int]:
        if self.swaps:
            return self.swaps.popleft()
        return self.live_wall.swap(hand_id, seat, buried, number)

    def flip_indicator(self, hand_id) -> tuple[list[int], int]:
        if self.flip is not None:
            return super().flip_indicator(hand_id)
        return self.live_wall.flip_indicator(hand_id)

    def reveal(self, hand_id, number=0) -> WallReveal:
        return self.live_wall.reveal(hand_id, number)


def restore_session(
    table_id: str,
    log: list[LoggedEvent],
    *,
    timers: dict[str, int | None],
    ports: Ports,
    scheduler,
    emit: Emit,
    report: Report,
    policy,
    on_step_failed: Callable[[int, Exception], None] | None = None,
    on_halted: Callable[[Exception], None] | None = None,
    hand_answer: HandAnswer | None = None,
) -> TableSession:
    """The session of a logged table, ready to go on (timers scheduled, next step queued)."""
    started = next(e.event for e in log if isinstance(e.event, K.TableStarted))
    assert isinstance(started, K.TableStarted)
    ruleset = resolve_ruleset(started.ruleset, started.overrides)
    seats = [
        Seat(
            player_id=s.player_id,
            display_name=s.display_name,
            bot=s.bot,
            joined=bool(s.player_id) or s.bot,
        )
        for s in started.seats
    ]
    hand_starts = [i for i, e in enumerate(log) if isinstance(e.event, K.HandStarted)]
    config = SessionConfig(
        table_id=table_id,
        ruleset=ruleset,
        ruleset_name=started.ruleset,
        overrides=dict(started.overrides),
        stake=started.stake,
        max_hands=started.max_hands,
        max_rounds=started.max_rounds,
        tag=started.tag,
        first_dealer=started.first_dealer,
        end_by_ms=started.end_by_ms,
        fee_per_hand=started.fee_per_hand,
        discard_ms=timers.get("discard_ms"),
        claim_ms=timers.get("claim_ms"),
        claim_window_floor_ms=timers.get("claim_window_floor_ms"),
        claim_window_jitter_ms=timers.get("claim_window_jitter_ms"),
        bot_delay_ms=timers.get("bot_delay_ms") or 0,
        auto_play_delay_ms=timers.get("auto_play_delay_ms") or 0,
        bot_pace_ms=timers.get("bot_pace_ms") or 0,
        bot_pace_jitter_ms=timers.get("bot_pace_jitter_ms") or 0,
        between_hands_ms=timers.get("between_hands_ms", 0),
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
        on_halted=on_halted,
        hand_answer=hand_answer,
    )
    hand_open = False
    left_in_hand = False
    result: K.HandResult | None = None
    pause_since: int | None = None  # when the last hand's end was logged
    ready: set[int] = set()  # who pressed Next since
    for entry in log:
        ev = entry.event
        if isinstance(ev, K.SeatChanged):
            s = seats[ev.seat]
            if ev.reason == "joined":
                s.player_id, s.joined = ev.player_id or s.player_id, True
            elif ev.reason == "left":
                presence.restored(session, ev)
                s.left = True
                session.huangfan = 0
                left_in_hand = left_in_hand or hand_open
            elif ev.reason in (presence.DISCONNECTED, presence.RECONNECTED, presence.SUSPENDED):
                presence.restored(session, ev)
            elif ev.reason in ("auto_play_on", "auto_play_off"):
                s.auto_play = ev.reason == "auto_play_on"
                if s.auto_play and ev.private:  # not announced to the others yet
                    session.auto_play_hidden.add(ev.seat)
                else:
                    session.auto_play_hidden.discard(ev.seat)
        elif isinstance(ev, K.SeatBankrupt):
            session.take_bankrupt_seat(ev)
        elif isinstance(ev, K.TimedOut):
            seats[ev.seat].timeouts_in_row = ev.in_a_row
        elif isinstance(ev, K.DoubleCardPlayed):
            played = session.doubled.get(ev.doubled_hand, ())
            session.doubled[ev.doubled_hand] = tuple(sorted((*played, ev.seat)))
        elif isinstance(ev, K.ActionTaken) and not ev.auto:
            seats[ev.seat].timeouts_in_row = 0
        elif isinstance(ev, K.NextHandReady) and ev.after_hand == session.hands_played:
            ready.add(ev.seat)
        elif isinstance(ev, K.HandStarted):
            hand_open, left_in_hand = True, False
            session.dealer = ev.dealer
        elif isinstance(ev, K.HandResult) and ev.outcome == "escape":
            for i, p in enumerate(ev.payments):
                seats[i].chips += p
        elif isinstance(ev, K.HandResult):
            result = ev  # counted once the hand is complete in the log (seed revealed)
        elif isinstance(ev, K.SeedRevealed) and result is not None:
            for i, p in enumerate(result.payments):
                seats[i].chips += p
            session.hands_played += 1
            session.last_hand_id = result.hand_id
            session.count_deal(session.dealer, result.next_dealer)
            session.dealer = result.next_dealer
            session.huangfan = 0 if left_in_hand else result.next_huangfan
            hand_open, result = False, None
            pause_since, ready = entry.t, set()
        elif isinstance(ev, K.TableFinished):
            session.phase = FINISHED
            session.finish_reason = ev.reason
        elif isinstance(ev, K.TableHalted):  # stays stopped until an operator looks
            session.phase = HALTED
            session.finish_reason = "halted"
    if session.phase in (FINISHED, HALTED):
        return session
    if hand_open:
        _resume_hand(session, log[hand_starts[-1] :], left_in_hand)
        return session
    if any(s.open for s in seats):
        session.phase = WAITING
        session.seat_deadline_ms = started.seat_deadline_ms
        session.resume_seat_wait()
        return session
    session.phase = BETWEEN_HANDS
    reason = session.limit_reached() if hand_starts else ""
    if reason or (session.had_humans and all(s.bot or s.left for s in seats)):
        session.finish(reason or "players_left")
    else:
        # the pause goes on (at the table's deadline, if it comes first); before the first
        # hand there is no result to pause after: it is dealt now
        if hand_starts:
            session.schedule_next_hand(pause_since, ready)
        else:
            between_hands.begin(session, 0)
    return session


def _resume_hand(session: TableSession, entries: list[LoggedEvent], left_in_hand: bool) -> None:
    engine_events = [e for e in entries if is_engine_event(e.event)]
    started = engine_events[0].event
    dealt = next((e.event for e in engine_events if isinstance(e.event, K.TilesDealt)), None)
    assert isinstance(started, K.HandStarted)
    ruleset = session.config.ruleset
    swap_count = ruleset.table.tile_swap_count if ruleset.table.tile_swap else 0
    wall = ResumingWall(
        session.ports.wall,
        started,
        dealt,
        wall_record([e.event for e in entries], ruleset.table.reserved_tiles, swap_count),
    )
    recorded = deque(e.seq for e in engine_events)
    last_recorded = engine_events[-1].seq

    def emit(ev: K.TableEvent) -> int:
        if recorded:
            return recorded.popleft()
        return session.engine_emit(ev)  # a step the dead owner never finished

    session.phase = PLAYING
    session.dealer = started.dealer
    session.left_during_hand = left_in_hand
    cfg = replace(
        session.hand_config(),
        hand_number=started.hand_number,
        huangfan=started.huangfan - (started.huangfan_dice or 0),  # the counter
    )
    # Each window's hold as the log has it: drawn again, so the replay pads the windows
    # (``window_padding``) as its first owner did and numbers its events as the log does.
    holds = logged_holds(engine_events)
    drawn = [0, 0]  # the last window drawn: (when its discard was logged, its hold)
    now_ms = session.scheduler.now_ms

    def window_hold() -> int:
        """A logged window: the hold it drew; a new one: a fresh hold."""
        drawn[:] = holds.popleft() if holds else (0, 0)
        return drawn[1] if drawn[0] else claim_windows.window_hold(session)

    def defer_later(step, ms: int) -> None:
        if recorded:  # the log goes on past this window: it closed
            step()
        else:  # the window the dead owner had open: it ends when its hold runs out
            t, hold = drawn
            session.defer(step, delay_ms=max(0, t + hold - now_ms()) if t else ms)

    hand = HandEngine(
        cfg,
        wall=wall,
        rules=session.ports.rules,
        scoring=session.ports.scoring,
        emit=emit,
        now_ms=now_ms,
        timer_ms=session.timer_ms,
        timer_cap=session.timer_cap,
        window_hold=window_hold,
        defer_later=defer_later,
    )
    session.hand = hand
    hand.huangfan_reset = left_in_hand
    hand.start()
    for e in engine_events:
        if isinstance(e.event, K.ActionTaken):
            hand.act(e.event.seat, e.event.action, auto=e.event.auto)
    hand._emit = session.engine_emit
    hand.defer = session.defer
    hand.window_hold = claim_windows.hold_hook(session)
    hand.defer_later = claim_windows.defer_hook(session)
    # Timers of prompts already in the log start afresh (the takeover took the seat's time):
    # each runs out at the deadline the replay gave its prompt, which the seat's view shows.
    for p in hand.pending.values():
        if p.sequence <= last_recorded:
            decisions.schedule_decision(session, p.seat, p.sequence, p.deadline_ms)
    session.after_engine()
