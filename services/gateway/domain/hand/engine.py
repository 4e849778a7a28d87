"""The hand loop (RULES §3-§9): :class:`HandEngine` drives one hand through its ports.

NewHand (the seed commitment is published), the deal and 补花 (:mod:`.deal`), 换牌 when the
ruleset has it (:mod:`.swap`), then the loop of RULES §4 — draw (a flower is exposed and
replaced from the tail), the own-turn options from rules, the seat's action, the discard, the
claim window and its resolution (:mod:`.claims`), 敲 locks and 漏胡 marks (decided by rules,
kept here), kongs with replacement draws and the 抢杠 window on an added kong, 八花齐, and the
drawn hand (流局) when a seat must draw from an empty wall; at the end scoring settles and the
wall reveals its seed (:mod:`.settlement`).

The engine is pure and synchronous: it never sleeps and never reads a clock except through
``now_ms``. Every state change is the result of :meth:`HandEngine.act` with a concrete action
(timeouts, bots and 托管 are turned into concrete actions by the table session), and every fact
is published as a typed event (:mod:`services.gateway.domain.events.kinds`) through ``emit`` —
the table's event log. Actions are checked against the options the engine already holds
(:mod:`.checks`), so no extra rules call is needed to validate one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final

from services.gateway.domain.events.kinds import (
    OWN_TURN,
    SWAP,
    ActionTaken,
    HandStarted,
    MeldDeclared,
    MeldFact,
    ReadyDeclared,
    TableEvent,
    TileDiscarded,
    TileDrawn,
)
from services.gateway.domain.hand import claims, deal, settlement, swap
from services.gateway.domain.hand.checks import check_claim, check_own_turn, fmt
from services.gateway.domain.hand.prompts import prompt_event
from services.gateway.domain.hand.state import (
    STEP_CLOSE_WINDOW,
    STEP_DEAL,
    STEP_DEAL_FLOWERS,
    STEP_DRAW,
    STEP_NEW_HAND,
    STEP_NONE,
    STEP_PROMPT,
    STEP_RESOLVE,
    STEP_WIN,
    STEP_WINDOW,
    HandConfig,
    Pending,
    SeatHand,
)
from services.gateway.domain.ports import RulesPort, ScoringPort, Settlement, WallPort
from shared import tiles as T
from shared.dice import dice_huangfan_bonus, is_kaibao
from shared.errors import FailedPrecondition
from shared.hand.hand_type import HandType
from shared.melds import Meld, MeldKind
from shared.table import (
    NUM_SEATS,
    Action,
    AddedKong,
    ClaimOptions,
    ConcealedKong,
    Decision,
    DeclareReady,
    Discard,
    LastAction,
    LastActionKind,
    OwnTurnOptions,
    Pass,
    TableSnapshot,
    TileSwap,
    Win,
    WinOption,
)
from shared.tile_set import tile_set_of

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_HAND_EIGHT_FLOWERS: Final = HandType.EIGHT_FLOWERS
_LAST_ADDED_KONG: Final = LastActionKind.ADDED_KONG
_LAST_DEAL: Final = LastActionKind.DEAL
_LAST_DISCARD: Final = LastActionKind.DISCARD
_LAST_DRAW: Final = LastActionKind.DRAW
_LAST_REPLACEMENT_DRAW: Final = LastActionKind.REPLACEMENT_DRAW
_MELD_ADDED_KONG: Final = MeldKind.ADDED_KONG
_MELD_CONCEALED_KONG: Final = MeldKind.CONCEALED_KONG
_MELD_PONG: Final = MeldKind.PONG

# isinstance() tuples built once (``A | B`` in a call builds a union object every time).
_DISCARD_ACTIONS: Final = (Discard, DeclareReady)
# The snapshot and the last action (named tuples) from their fields as one tuple, by
# tuple.__new__ directly: a named tuple's own __new__ is Python code, run on every decision.
_new_snapshot: Final = functools.partial(tuple.__new__, TableSnapshot)
_new_last: Final = functools.partial(tuple.__new__, LastAction)

Emit = Callable[[TableEvent], int]


class HandEngine:
    """The state machine of one hand. See the module docstring."""

    def __init__(
        self,
        config: HandConfig,
        *,
        wall: WallPort,
        rules: RulesPort,
        scoring: ScoringPort,
        emit: Emit,
        now_ms: Callable[[], int],
        defer: Callable[[Callable[[], None]], None] | None = None,
        timer_ms: Callable[[int, int], int] | None = None,
        timer_cap: Callable[[int], int] | None = None,
        window_hold: Callable[[], int] | None = None,
        defer_later: Callable[[Callable[[], None], int], None] | None = None,
    ) -> None:
        self.config = config
        self.ruleset = config.ruleset
        self.reserved_tiles = int(config.ruleset.table.reserved_tiles)
        self.tile_set = tile_set_of(config.ruleset)
        self.dragons_bonus = self.tile_set.dragons_bonus  # is_bonus's test
        self.wild_kind: int | None = None  # 翻百搭: the kind that is 百搭 this hand
        self.flipped: list[int] = []  # the tiles turned up for it (set aside, indicator last)
        self.wall = wall
        self.rules = rules
        self.scoring = scoring
        self._emit = emit
        self.now_ms = now_ms
        self.defer = defer
        # The seat's effective timer: (seat, the ruleset's ms) -> ms until its decision is due
        # (a seat on 托管 is answered sooner); None = the ruleset's timers for every seat.
        self.timer_ms = timer_ms
        # The timer of a decision of every seat at once (换牌's window, one deadline for all):
        # the ruleset's ms -> ms (shorter past the table's deadline); None = the ruleset's.
        self.timer_cap = timer_cap
        # The hold of the claim window on each discard and added kong (RULES §4 "Claim
        # windows"): () -> ms, drawn once per window (0: none, a table of bots); None = none.
        # The window ends no sooner than the hold, whether anyone may answer it or not, and
        # what follows it runs through ``defer_later(step, ms)`` (None: at once, as a replay).
        self.window_hold = window_hold
        self.defer_later = defer_later
        self.window_held_ms = 0  # the hold drawn for the window about to open
        self.window_until_ms = 0  # when the open window's hold runs out (0: no hold)
        self.dealer = config.dealer
        self.number = config.hand_number
        self.seats = [SeatHand() for _ in range(NUM_SEATS)]
        self.hand_id = ""
        self.dice: tuple[int, int] = (0, 0)
        self.commitment = ""
        self.kaibao = False
        self.huangfan = config.huangfan  # 荒番 of this hand: the counter, plus the dice's
        self.remaining = 0
        self.turn = config.dealer
        self.last = LastAction(_LAST_DEAL, config.dealer)
        self.first_go_around = True
        self.claim_counts = [[0] * NUM_SEATS for _ in range(NUM_SEATS)]
        self.claims_made: list[tuple[int, int, bool]] = []
        # claim_counts as the snapshot's tuples, rebuilt when a claim changes them
        self._claim_counts_tuple = tuple(map(tuple, self.claim_counts))
        self.drawn: dict[int, int] = {}  # the tile each seat just drew (for 摸打 / timeouts)
        self.replacement_draw = False  # the seat to act drew from the tail (杠开)
        self.replaced_flower = False  # … and that replacement replaced a flower, not a kong
        self.pending: dict[int, Pending] = {}
        self.window: str | None = None  # CLAIM or ROB_KONG while a window is open
        self.claims: dict[int, Action] = {}
        self.window_options: dict[int, ClaimOptions] = {}
        self.finished = False
        self.settlement: Settlement | None = None
        self.outcome = ""  # "win" or "draw"
        self.robbed_tile: int | None = None
        self.actions = 0
        # Wall calls that hand out tiles (draws, replacement draws, swaps) applied so far: the
        # next one is number wall_calls + 1, the same when it is retried (its request id).
        self.wall_calls = 0
        # 荒番 counter reset by a player leaving during the hand (RULES §10): the result's
        # next_huangfan is then 0, whatever scoring's bookkeeping gives.
        self.huangfan_reset = False
        self._step = STEP_NONE  # see STEP_*; the step's arguments:
        self._step_seat = 0
        self._step_replacement = False
        self._step_wins: list[tuple[int, WinOption]] = []
        self._step_from: int | None = None
        self._resume = self.resume  # bound once: deferred on every turn
        # 补花 after the deal: each seat's flowers still to replace, and whose turn it is (the
        # count of seats done, in dealer order)
        self._deal_flowers: list[list[int]] = []
        self._deal_turn = 0

    # --- facts -----------------------------------------------------------------------------
    @property
    def drawable(self) -> int:
        return max(0, self.remaining - self.reserved_tiles)

    def is_bonus(self, k: int) -> bool:
        """补花: flowers, and the 百搭 set's extras (and dragons when they are bonus tiles), as
        the tile set's ``is_bonus``. A native method: the tile set's bound method is a Python
        call from compiled code, made for every dealt tile."""
        return T.is_bonus(k) or (self.dragons_bonus and T.is_dragon(k))

    def snapshot(self) -> TableSnapshot:
        """The rules' view of this moment (shared.table)."""
        a, b, c, d = self.seats
        return _new_snapshot(
            (  # TableSnapshot's fields, in order
                self.ruleset,
                (
                    a._state or a.state(),
                    b._state or b.state(),
                    c._state or c.state(),
                    d._state or d.state(),
                ),
                self.dealer,
                self.turn,
                self.remaining,
                self.last,
                self.first_go_around,
                self._claim_counts_tuple,
                self.wild_kind,
            )
        )

    def emit_event(self, event: TableEvent) -> int:
        """Publish one fact of this hand (its sequence number in the table's log)."""
        return self._emit(event)

    def emit_prompt(self, p: Pending) -> int:
        return self._emit(prompt_event(p, self.hand_id, self.number))

    def emit_action(self, seat: int, action: Decision, auto: bool, request_id: str) -> int:
        """Log an applied decision (ActionTaken; ``request_id``: the player's Act, "" for the
        timer's, a bot's or 托管's)."""
        return self._emit(
            ActionTaken(
                seat=seat,
                action=action,
                auto=auto,
                request_id=request_id,
                hand_id=self.hand_id,
                hand_number=self.number,
            )
        )

    # --- steps -----------------------------------------------------------------------------
    def then(self) -> None:
        """Run the recorded next step (service calls: claim options, the next draw, scoring)
        now, or later through ``defer`` so the action is acknowledged at once."""
        if self.defer is None:
            self.resume()
        else:
            self.defer(self._resume)

    def resume(self) -> None:
        """Run the recorded next step (see ``STEP_*``): what follows an applied action, and the
        retry of a step whose service call failed, which goes on from that call. Nothing when
        a decision is pending or the hand is over."""
        step = self._step
        if step == STEP_WINDOW:
            claims.open_window(self)
        elif step == STEP_DRAW:
            self.draw(self._step_seat, replacement=self._step_replacement)
        elif step == STEP_PROMPT:
            self.prompt_own_turn(self._step_seat)
        elif step == STEP_RESOLVE:
            claims.resolve_window(self)
        elif step == STEP_WIN:
            settlement.finish_win(self, self._step_wins, self._step_from)
        elif step == STEP_NEW_HAND:
            self._new_hand()
        elif step == STEP_DEAL:
            deal.deal(self)
        elif step == STEP_DEAL_FLOWERS:
            deal.replace_deal_flowers(self)
        elif step == STEP_CLOSE_WINDOW:
            claims.close_window(self)

    def draw_hold(self) -> int:
        """The hold of the window about to open (ms; 0 without one), drawn now."""
        hold = self.window_hold() if self.window_hold is not None else 0
        self.window_held_ms = hold
        return hold

    def start_hold(self) -> None:
        """The window is open (its prompts sent): its hold runs from now. Counted from here,
        not from the discard, so the work of prompting seats does not shorten it."""
        hold = self.window_held_ms
        self.window_until_ms = self.now_ms() + hold if hold > 0 else 0

    def after_hold(self, step: int) -> None:
        """Run ``step`` (STEP_RESOLVE, STEP_CLOSE_WINDOW) once the window's hold ran out: at
        once when it has (or there is none, or nothing to wait with), else through
        ``defer_later``."""
        self._step = step
        wait = self.window_until_ms - self.now_ms() if self.window_until_ms else 0
        if wait > 0 and self.defer_later is not None:
            self.defer_later(self._resume, wait)
        else:
            self.then()

    # --- start -----------------------------------------------------------------------------
    def start(self) -> None:
        """NewHand, deal, 补花 in dealer order, then the dealer's first decision. As on every
        step, a service call comes before the state it leads to, so a failed call leaves its
        step recorded (STEP_NEW_HAND, STEP_DEAL, STEP_DEAL_FLOWERS) and :meth:`resume` goes on
        from it (the wall answers a repeated NewHand, Deal or numbered draw as before)."""
        self._step = STEP_NEW_HAND
        self._new_hand()

    def _new_hand(self) -> None:
        cfg = self.config
        wh = self.wall.new_hand(
            cfg.ruleset_name, cfg.overrides, cfg.dealer, f"{cfg.table_id}/{cfg.hand_number}"
        )
        self.hand_id, self.dice, self.commitment = wh.hand_id, wh.dice, wh.commitment
        scoring = self.ruleset.scoring
        self.kaibao = bool(scoring.kaibao) and is_kaibao(wh.dice)
        # 骰子荒番 (scoring.dice_huangfan, RULES §10): the dice add to the counter for this hand;
        # the event shows the 荒番 the hand is played under and, apart, what the dice added.
        dice_bonus = dice_huangfan_bonus(wh.dice) if scoring.dice_huangfan else 0
        self.huangfan = cfg.huangfan + dice_bonus
        self._step = STEP_DEAL
        self._emit(
            HandStarted(
                dealer=cfg.dealer,
                dice=self.dice,
                commitment=self.commitment,
                kaibao=self.kaibao,
                huangfan=self.huangfan,
                huangfan_dice=dice_bonus if scoring.dice_huangfan else None,
                garden_stacks=cfg.garden_stacks,
                hand_id=self.hand_id,
                hand_number=cfg.hand_number,
                doubled_seats=cfg.doubled_seats,
                fees=cfg.fees,
            )
        )
        deal.deal(self)

    def after_deal(self) -> None:
        """The deal and its 补花 are done: 换牌 when the ruleset has it, else the dealer acts."""
        if self.ruleset.table.tile_swap:
            self._step = STEP_NONE
            swap.open_swap_window(self)
        else:
            self.prompt_own_turn(self.config.dealer)

    # --- prompts ---------------------------------------------------------------------------
    def prompt_own_turn(self, seat: int) -> None:
        self._step, self._step_seat = STEP_PROMPT, seat
        opts = self.rules.own_turn_options(self.snapshot(), seat)
        due = self.due(seat, self.config.discard_ms)
        p = Pending(seat, OWN_TURN, opts, due, self.drawn.get(seat))
        self.pending = {seat: p}
        self._step = STEP_NONE
        p.sequence = self.emit_prompt(p)

    def due(self, seat: int, ms: int) -> int:
        """When ``seat``'s decision is due, on a timer of ``ms`` (its effective timer, if set)."""
        timer = self.timer_ms
        return self.now_ms() + (ms if timer is None else timer(seat, ms))

    # --- acting ----------------------------------------------------------------------------
    def act(self, seat: int, action: Decision, *, auto: bool = False, request_id: str = "") -> None:
        """Apply ``seat``'s action (``request_id``: the player's request, recorded with it);
        FailedPrecondition (nothing changed) when it is not one of the options the seat holds
        now."""
        if self.finished:
            raise FailedPrecondition("the hand is over", reason="HAND_OVER")
        p = self.pending.get(seat)
        if p is None:
            raise FailedPrecondition(
                f"seat {seat} has no decision pending now{self._whose()}",
                reason="NOT_YOUR_TURN",
                seat=seat,
            )
        if p.kind == SWAP:
            swap.answer_swap(self, p, action, auto, request_id)
            return
        if isinstance(action, TileSwap):
            raise FailedPrecondition(
                "a tile swap (换牌) is only possible before play", reason="ILLEGAL_ACTION"
            )
        if p.kind == OWN_TURN:
            check_own_turn(p, action)
        else:
            check_claim(p, action)
        self.actions += 1
        self.emit_action(seat, action, auto, request_id)
        if p.kind == OWN_TURN:
            self._apply_own_turn(seat, p, action, auto)
        else:
            del self.pending[seat]
            self.claims[seat] = action
            if not self.pending:
                self.after_hold(STEP_RESOLVE)

    def _whose(self) -> str:
        """What a seat with no decision pending may be told about the others': whose turn it
        is (public), nothing else. Who is prompted on a claim, a 抢杠 or a tile swap is secret
        (it would tell what they can claim or win on), and so is whether a window is open."""
        own = [p.seat for p in self.pending.values() if p.kind == OWN_TURN]
        return f" (it is seat {own[0]}'s turn)" if own else ""

    def _apply_own_turn(self, seat: int, p: Pending, action: Action, auto: bool) -> None:
        s = self.seats[seat]
        self.pending = {}
        if isinstance(action, _DISCARD_ACTIONS):
            tile = action.tile if isinstance(action, Discard) else action.discard
            self._discard(seat, tile, isinstance(action, DeclareReady), auto)
        elif isinstance(action, ConcealedKong):
            s.counts[action.tile] -= 4
            s.melds.append(Meld(_MELD_CONCEALED_KONG, (action.tile,) * 4, None))
            s.changed()
            self.first_go_around = False
            self.drawn.pop(seat, None)
            self._emit_meld(seat, s.melds[-1])
            self._step, self._step_seat, self._step_replacement = STEP_DRAW, seat, True
            self.then()
        elif isinstance(action, AddedKong):
            self._added_kong(seat, action.tile)
        elif isinstance(action, Win):
            opts = p.options
            assert isinstance(opts, OwnTurnOptions)
            win = _choose_win(opts.wins, action.eight_flowers)
            self._step, self._step_wins, self._step_from = STEP_WIN, [(seat, win)], None
            self.then()

    def _emit_meld(self, seat: int, meld: Meld, hold_ms: int = 0) -> None:
        self._emit(
            MeldDeclared(
                seat=seat,
                meld=MeldFact.of(meld),
                hand_id=self.hand_id,
                hand_number=self.number,
                hold_ms=hold_ms,
            )
        )

    def _discard(self, seat: int, tile: int, ready: bool, auto: bool) -> None:
        s = self.seats[seat]
        s.counts[tile] -= 1
        s.discard(tile)
        drawn = self.drawn.pop(seat, None)
        if ready:
            s.ready = True
        self.turn = seat
        self.last = _new_last((_LAST_DISCARD, seat, tile))
        self._emit(
            TileDiscarded(
                seat=seat,
                tile=tile,
                declared_ready=ready,
                auto=auto,
                drawn_tile=drawn == tile,
                hand_id=self.hand_id,
                hand_number=self.number,
                hold_ms=self.draw_hold(),
            )
        )
        if ready:
            self._emit(ReadyDeclared(seat=seat, hand_id=self.hand_id, hand_number=self.number))
        self._step = STEP_WINDOW
        self.then()

    def _added_kong(self, seat: int, tile: int) -> None:
        s = self.seats[seat]
        for i, m in enumerate(s.melds):
            if m.kind is _MELD_PONG and m.tiles[0] == tile:
                s.melds[i] = Meld(_MELD_ADDED_KONG, (tile,) * 4, m.from_seat)
                break
        else:  # options said it was possible; a mismatch is a bug in the options
            raise FailedPrecondition(f"seat {seat} holds no pong of {fmt(tile)}")
        s.counts[tile] -= 1
        s.changed()
        self.drawn.pop(seat, None)
        self.turn = seat
        self.last = LastAction(_LAST_ADDED_KONG, seat, tile)
        self._emit_meld(seat, s.melds[i], self.draw_hold())
        self._step = STEP_WINDOW
        self.then()

    # --- drawing ---------------------------------------------------------------------------
    def draw(self, seat: int, *, replacement: bool) -> None:
        """A live or replacement draw; flowers are exposed and replaced from the tail."""
        if seat == self.dealer and not replacement:
            self.first_go_around = False  # the dealer's second turn begins
        after_flower = False
        while True:
            self._step, self._step_seat, self._step_replacement = STEP_DRAW, seat, replacement
            if self.remaining <= self.reserved_tiles:  # nothing drawable
                settlement.finish_drawn_hand(self)
                return
            n = self.wall_calls + 1
            if replacement:
                d = self.wall.draw_replacement(self.hand_id, seat, n)
            else:
                d = self.wall.draw(self.hand_id, seat, n)
            self.wall_calls = n
            self.remaining = d.remaining
            # a playing tile (or 百搭) joins the hand
            if not self.is_bonus(d.tile):
                break
            self.seats[seat].flowers.append(d.tile)
            self.seats[seat].changed()
            deal.expose_flowers_drawn(self, seat, d.tile, replacement)
            replacement = after_flower = True
        s = self.seats[seat]
        s.counts[d.tile] += 1
        s.has_drawn = True
        s.missed.clear()  # 动牌
        s._state = None  # changed(), inlined on the per-turn path
        self.drawn[seat] = d.tile
        self.turn = seat
        self.replacement_draw = replacement
        self.replaced_flower = after_flower
        kind = _LAST_REPLACEMENT_DRAW if replacement else _LAST_DRAW
        self.last = _new_last((kind, seat, d.tile))
        self._emit(
            TileDrawn(
                seat=seat,
                tile=d.tile,
                replacement=replacement,
                tiles_left=self.remaining,
                hand_id=self.hand_id,
                hand_number=self.number,
            )
        )
        self.prompt_own_turn(seat)

    # --- the end ---------------------------------------------------------------------------
    def finish_win(self, wins: list[tuple[int, WinOption]], from_seat: int | None) -> None:
        settlement.finish_win(self, wins, from_seat)

    def finish_drawn_hand(self) -> None:
        settlement.finish_drawn_hand(self)

    # --- defaults for timeouts, 托管 and stand-in bots ------------------------------------------
    def default_action(self, seat: int) -> Action:
        """What a missed decision does (RULES §4): the drawn tile (or the right-most tile after a
        claim) is discarded; a missed claim is a pass."""
        p = self.pending.get(seat)
        if p is None:
            raise FailedPrecondition(f"seat {seat} has no decision pending")
        if p.kind != OWN_TURN:
            return Pass()
        opts = p.options
        assert isinstance(opts, OwnTurnOptions)
        drawn = self.drawn.get(seat)
        if drawn is not None and drawn in opts.discards:
            return Discard(drawn)
        if opts.discards:
            return Discard(max(opts.discards))
        return Win()  # nothing to discard can only mean a forced win; never expected

    def discard_piles(self) -> tuple[tuple[int, ...], ...]:
        """Every seat's discards as the table's views show them: claimed ones included (the
        snapshot's seats hold only those still in front)."""
        return tuple(tuple(s.discards) for s in self.seats)

    def tiles_accounted(self) -> int:
        """Tiles in hands, melds, flowers, unclaimed discards and the wall: always the set's
        144 (152 or 148 in the 百搭 sets)."""
        n = self.remaining + (1 if self.robbed_tile is not None else 0) + len(self.flipped)
        for s in self.seats:
            n += sum(s.counts) + sum(len(m.tiles) for m in s.melds) + len(s.flowers)
            n += len(s.discards) - s.claimed
        return n

    def copy_state(self) -> dict[str, object]:
        """A comparable picture of the whole state (tests: a rejected action changes nothing)."""
        return {
            "seats": [s.state() for s in self.seats],
            "claimed": [s.claimed for s in self.seats],
            "pending": {k: (v.kind, v.sequence) for k, v in self.pending.items()},
            "claims": dict(self.claims),
            "remaining": self.remaining,
            "last": self.last,
            "finished": self.finished,
        }


def _choose_win(wins: tuple[WinOption, ...], eight_flowers: bool) -> WinOption:
    """The win a bare 胡 declares: 八花齐 only when asked for or the only one offered."""
    shaped = [w for w in wins if w.hand != _HAND_EIGHT_FLOWERS]
    flowers = [w for w in wins if w.hand == _HAND_EIGHT_FLOWERS]
    if eight_flowers and flowers:
        return flowers[0]
    return (shaped or flowers)[0]
