"""A table session (牌桌): four seats, a ruleset, a stake and successive hands (RULES §2, §9-§11).

:class:`TableSession` owns the seats (players or bots), the dealer rotation and the 荒番 counter
(both taken from scoring's bookkeeping of each hand; the counter is reset when a player leaves),
the chips won so far, the hand and round (圈, :mod:`services.gateway.domain.rounds`) counts, and
runs each hand through :class:`HandEngine`. A table ends after ``max_hands`` hands or
``max_rounds`` rounds (whichever comes first; 0 = no limit), at its deadline, or when its
players have left.

A deadline (``end_by_ms``, a tournament round's time limit): :mod:`.deadline`.

Open seats (空座) are waited for at most ``seat_wait_ms``: :mod:`.seating`.

逛花园 (RULES §9, option ``payment.garden``): each seat starts with ``payment.garden_stack``
chips, so its stack is that plus its net chips. The stacks go to scoring with every hand (and
escape), which caps each payment at the payer's stack: a seat at 0 pays nothing more and can win
chips back. They are shown in the views (``garden_stack``) and events (``garden_stacks`` of
``hand_started``, before the hand, and of ``hand_result`` and ``table_finished``, after it); the
table lasts ``payment.garden_rounds`` rounds.

Timers come from the ruleset (``timers.discard_seconds``, ``claim_seconds``,
``auto_play_after``) through an injected :class:`~services.gateway.domain.clock.Scheduler`:
a missed discard discards the drawn tile, a missed claim is a pass, and a seat that times out
``auto_play_after`` times in a row is put on 托管 auto-play until its player acts again. Bot
seats, 托管 seats and seats whose player left are played by a policy (a pure function from the
seat's view and its pending decision to an action). Nothing here sleeps or reads the wall clock.

Every fact goes through ``emit(event) -> sequence`` (the table's event log); settled hands are
handed to ``report(kind, data)`` (the matchmaking outbox). Decisions — timers, bots and 托管 —
are :mod:`.decisions`, leaving (escape) :mod:`.escape`, what each viewer sees :mod:`.views`.

破产 (RULES-items §4): a table whose hands move silver deals its next hand only once
matchmaking has answered the last hand's report (:mod:`.bankruptcy`). 加倍卡: :mod:`.double_cards`.

An engine step that fails for a transient reason (a service unavailable) is retried from the
call that failed; any other failure (a bug) halts the table loudly: ``table_halted`` to every
seat, the error logged with its stack by the gateway, the log kept as it is for an operator.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from services.gateway.domain.clock import Scheduler, Timer
from services.gateway.domain.events.kinds import (
    OWN_TURN,
    Prompt,
    SeatAssignment,
    SeatBankrupt,
    TableEvent,
    TableFinished,
    TableHalted,
    TableStarted,
)
from services.gateway.domain.hand import HandConfig, HandEngine
from services.gateway.domain.ports import Emit, Report, Settlement, is_transient
from services.gateway.domain.rounds import deal_advance, rounds_completed
from services.gateway.domain.session import (
    bankruptcy,
    between_hands,
    claim_windows,
    deadline,
    decisions,
    double_cards,
    escape,
    presence,
    room_fee,
    seating,
    views,
)
from services.gateway.domain.session.bankruptcy import ANSWER_POLL_MS, HandAnswer
from services.gateway.domain.session.config import (
    BETWEEN_HANDS,
    DETACHED,
    FINISHED,
    HALTED,
    PLAYING,
    RETRY_ATTEMPTS,
    RETRY_BACKOFF_MS,
    RETRY_STALLED_MS,
    WAITING,
    Policy,
    Ports,
    Seat,
    SessionConfig,
    Stats,
)
from shared.errors import FailedPrecondition, InvalidArgument
from shared.hand.hand_type import HandType
from shared.table import NUM_SEATS, ResumePlay, SeatRequest


class TableSession:
    """One table. All methods must be called under the table's lock (the runtime's job)."""

    def __init__(
        self,
        config: SessionConfig,
        seats: list[Seat],
        *,
        ports: Ports,
        scheduler: Scheduler,
        emit: Emit,
        report: Report,
        policy: Policy,
        rng: random.Random | None = None,
        on_step_failed: Callable[[int, Exception], None] | None = None,
        on_halted: Callable[[Exception], None] | None = None,
        hand_answer: HandAnswer | None = None,
    ) -> None:
        if len(seats) != NUM_SEATS:
            raise InvalidArgument(f"a table has 4 seats, not {len(seats)}", field="seats")
        self.config = config
        self.seats = seats
        self.ports = ports
        self.scheduler = scheduler
        self._emit = emit
        self.report = report
        self.policy = policy
        self.rng = rng or random.Random()
        # Told of every transient engine failure (the attempt, the error): logged and counted.
        self.on_step_failed = on_step_failed
        # Told of the failure that halted the table (logged with its stack, counted).
        self.on_halted = on_halted
        # None: the table's hands move no silver, nothing to wait for between them.
        self.hand_answer = hand_answer
        self.last_hand_id = ""  # the last settled hand reported (its answer comes before a deal)
        # 破产: seat -> the event of its player's bankruptcy (a bot plays the seat since)
        self.bankrupt: dict[int, SeatBankrupt] = {}
        timers = config.ruleset.timers
        self.discard_ms = (
            config.discard_ms if config.discard_ms is not None else timers.discard_seconds * 1000
        )
        self.claim_ms = (
            config.claim_ms if config.claim_ms is not None else timers.claim_seconds * 1000
        )
        self.auto_play_after = int(timers.auto_play_after)
        # The most a decision prompted after the table's deadline gets (see timer_cap).
        self.overtime_ms = int(timers.overtime_seconds) * 1000
        self.window_rng = claim_windows.new_rng()  # claim windows' holds (.claim_windows)
        self.phase = WAITING
        self.dealer = (
            config.first_dealer
            if config.first_dealer is not None
            else self.rng.randrange(NUM_SEATS)
        )
        self.huangfan = 0
        self.hands_played = 0
        self.deal_moved = 0  # seats the deal has moved forward since the first hand (圈)
        payment = config.ruleset.payment
        self.garden = bool(payment.garden)  # 逛花园
        self.garden_start = int(payment.garden_stack) if self.garden else 0
        self.max_rounds = config.max_rounds or (int(payment.garden_rounds) if self.garden else 0)
        self.hand: HandEngine | None = None
        self.left_during_hand = False
        self.had_humans = any(not s.bot for s in seats)
        self.stats = Stats()
        self.last_settlement: Settlement | None = None
        self.finish_reason = ""
        # 加倍卡 (RULES-items §2): hand number -> the seats that doubled it
        self.doubled: dict[int, tuple[int, ...]] = {}
        # Unix ms by which the open seats must be taken (0 = no deadline); see start().
        self.seat_deadline_ms = 0
        self.seat_timer: Timer | None = None
        # Within :meth:`steps_collected` (a player's Act, a bot's action): the engine steps the
        # action deferred, run right after it (:meth:`run_steps`) instead of through the
        # scheduler.
        self.inline_steps: list[Callable[[], None]] | None = None
        # Seats put on 托管 by a missed claim or 抢杠, not yet announced to the others (see
        # decisions.timeout): told at the seat's next own turn.
        self.auto_play_hidden: set[int] = set()
        self.presence = presence.Presence()  # 掉线: who is connected, who was found gone
        self.pause = between_hands.Pause()  # who pressed Next after the last hand

    # --- rounds and 逛花园 --------------------------------------------------------------------
    @property
    def rounds_played(self) -> int:
        """Complete rounds (圈) so far (see :mod:`services.gateway.domain.rounds`)."""
        return rounds_completed(self.deal_moved)

    def count_deal(self, dealer: int, next_dealer: int) -> None:
        """A finished hand moved the deal from ``dealer`` to ``next_dealer``."""
        self.deal_moved += deal_advance(dealer, next_dealer)

    def garden_stacks(self) -> tuple[int, ...] | None:
        """逛花园: each seat's chips now (garden_stack + net chips); None without it."""
        if not self.garden:
            return None
        return tuple(self.garden_start + s.chips for s in self.seats)

    def limit_reached(self) -> str:
        """Why the table ends now between hands ("" = it goes on)."""
        if self.config.max_hands and self.hands_played >= self.config.max_hands:
            return "max_hands"
        if self.max_rounds and self.rounds_played >= self.max_rounds:
            return "max_rounds"
        if self.hands_played and self.past_deadline():  # the first hand is always dealt
            return "deadline"
        if self.had_humans and all(s.bot or s.left for s in self.seats):
            return "players_left"
        return ""

    # --- the table's deadline (:mod:`.deadline`) -------------------------------------------
    def past_deadline(self) -> bool:
        """The table's deadline has passed (:func:`deadline.past_deadline`)."""
        return deadline.past_deadline(self)

    def timer_cap(self, ms: int) -> int:
        """A decision's timer past the deadline (:func:`deadline.timer_cap`)."""
        return deadline.timer_cap(self, ms)

    def schedule_next_hand(self, since_ms: int | None = None, ready: Iterable[int] = ()) -> None:
        """The next deal, or the deadline (:func:`deadline.schedule_next_hand`)."""
        deadline.schedule_next_hand(self, since_ms, ready)

    # --- events ----------------------------------------------------------------------------
    def head(self) -> tuple[str, int]:
        """The hand id and number a table-level event carries: the running hand's, or none."""
        hand = self.hand
        if hand is not None and not hand.finished:
            return hand.hand_id, hand.config.hand_number
        return "", 0

    def emit(self, event: TableEvent) -> int:
        """Emit a fact of the table (built with :meth:`head` while a hand runs)."""
        return self._emit(event)

    def engine_emit(self, event: TableEvent) -> int:
        """Emit a fact of the running hand; a prompt schedules the seat's decision (bot, 托管
        or timer)."""
        seq = self._emit(event)
        if isinstance(event, Prompt):
            seat = event.seat
            if event.kind == OWN_TURN and seat in self.auto_play_hidden:
                self.auto_play_hidden.discard(seat)
                self.emit(decisions.auto_play_change(self, seat, True))
            decisions.schedule_decision(self, seat, seq, event.deadline_ms)
        return seq

    # --- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Announce the table; start the first hand once no seat is open. With open seats and
        a ``seat_wait_ms``, the deadline for taking them is fixed now and announced."""
        self.announce()
        self.begin()

    def announce(self) -> None:
        """The table's first event (TableStarted): once it is in the log, any replica can take
        the table over from there. With open seats and a ``seat_wait_ms``, the deadline for
        taking them is fixed now and announced."""
        if self.config.seat_wait_ms > 0 and any(s.open for s in self.seats):
            self.seat_deadline_ms = self.scheduler.now_ms() + self.config.seat_wait_ms
        cfg = self.config
        self.emit(
            TableStarted(
                ruleset=cfg.ruleset_name,
                overrides=dict(cfg.overrides),
                stake=cfg.stake,
                seats=tuple(SeatAssignment(s.player_id, s.display_name, s.bot) for s in self.seats),
                max_hands=cfg.max_hands,
                max_rounds=self.max_rounds,
                tag=cfg.tag,
                seat_deadline_ms=self.seat_deadline_ms,
                first_dealer=self.dealer,
                end_by_ms=cfg.end_by_ms,
                fee_per_hand=cfg.fee_per_hand,
            )
        )

    def begin(self) -> None:
        """After :meth:`announce`: wait for the open seats, or start the first hand."""
        self.resume_seat_wait()
        self.maybe_begin()

    def resume_seat_wait(self) -> None:
        """Arm the timer of the open seats' deadline (:func:`seating.resume_seat_wait`)."""
        seating.resume_seat_wait(self)

    def maybe_begin(self) -> None:
        """The first hand, once no seat is open (:func:`seating.maybe_begin`)."""
        seating.maybe_begin(self)

    def join(self, seat: int, player_id: str, display_name: str) -> None:
        """A player takes ``seat`` (:func:`seating.join`)."""
        seating.join(self, seat, player_id, display_name)

    def hand_config(self) -> HandConfig:
        return HandConfig(
            table_id=self.config.table_id,
            hand_number=self.hands_played + 1,
            dealer=self.dealer,
            huangfan=self.huangfan,
            stake=self.config.stake,
            ruleset=self.config.ruleset,
            ruleset_name=self.config.ruleset_name,
            overrides=dict(self.config.overrides),
            discard_ms=self.discard_ms,
            claim_ms=self.claim_ms,
            garden_stacks=self.garden_stacks(),
            doubled_seats=self.doubled.get(self.hands_played + 1, ()),
            fees=room_fee.hand_fees(self),
        )

    def start_hand(self) -> None:
        self.phase = PLAYING
        self.left_during_hand = False
        self.hand = HandEngine(
            self.hand_config(),
            wall=self.ports.wall,
            rules=self.ports.rules,
            scoring=self.ports.scoring,
            emit=self.engine_emit,
            now_ms=self.scheduler.now_ms,
            defer=self.defer,
            timer_ms=self.timer_ms,
            timer_cap=self.timer_cap,
            window_hold=claim_windows.hold_hook(self),
            defer_later=claim_windows.defer_hook(self),
        )
        hand = self.hand
        try:
            hand.start()
        except Exception as exc:  # a service call failed: go on from it later (see defer)
            if not self.failed(1, exc):
                return
            self.defer(hand.resume, attempt=2, delay_ms=RETRY_BACKOFF_MS)
            return
        self.after_engine()

    def after_engine(self) -> None:
        """After the engine moved: a hand that ended is counted, reported and followed by the
        next (or the table's end)."""
        hand = self.hand
        if hand is None or not hand.finished or self.phase != PLAYING:
            return
        st = hand.settlement
        assert st is not None
        self.last_settlement = st
        for i, p in enumerate(st.payments):
            self.seats[i].chips += p
        self.count_deal(hand.dealer, st.next_dealer)
        self.dealer = st.next_dealer
        self.huangfan = 0 if self.left_during_hand else st.next_huangfan
        self.hands_played += 1
        self.last_hand_id = hand.hand_id
        self.stats.hands += 1
        if hand.outcome == "draw":
            self.stats.draws += 1
        for w in st.winners:
            label = _hand_label(w.hand)
            self.stats.wins_by_hand[label] = self.stats.wins_by_hand.get(label, 0) + 1
        self.report(
            "hand",
            {
                "hand_id": hand.hand_id,
                "payments": list(st.payments),
                "house": st.house,
                "escaped_seat": None,
                "hand_number": hand.config.hand_number,
                "doubled_seats": list(hand.config.doubled_seats),
                "fees": list(hand.config.fees),
            },
        )
        if self.presence.disconnected:  # 掉线 and not back: escaped now (:mod:`.presence`)
            presence.hand_over(self, hand)
        self.phase = BETWEEN_HANDS
        reason = self.limit_reached()
        if reason:
            self.finish(reason)
        else:
            self.schedule_next_hand()

    def failed(self, attempt: int, exc: Exception) -> bool:
        """An engine step failed: True when it may be retried (a service unavailable, told to
        ``on_step_failed``); anything else halts the table (:meth:`halt`) and is False."""
        if is_transient(exc):
            if self.on_step_failed is not None:
                self.on_step_failed(attempt, exc)
            return True
        self.halt(exc)
        return False

    def halt(self, exc: Exception) -> None:
        """Stop the table for good: its engine failed for a reason no retry mends (a bug).
        Every seat is told (``table_halted``); timers and steps find the phase changed and do
        nothing; the log stays as it is for an operator."""
        if self.phase in (HALTED, DETACHED, FINISHED):
            return
        self.phase = HALTED
        self.finish_reason = "halted"
        hand_id, number = self.head()
        if self.on_halted is not None:
            self.on_halted(exc)
        self.emit(
            TableHalted(
                reason="ENGINE_FAILED",
                message=f"the table stopped on an internal error ({type(exc).__name__}); "
                "its log is kept for an operator",
                error="".join(traceback.format_exception_only(type(exc), exc)).strip(),
                hand_id=hand_id,
                hand_number=number,
            )
        )

    @contextmanager
    def steps_collected(self) -> Iterator[list[Callable[[], None]]]:
        """Within it, an action (a player's Act, a bot's decision) is applied; the engine steps
        it defers (:meth:`defer`: claim options, the next draw, scoring) are collected in the
        list it yields instead of going to the scheduler, for :meth:`run_steps` to run next.
        Nothing else of this table can be due in between: the engine steps on only once every
        decision of the moment has been made, and what is left queued for it (timers of
        decisions already made) does nothing. A block that raises (the action refused) hands
        what it deferred to the scheduler, as without it. Nested, the outermost one collects
        (the inner one yields an empty list)."""
        if self.inline_steps is not None:
            yield []
            return
        steps: list[Callable[[], None]] = []
        self.inline_steps = steps
        try:
            yield steps
        except BaseException:
            self.inline_steps = None
            for step in steps:
                self.scheduler.call_later(0, step)
            raise
        finally:
            self.inline_steps = None

    def run_steps(self, steps: list[Callable[[], None]]) -> None:
        """Run the steps :meth:`steps_collected` collected, in order, with the steps those
        defer in turn (the list grows while it runs): claim options, the draw after them and
        its prompt, as one run, without a scheduler round trip."""
        if not steps:  # nothing deferred, or a nested block's (its outer one runs them)
            return
        self.inline_steps = steps
        try:
            for step in steps:  # grows while it runs
                step()
        finally:
            self.inline_steps = None

    @contextmanager
    def steps_inline(self) -> Iterator[None]:
        """:meth:`steps_collected`, then :meth:`run_steps` when the block ends: the action and
        what follows it in this call (one step of the table: one write, one message to each
        stream)."""
        with self.steps_collected() as steps:
            yield
        self.run_steps(steps)

    def defer(self, step: Callable[[], None], *, attempt: int = 1, delay_ms: int = 0) -> None:
        """Run an engine step after the current call returns (within :meth:`steps_collected`,
        by :meth:`run_steps`; otherwise through the scheduler, after the call's events are
        written). The step is
        the engine's ``resume``, which goes on from the last point it recorded, so a step that
        fails for a transient reason (a service unavailable) is retried from the call that
        failed: after RETRY_BACKOFF_MS × attempt, then every RETRY_STALLED_MS once
        RETRY_ATTEMPTS have failed, for as long as it fails (each failure goes to
        ``on_step_failed``). Any other failure halts the table. ``attempt`` and ``delay_ms``: a
        retry of a step that already failed (the hand's start)."""
        hand = self.hand

        def run(attempt: int = attempt) -> None:
            if self.hand is not hand or self.phase != PLAYING:
                return
            try:
                step()
            except Exception as exc:
                if self.failed(attempt, exc):
                    delay = (
                        RETRY_BACKOFF_MS * attempt if attempt < RETRY_ATTEMPTS else RETRY_STALLED_MS
                    )
                    self.scheduler.call_later(delay, lambda: run(attempt + 1))
                return
            self.after_engine()

        steps = self.inline_steps
        if steps is not None and not delay_ms:
            steps.append(run)  # run by run_steps: one scheduler round trip less
        else:
            self.scheduler.call_later(delay_ms, run)

    def detach(self) -> None:
        """Another replica took the table over: this session stops where it is. Its timers,
        deferred steps and retries find the phase changed and do nothing (no service call, no
        event); the table lives on from its log elsewhere."""
        self.phase = DETACHED

    def next_hand(self) -> None:
        """Deal the next hand, once the last hand's answer is in and applied (破产); a table
        all of whose players went bankrupt ends (``players_left``)."""
        if self.phase != BETWEEN_HANDS:
            return
        if not self.apply_hand_answer():
            if self.limit_reached() == "deadline":  # no hand will be dealt: no answer needed
                self.finish("deadline")
                return
            self.scheduler.call_later(ANSWER_POLL_MS, self.next_hand)
            return
        reason = self.limit_reached()
        if reason:
            self.finish(reason)
            return
        self.start_hand()

    def apply_hand_answer(self) -> bool:
        """Matchmaking's answer to the last hand applied (:func:`bankruptcy.apply_hand_answer`)."""
        return bankruptcy.apply_hand_answer(self)

    def seat_bankrupt(self, seat: int, bot_id: str) -> None:
        """破产: the bot ``bot_id`` takes ``seat`` (:func:`bankruptcy.seat_bankrupt`)."""
        bankruptcy.seat_bankrupt(self, seat, bot_id)

    def take_bankrupt_seat(self, event: SeatBankrupt) -> None:
        """The seat's state after ``event`` (:func:`bankruptcy.take_bankrupt_seat`)."""
        bankruptcy.take_bankrupt_seat(self, event)

    def finish(self, reason: str) -> None:
        self.phase = FINISHED
        self.finish_reason = reason
        self.emit(
            TableFinished(
                hands_played=self.hands_played,
                chips=tuple(s.chips for s in self.seats),
                reason=reason,
                rounds_played=self.rounds_played,
                garden_stacks=self.garden_stacks(),
            )
        )
        self.report("finished", {"hands_played": self.hands_played})

    # --- a player's requests -----------------------------------------------------------------
    def check_double_card(self, seat: int) -> int:
        """Whether ``seat`` may play a 加倍卡 now (:func:`double_cards.check`)."""
        return double_cards.check(self, seat)

    def play_double_card(self, seat: int) -> int:
        """``seat`` plays a 加倍卡 for the next hand (:func:`double_cards.play`)."""
        return double_cards.play(self, seat)

    def act(self, seat: int, action: SeatRequest, request_id: str = "") -> None:
        """A player's own action (not a bot's; ``request_id``: its Act, recorded with it):
        applied, then 托管 ends for the seat. :class:`ResumePlay` ends 托管 without acting
        (:func:`decisions.resume`)."""
        if isinstance(action, ResumePlay):
            decisions.resume(self, seat)
            return
        hand = self.running_hand()
        s = self.seats[seat]
        if s.left:
            raise FailedPrecondition(f"seat {seat} left the table", reason="SEAT_LEFT")
        presence.came_back(self, seat)  # 掉线: a call before the hand's end keeps the seat
        hand.act(seat, action, request_id=request_id)
        s.timeouts_in_row = 0
        if s.auto_play:
            s.auto_play = False
            # a 托管 the others were never told about ends unannounced too
            hidden = seat in self.auto_play_hidden
            self.auto_play_hidden.discard(seat)
            self.emit(decisions.auto_play_change(self, seat, False, private=hidden))
        self.after_engine()

    def resume(self, seat: int) -> None:
        """The player ends 托管 now (see :func:`decisions.resume`)."""
        decisions.resume(self, seat)

    def leave(self, seat: int) -> int:
        """The player leaves (see :func:`escape.leave`); returns the penalty paid."""
        return escape.leave(self, seat)

    def seat_view(self, viewer: int | None) -> views.SeatView:
        """What ``viewer`` (a seat, or None for a spectator) may know now."""
        return views.seat_view(self, viewer)

    def timer_ms(self, seat: int, ms: int) -> int:
        """The engine's per-seat timer (HandEngine.timer_ms): a seat on 托管 is answered by the
        bot after ``auto_play_delay_ms``, so its prompt's deadline says so; past the table's
        deadline, at most the overtime timer (:meth:`timer_cap`)."""
        s = self.seats[seat]
        if s.auto_play and not (s.bot or s.left):
            return self.config.auto_play_delay_ms
        return self.timer_cap(ms)

    def running_hand(self) -> HandEngine:
        if self.phase != PLAYING or self.hand is None or self.hand.finished:
            raise FailedPrecondition(
                f"no hand is running (table is {self.phase})", reason="NO_HAND"
            )
        return self.hand


def _hand_label(value: int) -> str:
    try:
        return HandType(value).label
    except ValueError:
        return str(value)
