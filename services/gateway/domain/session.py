"""A table session (牌桌): four seats, a ruleset, a stake and successive hands (RULES §2, §9-§11).

:class:`TableSession` owns the seats (players or bots), the dealer rotation and the 荒番 counter
(both taken from scoring's bookkeeping of each hand; the counter is reset when a player leaves),
the chips won so far, the hand and round (圈, :mod:`services.gateway.domain.rounds`) counts, and
runs each hand through :class:`HandEngine`. A table ends after ``max_hands`` hands or
``max_rounds`` rounds (whichever comes first; 0 = no limit), or when its players have left.

Open seats (空座: no player assigned, not a bot; anyone may join them) are waited for at most
``seat_wait_ms`` (0 = forever): the deadline is fixed when the table starts, published as
``seat_deadline_ms`` in ``table_started`` and in the view while the table waits, and a seat
still open when it passes ends the table before any hand (``table_finished`` with reason
``seats_not_filled``, reported like any finished table); the seat can no longer be joined.

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

Every fact goes through ``emit(kind, data) -> sequence`` (the table's event log); settled hands
are handed to ``report(kind, data)`` (the matchmaking outbox).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from services.gateway.domain.clock import Scheduler, Timer
from services.gateway.domain.hand import (
    CLAIM,
    OWN_TURN,
    ROB_KONG,
    SWAP,
    HandConfig,
    HandEngine,
    Pending,
    prompt_json,
)
from services.gateway.domain.ports import RulesPort, ScoringPort, Settlement, WallPort
from services.gateway.domain.rounds import deal_advance, rounds_completed
from shared.errors import FailedPrecondition, InvalidArgument
from shared.hand.hand_type import HandType
from shared.ruleset import Ruleset
from shared.table import Action, ClaimOptions, DeclareReady, OwnTurnOptions, Pass, Win

NUM_SEATS = 4

# A policy chooses an action for the seat of a pending decision, from what that seat may see of
# the hand (a bot builds its own view from HandEngine.snapshot(), hiding other seats' tiles);
# bots, 托管 and stand-ins for players who left use one.
Policy = Callable[[Pending, HandEngine], Action]


@dataclass(frozen=True, slots=True)
class ResumePlay:
    """A player's request to end 托管 (auto-play) now (:meth:`TableSession.resume`)."""


# An engine step whose service call fails is retried after RETRY_BACKOFF_MS × attempt, and once
# RETRY_ATTEMPTS have failed (the table is stalled) every RETRY_STALLED_MS until it goes through.
RETRY_ATTEMPTS = 5
RETRY_BACKOFF_MS = 500
RETRY_STALLED_MS = 5_000

WAITING, PLAYING, BETWEEN_HANDS, FINISHED = "waiting", "playing", "between_hands", "finished"
DETACHED = "detached"  # another replica runs the table now: this session does nothing more


@dataclass
class Seat:
    player_id: str = ""
    display_name: str = ""
    bot: bool = False
    joined: bool = False
    left: bool = False
    auto_play: bool = False  # 托管
    timeouts_in_row: int = 0
    chips: int = 0

    @property
    def open(self) -> bool:
        return not self.bot and not self.player_id

    @property
    def played_by_bot(self) -> bool:
        return self.bot or self.left or self.auto_play


@dataclass
class SessionConfig:
    table_id: str
    ruleset: Ruleset
    ruleset_name: str
    overrides: dict[str, str]
    stake: int
    max_hands: int = 0
    max_rounds: int = 0  # 0: no limit in rounds (a 逛花园 ruleset plays garden_rounds)
    tag: str = ""
    first_dealer: int | None = None
    # Timers (ms); None = from the ruleset. Tests shorten them here.
    discard_ms: int | None = None
    claim_ms: int | None = None
    bot_delay_ms: int = 0  # how long a bot "thinks"
    auto_play_delay_ms: int = 0  # how long 托管 waits before acting
    between_hands_ms: int = 0
    # How long the table waits for its open seats before it ends (0 = forever).
    seat_wait_ms: int = 0
    # A bot's decision prompted while another bot's turn runs is made in the same scheduler
    # callback (with bot_delay_ms 0): for in-process play that has the scheduler to itself
    # (the arena, benchmarks). Off in the gateway, whose table callbacks share worker threads:
    # there a table of bots yields after every decision.
    chain_bot_decisions: bool = False


@dataclass
class Ports:
    wall: WallPort
    rules: RulesPort
    scoring: ScoringPort


@dataclass
class Stats:
    """Counters the server turns into metrics."""

    hands: int = 0
    draws: int = 0
    timeouts: int = 0
    wins_by_hand: dict[str, int] = field(default_factory=dict)


class TableSession:
    """One table. All methods must be called under the table's lock (the runtime's job)."""

    def __init__(
        self,
        config: SessionConfig,
        seats: list[Seat],
        *,
        ports: Ports,
        scheduler: Scheduler,
        emit: Callable[[str, dict[str, Any]], int],
        report: Callable[[str, dict[str, Any]], None],
        policy: Policy,
        rng: random.Random | None = None,
        on_step_failed: Callable[[int, Exception], None] | None = None,
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
        # Told of every failed engine step (the attempt, the error): the server logs and counts.
        self.on_step_failed = on_step_failed
        timers = config.ruleset.timers
        self.discard_ms = (
            config.discard_ms if config.discard_ms is not None else timers.discard_seconds * 1000
        )
        self.claim_ms = (
            config.claim_ms if config.claim_ms is not None else timers.claim_seconds * 1000
        )
        self.auto_play_after = int(timers.auto_play_after)
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
        # Unix ms by which the open seats must be taken (0 = no deadline); see start().
        self.seat_deadline_ms = 0
        self._seat_timer: Timer | None = None
        # While a bot acts (:meth:`_bot`): the engine steps its action deferred, run as soon as
        # it returns instead of through the scheduler (see :meth:`_defer`).
        self._bot_steps: list[Callable[[], None]] | None = None
        # Seats put on 托管 by a missed claim or 抢杠, not yet announced to the others (see
        # :meth:`_timeout`): told at the seat's next own turn.
        self.auto_play_hidden: set[int] = set()

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

    def _limit_reached(self) -> str:
        """Why the table ends now between hands ("" = it goes on)."""
        if self.config.max_hands and self.hands_played >= self.config.max_hands:
            return "max_hands"
        if self.max_rounds and self.rounds_played >= self.max_rounds:
            return "max_rounds"
        if self.had_humans and all(s.bot or s.left for s in self.seats):
            return "players_left"
        return ""

    # --- events ----------------------------------------------------------------------------
    def emit(self, kind: str, data: dict[str, Any]) -> int:
        """Emit a fact of the table; while a hand runs it carries the hand's id and number."""
        hand = self.hand
        if hand is not None and not hand.finished:
            data = {"hand_id": hand.hand_id, "hand_number": hand.config.hand_number, **data}
        return self._emit(kind, data)

    def engine_emit(self, kind: str, data: dict[str, Any]) -> int:
        """Emit a fact of the running hand (the engine's events carry the hand's id and number
        already, 逛花园 stacks included: HandConfig.garden_stacks); a prompt schedules the seat's
        decision (bot, 托管 or timer)."""
        seq = self._emit(kind, data)
        if kind == "prompt":
            seat = data["seat"]
            if data["kind"] == OWN_TURN and seat in self.auto_play_hidden:
                self.auto_play_hidden.discard(seat)
                self.emit("seat_changed", self._auto_play_change(seat, True))
            self._schedule_decision(seat, seq, data["deadline_ms"])
        return seq

    # --- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Announce the table; start the first hand once no seat is open. With open seats and
        a ``seat_wait_ms``, the deadline for taking them is fixed now and announced."""
        if self.config.seat_wait_ms > 0 and any(s.open for s in self.seats):
            self.seat_deadline_ms = self.scheduler.now_ms() + self.config.seat_wait_ms
        data: dict[str, Any] = {
            "ruleset": self.config.ruleset_name,
            "overrides": self.config.overrides,
            "stake": self.config.stake,
            "seats": [
                {"player_id": s.player_id, "display_name": s.display_name, "bot": s.bot}
                for s in self.seats
            ],
            "max_hands": self.config.max_hands,
            "max_rounds": self.max_rounds,
            "tag": self.config.tag,
        }
        if self.seat_deadline_ms:
            data["seat_deadline_ms"] = self.seat_deadline_ms
        self.emit("table_started", data)
        self.resume_seat_wait()
        self._maybe_begin()

    def resume_seat_wait(self) -> None:
        """Arm the timer of the open seats' deadline (at start, or on a table restored from its
        log while it still waits: the same absolute deadline, at once if it has passed)."""
        if self.seat_deadline_ms and self.phase == WAITING and self._seat_timer is None:
            delay = max(0, self.seat_deadline_ms - self.scheduler.now_ms())
            self._seat_timer = self.scheduler.call_later(delay, self._seat_wait_over)

    def _seat_wait_over(self) -> None:
        self._seat_timer = None
        if self.phase == WAITING and any(s.open for s in self.seats):
            self._finish("seats_not_filled")

    def _maybe_begin(self) -> None:
        if self.phase == WAITING and not any(s.open for s in self.seats):
            if self._seat_timer is not None:
                self._seat_timer.cancel()
                self._seat_timer = None
            self.phase = BETWEEN_HANDS
            self._start_hand()

    def join(self, seat: int, player_id: str, display_name: str) -> None:
        s = self.seats[seat]
        if self.phase == FINISHED and s.open:
            why = f" ({self.finish_reason})" if self.finish_reason else ""
            raise FailedPrecondition(
                f"the table has finished{why}: seat {seat} can no longer be taken",
                reason="TABLE_FINISHED",
                finish_reason=self.finish_reason,
            )
        if s.bot:
            raise FailedPrecondition(f"seat {seat} is a bot seat", reason="SEAT_TAKEN")
        if s.player_id and s.player_id != player_id:
            raise FailedPrecondition(f"seat {seat} belongs to another player", reason="SEAT_TAKEN")
        if s.left:
            raise FailedPrecondition(f"seat {seat}'s player left the table", reason="SEAT_LEFT")
        first = not s.joined
        s.player_id, s.joined = player_id, True
        s.display_name = display_name or s.display_name or player_id
        if first:
            self.emit(
                "seat_changed",
                {"seat": seat, "player_id": player_id, "bot": False, "reason": "joined"},
            )
        self._maybe_begin()

    def _hand_config(self) -> HandConfig:
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
        )

    def _start_hand(self) -> None:
        self.phase = PLAYING
        self.left_during_hand = False
        self.hand = HandEngine(
            self._hand_config(),
            wall=self.ports.wall,
            rules=self.ports.rules,
            scoring=self.ports.scoring,
            emit=self.engine_emit,
            now_ms=self.scheduler.now_ms,
            defer=self._defer,
            timer_ms=self._timer_ms,
        )
        hand = self.hand
        try:
            hand.start()
        except Exception as exc:  # a service call failed: go on from it later (see _defer)
            if self.on_step_failed is not None:
                self.on_step_failed(1, exc)
            self._defer(hand.resume, attempt=2, delay_ms=RETRY_BACKOFF_MS)
            return
        self._after_engine()

    def _after_engine(self) -> None:
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
            },
        )
        self.phase = BETWEEN_HANDS
        reason = self._limit_reached()
        if reason:
            self._finish(reason)
        else:
            self.scheduler.call_later(self.config.between_hands_ms, self._next_hand)

    def _defer(self, step: Callable[[], None], *, attempt: int = 1, delay_ms: int = 0) -> None:
        """Run an engine step after the current call returns (an action is acknowledged as
        soon as it is applied and logged; claim options, draws and scoring follow). The step is
        the engine's ``resume``, which goes on from the last point it recorded, so a step that
        fails (a service unavailable) is retried from the call that failed: after
        RETRY_BACKOFF_MS × attempt, then every RETRY_STALLED_MS once RETRY_ATTEMPTS have
        failed, for as long as it fails (a table never gives up on its hand silently: each
        failure goes to ``on_step_failed``). ``attempt`` and ``delay_ms``: a retry of a step
        that already failed (the hand's start)."""
        hand = self.hand

        def run(attempt: int = attempt) -> None:
            if self.hand is not hand or self.phase != PLAYING:
                return
            try:
                step()
            except Exception as exc:
                if self.on_step_failed is not None:
                    self.on_step_failed(attempt, exc)
                delay = RETRY_BACKOFF_MS * attempt if attempt < RETRY_ATTEMPTS else RETRY_STALLED_MS
                self.scheduler.call_later(delay, lambda: run(attempt + 1))
                return
            self._after_engine()

        steps = self._bot_steps
        if steps is not None and not delay_ms:
            # A bot's action (a scheduler callback itself): nobody waits for an acknowledgement,
            # so the step runs right after it, which is when the scheduler would have run it —
            # nothing else of this table can be due in between: every other decision of the
            # moment has been made (the engine steps on only then) and what is left queued for
            # it (timers of decisions already made) does nothing. One scheduler round trip less
            # per turn.
            steps.append(run)
        else:
            self.scheduler.call_later(delay_ms, run)

    def detach(self) -> None:
        """Another replica took the table over: this session stops where it is. Its timers,
        deferred steps and retries find the phase changed and do nothing (no service call, no
        event); the table lives on from its log elsewhere."""
        self.phase = DETACHED

    def _next_hand(self) -> None:
        if self.phase == BETWEEN_HANDS:
            self._start_hand()

    def _finish(self, reason: str) -> None:
        self.phase = FINISHED
        self.finish_reason = reason
        data: dict[str, Any] = {
            "hands_played": self.hands_played,
            "chips": [s.chips for s in self.seats],
            "reason": reason,
            "rounds_played": self.rounds_played,
        }
        stacks = self.garden_stacks()
        if stacks is not None:
            data["garden_stacks"] = list(stacks)
        self.emit("table_finished", data)
        self.report("finished", {"hands_played": self.hands_played})

    # --- decisions: players, bots, timers --------------------------------------------------
    def act(self, seat: int, action: Action | ResumePlay) -> None:
        """A player's own action (not a bot's): applied, then 托管 ends for the seat.
        :class:`ResumePlay` ends 托管 without acting (:meth:`resume`)."""
        if isinstance(action, ResumePlay):
            self.resume(seat)
            return
        hand = self._running_hand()
        s = self.seats[seat]
        if s.left:
            raise FailedPrecondition(f"seat {seat} left the table", reason="SEAT_LEFT")
        hand.act(seat, action)
        s.timeouts_in_row = 0
        if s.auto_play:
            s.auto_play = False
            # a 托管 the others were never told about ends unannounced too
            hidden = seat in self.auto_play_hidden
            self.auto_play_hidden.discard(seat)
            self.emit("seat_changed", self._auto_play_change(seat, False, private=hidden))
        self._after_engine()

    def resume(self, seat: int) -> None:
        """The player ends 托管 (auto-play) now, between hands or with no decision of its own
        pending too. A decision pending (the bot would answer it soon) gets the seat's normal
        timer from now, and the ``seat_changed`` event carries its new deadline."""
        s = self.seats[seat]
        if s.left:
            raise FailedPrecondition(f"seat {seat} left the table", reason="SEAT_LEFT")
        if not s.auto_play:
            raise FailedPrecondition(
                f"seat {seat} is not on 托管 (auto-play): nothing to resume",
                reason="NOT_AUTO_PLAY",
            )
        s.auto_play = False
        s.timeouts_in_row = 0
        data: dict[str, Any] = {
            "seat": seat,
            "player_id": s.player_id,
            "bot": False,
            "auto_play": False,
            "reason": "auto_play_off",
        }
        if seat in self.auto_play_hidden:  # never announced to the others: ends unannounced
            self.auto_play_hidden.discard(seat)
            data["private"] = True
        hand = self.hand
        p = hand.pending.get(seat) if hand is not None and self.phase == PLAYING else None
        if p is not None:
            now = self.scheduler.now_ms()
            if p.kind != SWAP:  # 换牌's window keeps its deadline, the same for every seat
                ms = self.discard_ms if p.kind == OWN_TURN else self.claim_ms
                p.deadline_ms = now + ms
            data["deadline_ms"] = p.deadline_ms
            if p.kind in (CLAIM, ROB_KONG):  # the others must not learn a claim is pending
                data["deadline_private"] = True
            seq = p.sequence
            self.scheduler.call_later(max(0, p.deadline_ms - now), lambda: self._timeout(seat, seq))
        self.emit("seat_changed", data)

    def _timer_ms(self, seat: int, ms: int) -> int:
        """The engine's per-seat timer (HandEngine.timer_ms): a seat on 托管 is answered by the
        bot after ``auto_play_delay_ms``, so its prompt's deadline says so."""
        s = self.seats[seat]
        if s.auto_play and not (s.bot or s.left):
            return self.config.auto_play_delay_ms
        return ms

    def _auto_play_change(self, seat: int, on: bool, *, private: bool = False) -> dict[str, Any]:
        """The ``seat_changed`` of 托管 starting or ending; ``private``: for the seat only."""
        data: dict[str, Any] = {
            "seat": seat,
            "player_id": self.seats[seat].player_id,
            "bot": False,
            "auto_play": on,
            "reason": "auto_play_on" if on else "auto_play_off",
        }
        if private:
            data["private"] = True
        return data

    def _running_hand(self) -> HandEngine:
        if self.phase != PLAYING or self.hand is None or self.hand.finished:
            raise FailedPrecondition(
                f"no hand is running (table is {self.phase})", reason="NO_HAND"
            )
        return self.hand

    def _schedule_decision(self, seat: int, seq: int, deadline_ms: int) -> None:
        s = self.seats[seat]
        if s.bot or s.left:
            steps, delay = self._bot_steps, self.config.bot_delay_ms
            if steps is not None and delay <= 0 and self.config.chain_bot_decisions:
                steps.append(lambda: self._bot_decides(seat, seq))  # see _bot
            else:
                self.scheduler.call_later(delay, lambda: self._bot(seat, seq))
        elif s.auto_play:
            self.scheduler.call_later(self.config.auto_play_delay_ms, lambda: self._bot(seat, seq))
        else:
            delay = max(0, deadline_ms - self.scheduler.now_ms())
            self.scheduler.call_later(delay, lambda: self._timeout(seat, seq))

    def _current(self, seat: int, seq: int) -> Pending | None:
        hand = self.hand
        if self.phase != PLAYING or hand is None or hand.finished:
            return None
        p = hand.pending.get(seat)
        return p if p is not None and p.sequence == seq else None

    def _bot(self, seat: int, seq: int) -> None:
        """Scheduler callback: a bot (or 托管, or a stand-in for a player who left) decides.
        The engine steps its action leads to run right after it in this callback (see
        :meth:`_defer`), and with ``chain_bot_decisions`` so do the decisions of bot seats those
        steps prompt: a table of bots then plays on without a scheduler round trip per
        decision, in the order the scheduler would have run them."""
        steps: list[Callable[[], None]] = [lambda: self._bot_decides(seat, seq)]
        self._bot_steps = steps
        try:
            for step in steps:  # grows while it runs
                step()
        finally:
            self._bot_steps = None

    def _bot_decides(self, seat: int, seq: int) -> None:
        p = self._current(seat, seq)
        if p is None or not self.seats[seat].played_by_bot:
            return
        hand = self.hand
        assert hand is not None
        try:
            action = self.policy(p, hand)
            hand.act(seat, action, auto=True)
        except FailedPrecondition:
            hand.act(seat, hand.default_action(seat), auto=True)
        self._after_engine()

    def _timeout(self, seat: int, seq: int) -> None:
        p = self._current(seat, seq)
        if p is None:
            return
        hand = self.hand
        assert hand is not None
        s = self.seats[seat]
        if p.kind == SWAP:  # not swapping in time is no fault: the seat keeps its tiles
            hand.act(seat, Pass(), auto=True)
            self._after_engine()
            return
        s.timeouts_in_row += 1
        self.stats.timeouts += 1
        # A missed claim or 抢杠 tells that the seat could claim or win: its timed_out goes to
        # the seat only (events.project), and so does the 托管 it starts, announced to the
        # others at the seat's next own turn (engine_emit), when 托管 plays in the open. A
        # missed own turn is public, and so is the 托管 it starts.
        secret = p.kind in (CLAIM, ROB_KONG)
        self.emit("timed_out", {"seat": seat, "kind": p.kind, "in_a_row": s.timeouts_in_row})
        if s.timeouts_in_row >= self.auto_play_after and not s.auto_play:
            s.auto_play = True
            if secret:
                self.auto_play_hidden.add(seat)
            self.emit("seat_changed", self._auto_play_change(seat, True, private=secret))
        hand.act(seat, hand.default_action(seat), auto=True)
        self._after_engine()

    # --- leaving ---------------------------------------------------------------------------
    def leave(self, seat: int) -> int:
        """The player leaves. In a running hand the seat pays the escape penalty (RULES §9) and a
        bot finishes the hand for it. The 荒番 counter is reset (RULES §10). Returns the
        penalty paid."""
        s = self.seats[seat]
        if s.bot:
            raise FailedPrecondition(f"seat {seat} is a bot seat", reason="BOT_SEAT")
        if s.left:
            raise FailedPrecondition(f"seat {seat} already left", reason="SEAT_LEFT")
        penalty = 0
        hand = self.hand
        # A hand whose start is still being retried (the wall unavailable) has dealt nothing:
        # leaving then is leaving between hands.
        in_hand = self.phase == PLAYING and hand is not None and not hand.finished
        in_hand = in_hand and bool(hand.hand_id)  # type: ignore[union-attr]
        # Scoring first: if it fails the Leave fails with nothing changed, and can be retried.
        st = (
            self.ports.scoring.settle_escape(
                self.config.ruleset_name,
                self.config.overrides,
                self.config.stake,
                seat,
                self.dealer,
                0,  # the leave resets the 荒番 counter
                garden_stacks=self.garden_stacks(),
            )
            if in_hand
            else None
        )
        s.left = True
        self.huangfan = 0
        if st is not None and hand is not None:
            self.left_during_hand = True
            hand.huangfan_reset = True  # the hand's result tells the reset counter
            for i, p in enumerate(st.payments):
                self.seats[i].chips += p
            penalty = -st.payments[seat]
            stacks = self.garden_stacks()
            if stacks is not None:  # the hand settles on the stacks left after the penalty
                hand.config = replace(hand.config, garden_stacks=stacks)
            self.emit(
                "hand_result",
                {
                    **({"garden_stacks": list(stacks)} if stacks is not None else {}),
                    "outcome": "escape",
                    "winners": [],
                    "payments": list(st.payments),
                    "house": st.house,
                    "breakdown": [
                        {"seat": b.seat, "code": b.code, "label": b.label, "amount": b.amount}
                        for b in st.breakdown
                    ],
                    "revealed": [],
                    "escaped_seat": seat,
                    "next_dealer": self.dealer,
                    "next_huangfan": 0,
                },
            )
            self.report(
                "hand",
                {
                    "hand_id": f"{hand.hand_id}/escape/{seat}",
                    "payments": list(st.payments),
                    "house": st.house,
                    "escaped_seat": seat,
                },
            )
        self.emit(
            "seat_changed",
            {"seat": seat, "player_id": s.player_id, "bot": True, "left": True, "reason": "left"},
        )
        if hand is not None and not hand.finished and seat in hand.pending:
            owed = hand.pending[seat]
            self.scheduler.call_later(
                self.config.bot_delay_ms, lambda: self._bot(seat, owed.sequence)
            )
        if self.phase in (BETWEEN_HANDS, WAITING) and all(x.bot or x.left for x in self.seats):
            self._finish("players_left")
        return penalty

    # --- views -----------------------------------------------------------------------------
    def seat_view(self, viewer: int | None) -> dict[str, Any]:
        """What ``viewer`` (a seat, or None for a spectator) may know now."""
        hand = self.hand
        seats = []
        for i, s in enumerate(self.seats):
            d: dict[str, Any] = {
                "seat": i,
                "player_id": s.player_id,
                "display_name": s.display_name,
                "bot": s.bot or s.left,
                # a 托管 started by a missed claim is the seat's own until announced
                "auto_play": s.auto_play and (viewer == i or i not in self.auto_play_hidden),
                "left": s.left,
                "chips": s.chips,
            }
            if self.garden:
                d["garden_stack"] = self.garden_start + s.chips
            if hand is not None:
                h = hand.seats[i]
                d["concealed_count"] = sum(h.counts)
                d["melds"] = [
                    m.to_json()
                    if (m.kind.name != "CONCEALED_KONG" or viewer == i or hand.finished)
                    else {"kind": "concealed_kong", "tiles": ""}
                    for m in h.melds
                ]
                d["flowers"] = list(h.flowers)
                d["discards"] = list(h.discards)
                d["ready"] = h.ready
                if viewer == i:
                    d["concealed"] = h.concealed_tiles()
                    d["drawn"] = hand.drawn.get(i)
            seats.append(d)
        view: dict[str, Any] = {
            "table_id": self.config.table_id,
            "phase": self.phase,
            "viewer": viewer,
            "seats": seats,
            "hands_played": self.hands_played,
            "huangfan": self.huangfan,
            "dealer": self.dealer,
            "max_rounds": self.max_rounds,
            "rounds_played": self.rounds_played,
            "garden": self.garden,
            # while the table waits for open seats: when it gives up on them (0 = never)
            "seat_deadline_ms": self.seat_deadline_ms if self.phase == WAITING else 0,
        }
        if hand is not None:
            # Whose turn it is and its deadline are public; a claim, 抢杠 or swap deadline only
            # to the seat prompted (the others must not learn that a claim window is open).
            turn = next((p for p in hand.pending.values() if p.kind == OWN_TURN), None)
            own = hand.pending.get(viewer) if viewer is not None else None
            shown = turn if turn is not None else own
            view["hand"] = {
                "hand_id": hand.hand_id,
                "hand_number": hand.config.hand_number,
                "dealer": hand.dealer,
                "dice": list(hand.dice),
                "commitment": hand.commitment,
                "kaibao": hand.kaibao,
                "huangfan": hand.huangfan,
                "tiles_left": hand.remaining,
                "to_act": turn.seat if turn is not None else None,
                "deadline_ms": shown.deadline_ms if shown is not None else 0,
                "last_discard": hand.last.tile if hand.last.kind.name == "DISCARD" else None,
                "last_discard_seat": hand.last.seat if hand.last.kind.name == "DISCARD" else None,
                "finished": hand.finished,
            }
            view["prompt"] = prompt_json(own) if own is not None else None
        return view


def _hand_label(value: int) -> str:
    try:
        return HandType(value).label
    except ValueError:
        return str(value)


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
