"""Who decides for a seat, and when: timers, bots and 托管 (auto-play), RULES §4 and §11.

A prompt schedules its seat's decision: a bot seat (or a seat whose player left) is played by
the policy after ``bot_delay_ms``, a seat on 托管 after ``auto_play_delay_ms``, a player's on
its deadline. A missed discard discards the drawn tile, a missed claim is a pass, and a seat
that times out ``auto_play_after`` times in a row is put on 托管 until its player acts again or
sends ``resume``. Who may claim is secret: a missed claim's ``timed_out`` and the 托管 it starts
are the seat's own until its next own turn (:meth:`TableSession.engine_emit`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.gateway.domain.events.kinds import (
    CLAIM,
    OWN_TURN,
    ROB_KONG,
    SWAP,
    SeatChanged,
    TimedOut,
)
from services.gateway.domain.hand import HandEngine, Pending
from services.gateway.domain.session import claim_windows
from services.gateway.domain.session.config import PLAYING
from shared.errors import FailedPrecondition
from shared.table import Action, ClaimOptions, DeclareReady, OwnTurnOptions, Pass, Win

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession


def schedule_decision(t: TableSession, seat: int, seq: int, deadline_ms: int) -> None:
    """Arrange for the decision of the prompt ``seq`` to be made: by the bot, 托管 or timer."""
    s = t.seats[seat]
    if s.bot or s.left:
        steps, delay = t.inline_steps, bot_delay(t)
        if steps is not None and delay <= 0 and t.config.chain_bot_decisions:
            steps.append(lambda: bot_decides(t, seat, seq))  # see bot()
        else:
            t.scheduler.call_later(delay, lambda: bot(t, seat, seq))
    elif s.auto_play:
        t.scheduler.call_later(t.config.auto_play_delay_ms, lambda: bot(t, seat, seq))
    else:
        delay = max(0, deadline_ms - t.scheduler.now_ms())
        t.scheduler.call_later(delay, lambda: timeout(t, seat, seq))


def bot_delay(t: TableSession) -> int:
    """How long a bot thinks: ``bot_delay_ms``, and at a table with a person seated
    ``bot_pace_ms`` + a uniform 0..``bot_pace_jitter_ms`` more (a human pace, drawn afresh for
    each decision so that it tells nothing); bots alone play at ``bot_delay_ms``."""
    cfg = t.config
    if (cfg.bot_pace_ms or cfg.bot_pace_jitter_ms) and claim_windows.person_seated(t):
        jitter = t.window_rng.randint(0, cfg.bot_pace_jitter_ms) if cfg.bot_pace_jitter_ms else 0
        return cfg.bot_delay_ms + cfg.bot_pace_ms + jitter
    return cfg.bot_delay_ms


def current(t: TableSession, seat: int, seq: int) -> Pending | None:
    """The seat's decision of the prompt ``seq``, if it is still pending."""
    hand = t.hand
    if t.phase != PLAYING or hand is None or hand.finished:
        return None
    p = hand.pending.get(seat)
    return p if p is not None and p.sequence == seq else None


def bot(t: TableSession, seat: int, seq: int) -> None:
    """Scheduler callback: a bot (or 托管, or a stand-in for a player who left) decides.
    The engine steps its action leads to run right after it in this callback
    (:meth:`TableSession.steps_inline`), and with ``chain_bot_decisions`` so do the decisions
    of bot seats those steps prompt: a table of bots then plays on without a scheduler round
    trip per decision, in the order the scheduler would have run them."""
    with t.steps_inline():
        bot_decides(t, seat, seq)


def bot_decides(t: TableSession, seat: int, seq: int) -> None:
    p = current(t, seat, seq)
    if p is None or not t.seats[seat].played_by_bot:
        return
    hand = t.hand
    assert hand is not None
    try:
        action = t.policy(p, hand)
        hand.act(seat, action, auto=True)
    except FailedPrecondition:  # the policy chose what the options do not hold
        hand.act(seat, hand.default_action(seat), auto=True)
    t.after_engine()


def timeout(t: TableSession, seat: int, seq: int) -> None:
    """The seat's deadline passed with its decision still pending: the default action, and
    托管 after ``auto_play_after`` misses in a row."""
    p = current(t, seat, seq)
    if p is None:
        return
    hand = t.hand
    assert hand is not None
    s = t.seats[seat]
    if p.kind == SWAP:  # not swapping in time is no fault: the seat keeps its tiles
        hand.act(seat, Pass(), auto=True)
        t.after_engine()
        return
    s.timeouts_in_row += 1
    t.stats.timeouts += 1
    # A missed claim or 抢杠 tells that the seat could claim or win: its timed_out goes to the
    # seat only (events.views), and so does the 托管 it starts, announced to the others at the
    # seat's next own turn (engine_emit), when 托管 plays in the open. A missed own turn is
    # public, and so is the 托管 it starts.
    secret = p.kind in (CLAIM, ROB_KONG)
    hand_id, number = t.head()
    t.emit(
        TimedOut(
            seat=seat,
            kind=p.kind,
            in_a_row=s.timeouts_in_row,
            hand_id=hand_id,
            hand_number=number,
        )
    )
    if s.timeouts_in_row >= t.auto_play_after and not s.auto_play:
        s.auto_play = True
        if secret:
            t.auto_play_hidden.add(seat)
        t.emit(auto_play_change(t, seat, True, private=secret))
    hand.act(seat, hand.default_action(seat), auto=True)
    t.after_engine()


def resume(t: TableSession, seat: int) -> None:
    """The player ends 托管 (auto-play) now, between hands or with no decision of its own
    pending too. A decision pending (the bot would answer it soon) gets the seat's normal timer
    from now (past the table's deadline, the overtime timer), and the ``seat_changed`` event
    carries its new deadline."""
    s = t.seats[seat]
    if s.left:
        raise FailedPrecondition(f"seat {seat} left the table", reason="SEAT_LEFT")
    if not s.auto_play:
        raise FailedPrecondition(
            f"seat {seat} is not on 托管 (auto-play): nothing to resume", reason="NOT_AUTO_PLAY"
        )
    s.auto_play = False
    s.timeouts_in_row = 0
    private = seat in t.auto_play_hidden  # never announced to the others: ends unannounced
    t.auto_play_hidden.discard(seat)
    deadline_ms, deadline_private = 0, False
    hand = t.hand
    p = hand.pending.get(seat) if hand is not None and t.phase == PLAYING else None
    if p is not None:
        now = t.scheduler.now_ms()
        if p.kind != SWAP:  # 换牌's window keeps its deadline, the same for every seat
            ms = t.discard_ms if p.kind == OWN_TURN else t.claim_ms
            p.deadline_ms = now + t.timer_cap(ms)  # the overtime timer past the deadline
        deadline_ms = p.deadline_ms
        # the others must not learn a claim is pending
        deadline_private = p.kind in (CLAIM, ROB_KONG)
        seq = p.sequence
        t.scheduler.call_later(max(0, p.deadline_ms - now), lambda: timeout(t, seat, seq))
    hand_id, number = t.head()
    t.emit(
        SeatChanged(
            seat=seat,
            player_id=s.player_id,
            bot=False,
            reason="auto_play_off",
            auto_play=False,
            deadline_ms=deadline_ms,
            private=private,
            deadline_private=deadline_private,
            hand_id=hand_id,
            hand_number=number,
        )
    )


def auto_play_change(t: TableSession, seat: int, on: bool, *, private: bool = False) -> SeatChanged:
    """The ``seat_changed`` of 托管 starting or ending; ``private``: for the seat only."""
    hand_id, number = t.head()
    return SeatChanged(
        seat=seat,
        player_id=t.seats[seat].player_id,
        bot=False,
        reason="auto_play_on" if on else "auto_play_off",
        auto_play=on,
        private=private,
        hand_id=hand_id,
        hand_number=number,
    )


def simple_policy(p: Pending, hand: HandEngine) -> Action:
    """The built-in stand-in policy: win when offered, 敲 as soon as possible, else the default
    (discard the drawn tile, pass a claim)."""
    opts = p.options
    if p.kind == SWAP:
        return Pass()  # keeps its tiles
    if isinstance(opts, OwnTurnOptions):
        if opts.wins:
            return Win()
        if opts.ready_discards:
            drawn = hand.drawn.get(p.seat)
            pick = drawn if drawn in opts.ready_discards else opts.ready_discards[0]
            return DeclareReady(pick)
        return hand.default_action(p.seat)
    if isinstance(opts, ClaimOptions) and opts.win is not None:
        return Win()
    return Pass()
