"""One hand of Shanghai Mahjong run as a state machine (RULES.md §3-§9).

:class:`HandEngine` drives a hand through its ports (wall, rules, scoring): NewHand (the seed
commitment is published), the deal, 补花 in dealer order, then the loop of RULES §4 — draw (a
flower is exposed and replaced from the tail), the own-turn options from rules, the seat's action,
the discard, ONE rules call for every other seat's claim options, the claim window, priority
resolution (一炮多响: all wins stand), 敲 locks and 漏胡 marks (decided by rules, kept here),
kongs with replacement draws and the 抢杠 window on an added kong, 八花齐, and the drawn hand
(流局) when a seat must draw from an empty wall. At the end scoring settles and the wall reveals
its seed.

The engine is pure and synchronous: it never sleeps and never reads a clock except through
``now_ms``. Every state change is the result of :meth:`HandEngine.act` with a concrete action
(timeouts, bots and 托管 are turned into concrete actions by the table session), and every fact
is published through ``emit(kind, data)`` — the table's event log. Actions are checked against
the options the engine already holds, so no extra rules call is needed to validate one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from services.gateway.domain.ports import (
    HandFacts,
    RulesPort,
    ScoringPort,
    Settlement,
    WallPort,
    WallReveal,
    WinnerInput,
)
from services.gateway.domain.readiness import ready_seats
from services.scoring.domain.situations import dice_huangfan_bonus, is_kaibao
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument
from shared.hand.hand_type import HandType
from shared.melds import Meld, MeldKind
from shared.ruleset import Ruleset
from shared.table import (
    Action,
    AddedKong,
    Chow,
    ClaimOptions,
    ClaimResolution,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    LastAction,
    LastActionKind,
    OwnTurnOptions,
    Pass,
    Pong,
    SeatState,
    TableSnapshot,
    Win,
    WinKind,
    WinOption,
    action_name,
)
from shared.tile_set import tile_set_of

NUM_SEATS = 4

# mpsz text of every tile kind, precomputed: events name tiles on the hot path.
TILE_TEXT = tuple(T.format_tile(k) for k in range(T.NUM_TILE_KINDS))
_tile_text = TILE_TEXT.__getitem__

OWN_TURN = "own_turn"
CLAIM = "claim"
ROB_KONG = "rob_kong"
SWAP = "tile_swap"

# The engine's next step: what it does on its own, without waiting for a decision
# (HandEngine.resume). It is recorded before every service call, once the state that call follows
# is complete, so a call that fails is retried from that call on the state it left: no tile is
# drawn, no meld made and no event emitted twice.
STEP_NONE = 0  # a decision is pending, or the hand is over
STEP_WINDOW = 1  # open the claim (or 抢杠) window on the last discard (or added kong)
STEP_RESOLVE = 2  # resolve the claims of the window
STEP_DRAW = 3  # draw for _step_seat (from the tail when _step_replacement)
STEP_PROMPT = 4  # ask rules for _step_seat's own-turn options and prompt it
STEP_WIN = 5  # settle the win(s) _step_wins (from _step_from) and end the hand
STEP_NEW_HAND = 6  # ask the wall for the hand (NewHand) and announce it
STEP_DEAL = 7  # ask the wall for the deal and show it
STEP_DEAL_FLOWERS = 8  # 补花 after the deal, from seat _deal_turn (in dealer order) on


@dataclass(frozen=True, slots=True)
class SwapOptions:
    """换牌 (option table.tile_swap): bury exactly ``count`` concealed tiles, or pass."""

    seat: int
    count: int


@dataclass(frozen=True, slots=True)
class TileSwap:
    """The 换牌 action: bury these tiles in the live wall and take as many from it."""

    tiles: tuple[int, ...]


Decision = Action | TileSwap

# isinstance() tuples built once (``A | B`` in a call builds a union object every time).
_DISCARD_ACTIONS = (Discard, DeclareReady)
_KONG_ON_TILE = (AddedKong, ConcealedKong)

Emit = Callable[[str, dict[str, Any]], int]
_NO_MARKS: frozenset[int] = frozenset()


@dataclass
class SeatHand:
    """One seat's tiles during a hand (mutable; the engine's private state). ``counts`` is
    indexed by every kind, so a held 百搭 is ``counts[T.WILDCARD]``; the rules see the 34
    playing kinds and the 百搭 apart (:meth:`state`)."""

    counts: list[int] = field(default_factory=lambda: [0] * T.NUM_TILE_KINDS)
    melds: list[Meld] = field(default_factory=list)
    flowers: list[int] = field(default_factory=list)
    discards: list[int] = field(default_factory=list)
    claimed: int = 0  # how many of the discards were claimed by others (chow/pong/kong)
    ready: bool = False  # 敲
    missed: set[int] = field(default_factory=set)  # 漏胡 marks
    has_drawn: bool = False
    _state: SeatState | None = field(default=None, repr=False, compare=False)

    def state(self) -> SeatState:
        """The rules' view of this seat, built once and kept until :meth:`changed` (a decision
        point changes one seat, so a snapshot rebuilds one seat state, not four)."""
        st = self._state
        if st is None:
            st = self._state = SeatState(  # in field order
                tuple(self.counts[: T.NUM_KINDS]),
                tuple(self.melds),
                tuple(self.flowers),
                tuple(self.discards),
                self.ready,
                frozenset(self.missed) if self.missed else _NO_MARKS,
                self.has_drawn,
                self.counts[T.WILDCARD],
            )
        return st

    def changed(self) -> None:
        """To be called after any change to the seat's tiles, melds, flowers, discards, 敲 or
        漏胡 marks: the next :meth:`state` rebuilds."""
        self._state = None

    def concealed_tiles(self) -> list[int]:
        return T.from_counts(self.counts)


@dataclass
class Pending:
    """A decision a seat owes: its kind, the options it holds, the timer's deadline."""

    seat: int
    kind: str  # OWN_TURN, CLAIM or ROB_KONG
    options: OwnTurnOptions | ClaimOptions | SwapOptions
    deadline_ms: int
    tile: int | None = None  # the drawn tile (own turn) or the tile under claim
    from_seat: int | None = None
    sequence: int = 0  # the prompt event's number


@dataclass(frozen=True)
class HandConfig:
    table_id: str
    hand_number: int
    dealer: int
    huangfan: int
    stake: int
    ruleset: Ruleset
    ruleset_name: str
    overrides: dict[str, str]
    discard_ms: int
    claim_ms: int
    garden_stacks: tuple[int, ...] | None = None  # 逛花园: each seat's chips before the hand


def _meld_json(meld: Meld) -> dict[str, Any]:
    return meld.to_json()


def options_json(opts: OwnTurnOptions | ClaimOptions | SwapOptions) -> dict[str, Any]:
    """The options a prompt carries, as JSON (tiles in mpsz)."""
    if isinstance(opts, SwapOptions):
        return {"swap_count": opts.count, "pass": True}
    if isinstance(opts, OwnTurnOptions):
        d = {
            "discards": list(map(_tile_text, opts.discards)),
            "ready_discards": list(map(_tile_text, opts.ready_discards)),
            "concealed_kongs": list(map(_tile_text, opts.concealed_kongs)),
            "added_kongs": list(map(_tile_text, opts.added_kongs)),
            "win": bool(opts.wins),
        }
        wins = opts.wins
        if wins and any(w.hand == HandType.EIGHT_FLOWERS for w in wins):
            # 八花齐 is offered: say so, and whether a winning hand is too (Win.eight_flowers)
            d["win_eight_flowers"] = True
            d["win_shape"] = any(w.hand != HandType.EIGHT_FLOWERS for w in wins)
        return d
    return {
        "win": opts.win is not None,
        "pong": opts.pong,
        "exposed_kong": opts.exposed_kong,
        "chows": list(map(_tile_text, opts.chows)),
        "pass": True,
    }


def prompt_json(p: Pending, hand_id: str = "", hand_number: int = 0) -> dict[str, Any]:
    """A pending decision as the prompt event carries it (with the hand's id and number when
    they are given: the event's head)."""
    head = {"hand_id": hand_id, "hand_number": hand_number} if hand_id else {}
    return {
        **head,
        "seat": p.seat,
        "kind": p.kind,
        "options": options_json(p.options),
        "deadline_ms": p.deadline_ms,
        "tile": TILE_TEXT[p.tile] if p.tile is not None else "",
        "from_seat": p.from_seat,
    }


def action_json(action: Decision) -> dict[str, Any]:
    """An action as JSON for the event log (replay)."""
    if isinstance(action, TileSwap):
        return {"type": "tile_swap", "tiles": T.format_tiles(action.tiles, sort=False)}
    d: dict[str, Any] = {"type": action_name(action)}
    if isinstance(action, Discard):
        d["tile"] = TILE_TEXT[action.tile]
    elif isinstance(action, DeclareReady):
        d["tile"] = TILE_TEXT[action.discard]
    elif isinstance(action, Chow):
        d["low"] = TILE_TEXT[action.low]
    elif isinstance(action, _KONG_ON_TILE):
        d["tile"] = TILE_TEXT[action.tile]
    elif isinstance(action, Win) and action.eight_flowers:
        d["eight_flowers"] = True
    return d


def action_from_json(d: dict[str, Any]) -> Decision:
    """Inverse of :func:`action_json`."""
    kind = d.get("type")
    one = (lambda: T.parse(d["tile"])[0]) if "tile" in d else (lambda: -1)
    if kind == "discard":
        return Discard(one())
    if kind == "declare_ready":
        return DeclareReady(one())
    if kind == "chow":
        return Chow(T.parse(d["low"])[0])
    if kind == "pong":
        return Pong()
    if kind == "exposed_kong":
        return ExposedKong()
    if kind == "added_kong":
        return AddedKong(one())
    if kind == "concealed_kong":
        return ConcealedKong(one())
    if kind == "win":
        return Win(bool(d.get("eight_flowers")))
    if kind == "pass":
        return Pass()
    if kind == "tile_swap":
        return TileSwap(tuple(T.parse(d["tiles"])))
    raise InvalidArgument(f"unknown action type {kind!r}")


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
    ) -> None:
        self.config = config
        self.ruleset = config.ruleset
        self._reserved_tiles = int(config.ruleset.table.reserved_tiles)
        self.tile_set = tile_set_of(config.ruleset)
        self._bonus = self.tile_set.is_bonus  # 补花: flowers, and the 百搭 set's extras/dragons
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
        self.dealer = config.dealer
        self.seats = [SeatHand() for _ in range(NUM_SEATS)]
        self.hand_id = ""
        self.dice: tuple[int, int] = (0, 0)
        self.commitment = ""
        self.kaibao = False
        self.huangfan = config.huangfan  # 荒番 of this hand: the counter, plus the dice's
        self.remaining = 0
        self.turn = config.dealer
        self.last = LastAction(LastActionKind.DEAL, config.dealer)
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
        self._number = config.hand_number
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
        return max(0, self.remaining - self._reserved_tiles)

    def snapshot(self) -> TableSnapshot:
        """The rules' view of this moment (shared.table)."""
        a, b, c, d = self.seats
        return TableSnapshot(  # positional: keywords cost a third more on every decision
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

    def _then(self) -> None:
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
            self._open_window()
        elif step == STEP_DRAW:
            self._draw(self._step_seat, replacement=self._step_replacement)
        elif step == STEP_PROMPT:
            self._prompt_own_turn(self._step_seat)
        elif step == STEP_RESOLVE:
            self._resolve_window()
        elif step == STEP_WIN:
            self._finish_win(self._step_wins, self._step_from)
        elif step == STEP_NEW_HAND:
            self._new_hand()
        elif step == STEP_DEAL:
            self._deal()
        elif step == STEP_DEAL_FLOWERS:
            self._replace_deal_flowers()

    def emit(self, event: str, /, **data: Any) -> int:
        """Emit one fact of this hand: its data begins with the hand's id and number (the
        per-turn events build the same head in their own dict displays, one dict each)."""
        return self._emit(event, {"hand_id": self.hand_id, "hand_number": self._number, **data})

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
        self.kaibao = bool(self.ruleset.scoring.kaibao) and is_kaibao(wh.dice)
        # 骰子荒番 (scoring.dice_huangfan, RULES §10): the dice add to the counter for this hand;
        # the event shows the 荒番 the hand is played under and, apart, what the dice added.
        dice_bonus = dice_huangfan_bonus(wh.dice) if self.ruleset.scoring.dice_huangfan else 0
        self.huangfan = cfg.huangfan + dice_bonus
        self._step = STEP_DEAL
        self.emit(
            "hand_started",
            hand_id=self.hand_id,
            hand_number=cfg.hand_number,
            dealer=cfg.dealer,
            dice=list(self.dice),
            commitment=self.commitment,
            kaibao=self.kaibao,
            huangfan=self.huangfan,
            **({"huangfan_dice": dice_bonus} if self.ruleset.scoring.dice_huangfan else {}),
            **({} if cfg.garden_stacks is None else {"garden_stacks": list(cfg.garden_stacks)}),
        )
        self._deal()

    def _deal(self) -> None:
        cfg = self.config
        hands, remaining = self.wall.deal(self.hand_id)
        if len(hands) != NUM_SEATS:
            raise ValueError(f"wall dealt {len(hands)} hands, not 4")
        self.remaining = remaining
        self._deal_flowers = []
        for seat, tiles in enumerate(hands):
            s = self.seats[seat]
            self._deal_flowers.append([k for k in tiles if self._bonus(k)])
            for k in tiles:
                if not self._bonus(k):
                    s.counts[k] += 1
            s.changed()
        self.drawn[cfg.dealer] = hands[cfg.dealer][-1]
        self._deal_turn = 0
        self._step = STEP_DEAL_FLOWERS
        self.emit(
            "tiles_dealt",
            hands=[T.format_tiles(h, sort=False) for h in hands],
            tiles_left=self.remaining,
        )
        self._replace_deal_flowers()

    def _replace_deal_flowers(self) -> None:
        """补花 in dealer order, seat by seat (see :meth:`_replacement_rounds`): a seat's
        replacements are applied once they were all drawn, so a failed draw leaves the seat to
        be replaced again with the same numbers, which the wall answers with the same tiles."""
        cfg = self.config
        while self._deal_turn < NUM_SEATS:
            seat = (cfg.dealer + self._deal_turn) % NUM_SEATS
            rounds, number, ran_out = self._replacement_rounds(seat, self._deal_flowers[seat])
            self.wall_calls = number
            self._expose_flowers(seat, rounds, "deal")
            if ran_out is not None:
                self.remaining = ran_out
                self._finish_drawn_hand()
                return
            if seat == cfg.dealer:
                plain = [k for _, got, _ in rounds for k in got if not self._bonus(k)]
                if plain:
                    self.drawn[seat] = plain[-1]
            self._deal_flowers[seat] = []
            self._deal_turn += 1
        if self.tile_set.flipped_wildcard and not self.flipped:
            self._flip_indicator()
        self.turn = cfg.dealer
        self.last = LastAction(LastActionKind.DEAL, cfg.dealer)
        if self.ruleset.table.tile_swap:
            self._step = STEP_NONE
            self._open_swap_window()
        else:
            self._prompt_own_turn(cfg.dealer)

    def _flip_indicator(self) -> None:
        """翻百搭 after the deal's 补花 (RULES-presets §13.B.9): the wall turns the indicator up
        from the replacement end; a call that fails is made again (the wall answers a repeat
        with the same flip) and nothing changes before it returns."""
        turned, remaining = self.wall.flip_indicator(self.hand_id)
        self.flipped = turned
        self.remaining = remaining
        self.wild_kind = self.tile_set.wild_kind_for(turned[-1])
        self.emit(
            "wild_flipped",
            indicator=TILE_TEXT[turned[-1]],
            wild=TILE_TEXT[self.wild_kind],
            set_aside=T.format_tiles(turned[:-1], sort=False),
            tiles_left=remaining,
        )

    def _replacement_rounds(
        self, seat: int, flowers: list[int], number: int | None = None
    ) -> tuple[list[tuple[list[int], list[int], int]], int, int | None]:
        """补花 for the ``flowers`` ``seat`` shows: replacement draws from the tail, numbered on
        from ``number`` (default: the wall calls made so far), in rounds (a replacement that is
        a flower is replaced in the next). Nothing changes here; the caller applies the rounds
        (:meth:`_expose_flowers`) once all were drawn. Returns the rounds (the flowers, their
        replacements, the tiles left after them), the last number, and, when the drawable tiles
        ran out before every flower was replaced, the tiles left then (else None)."""
        number = self.wall_calls if number is None else number
        remaining = self.remaining
        rounds: list[tuple[list[int], list[int], int]] = []
        while flowers:
            replacements: list[int] = []
            for _ in flowers:
                if remaining <= self._reserved_tiles:  # nothing drawable
                    return rounds, number, remaining
                number += 1
                d = self.wall.draw_replacement(self.hand_id, seat, number)
                remaining = d.remaining
                replacements.append(d.tile)
            rounds.append((flowers, replacements, remaining))
            flowers = [k for k in replacements if self._bonus(k)]
        return rounds, number, None

    def _expose_flowers(
        self, seat: int, rounds: list[tuple[list[int], list[int], int]], draw: str
    ) -> None:
        """Apply 补花 rounds drawn by :meth:`_replacement_rounds`: each round's flowers are
        shown, its replacements that are not flowers join the hand."""
        s = self.seats[seat]
        for flowers, replacements, remaining in rounds:
            s.flowers.extend(flowers)
            for k in replacements:
                if not self._bonus(k):
                    s.counts[k] += 1
            s.changed()
            self.remaining = remaining
            self.emit(
                "flowers_exposed",
                seat=seat,
                flowers=T.format_tiles(flowers),
                replacements=T.format_tiles(replacements, sort=False),
                draw=draw,
                tiles_left=self.remaining,
            )

    # --- 换牌 tile swap ------------------------------------------------------------------------
    def _open_swap_window(self) -> None:
        """Every seat may bury ``tile_swap_count`` tiles and take as many from the live wall
        within ``tile_swap_seconds``; a seat that does not answer (disconnected) does not swap."""
        count = int(self.ruleset.table.tile_swap_count)
        deadline = self.now_ms() + int(self.ruleset.table.tile_swap_seconds) * 1000
        order = [(self.dealer + i) % NUM_SEATS for i in range(NUM_SEATS)]
        self.pending = {s: Pending(s, SWAP, SwapOptions(s, count), deadline) for s in order}
        for s in order:
            self.pending[s].sequence = self._emit_prompt(self.pending[s])

    def _check_swap(self, p: Pending, action: Decision) -> None:
        if isinstance(action, Pass):
            return
        if not isinstance(action, TileSwap):
            raise FailedPrecondition(
                f"before play only a tile swap (换牌) or pass is possible, not "
                f"{action_name(action)}",
                reason="ILLEGAL_ACTION",
            )
        opts = p.options
        assert isinstance(opts, SwapOptions)
        if len(action.tiles) != opts.count:
            raise InvalidArgument(
                f"a tile swap buries exactly {opts.count} tiles, got {len(action.tiles)}",
                field="tile_swap.tiles",
            )
        held = list(self.seats[p.seat].counts)
        for k in action.tiles:
            if not 0 <= k < T.NUM_TILE_KINDS or held[k] == 0:
                raise FailedPrecondition(
                    f"seat {p.seat} does not hold {_fmt(k)} to bury", reason="ILLEGAL_ACTION"
                )
            held[k] -= 1

    def _apply_swap(
        self,
        seat: int,
        action: Decision,
        taken: list[int] | None,
        rounds: list[tuple[list[int], list[int], int]],
        auto: bool,
    ) -> None:
        """Apply a seat's 换牌 answer: the swap's tiles, then each 补花 round (the flowers
        exposed, their replacements, the tiles left after it), all drawn already."""
        del self.pending[seat]
        self.emit("action", seat=seat, action=action_json(action), auto=auto)
        if isinstance(action, TileSwap) and taken is not None:
            s = self.seats[seat]
            for k in action.tiles:
                s.counts[k] -= 1
            for k in taken:
                if not self._bonus(k):
                    s.counts[k] += 1
            s.changed()
            self.emit(
                "tiles_swapped",
                seat=seat,
                buried=T.format_tiles(action.tiles, sort=False),
                taken=T.format_tiles(taken, sort=False),
            )
            self._expose_flowers(seat, rounds, "swap")
        if not self.pending:
            self._step, self._step_seat = STEP_PROMPT, self.dealer
            self._then()

    # --- prompts ---------------------------------------------------------------------------
    def _prompt_own_turn(self, seat: int) -> None:
        self._step, self._step_seat = STEP_PROMPT, seat
        opts = self.rules.own_turn_options(self.snapshot(), seat)
        due = self._due(seat, self.config.discard_ms)
        p = Pending(seat, OWN_TURN, opts, due, self.drawn.get(seat))
        self.pending = {seat: p}
        self._step = STEP_NONE
        p.sequence = self._emit_prompt(p)

    def _due(self, seat: int, ms: int) -> int:
        """When ``seat``'s decision is due, on a timer of ``ms`` (its effective timer, if set)."""
        timer = self.timer_ms
        return self.now_ms() + (ms if timer is None else timer(seat, ms))

    def _emit_prompt(self, p: Pending) -> int:
        return self._emit("prompt", prompt_json(p, self.hand_id, self._number))

    # --- acting ----------------------------------------------------------------------------
    def act(self, seat: int, action: Decision, *, auto: bool = False) -> None:
        """Apply ``seat``'s action; FailedPrecondition (nothing changed) when it is not one of
        the options the seat holds now."""
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
            self._check_swap(p, action)
            taken: list[int] | None = None
            rounds: list[tuple[list[int], list[int], int]] = []
            number = self.wall_calls
            if isinstance(action, TileSwap):
                # Every wall call first (the swap, then 补花 of the flowers it gave): if one
                # fails nothing has changed, and the request sent again makes the same numbered
                # calls, which the wall answers with the same tiles.
                number += 1
                taken = self.wall.swap(self.hand_id, seat, list(action.tiles), number)
                flowers = [k for k in taken if self._bonus(k)]
                rounds, number, ran_out = self._replacement_rounds(seat, flowers, number)
                if ran_out is not None:
                    raise FailedPrecondition(
                        "no tile is left to replace the flowers this swap would take",
                        reason="WALL_EXHAUSTED",
                    )
            self.wall_calls = number
            self.actions += 1
            self._apply_swap(seat, action, taken, rounds, auto)
            return
        if isinstance(action, TileSwap):
            raise FailedPrecondition(
                "a tile swap (换牌) is only possible before play", reason="ILLEGAL_ACTION"
            )
        if p.kind == OWN_TURN:
            self._check_own_turn(p, action)
        else:
            self._check_claim(p, action)
        self.actions += 1
        self._emit(
            "action",
            {
                "hand_id": self.hand_id,
                "hand_number": self._number,
                "seat": seat,
                "action": action_json(action),
                "auto": auto,
            },
        )
        if p.kind == OWN_TURN:
            self._apply_own_turn(seat, p, action, auto)
        else:
            del self.pending[seat]
            self.claims[seat] = action
            if not self.pending:
                self._step = STEP_RESOLVE
                self._then()

    def _whose(self) -> str:
        """What a seat with no decision pending may be told about the others': whose turn it
        is (public), nothing else. Who is prompted on a claim, a 抢杠 or a tile swap is secret
        (it would tell what they can claim or win on), and so is whether a window is open."""
        own = [p.seat for p in self.pending.values() if p.kind == OWN_TURN]
        return f" (it is seat {own[0]}'s turn)" if own else ""

    @staticmethod
    def _check_own_turn(p: Pending, action: Action) -> None:
        opts = p.options
        assert isinstance(opts, OwnTurnOptions)
        # The check first; the message is written only for an action that is refused.
        if isinstance(action, Discard):
            if action.tile in opts.discards:
                return
            why = f"discard {_fmt(action.tile)} is not allowed; allowed: {_fmts(opts.discards)}"
        elif isinstance(action, DeclareReady):
            if action.discard in opts.ready_discards:
                return
            why = (
                f"敲 with discard {_fmt(action.discard)} is not allowed; "
                f"ready discards: {_fmts(opts.ready_discards) or 'none'}"
            )
        elif isinstance(action, ConcealedKong):
            if action.tile in opts.concealed_kongs:
                return
            why = f"no concealed kong of {_fmt(action.tile)} is possible"
        elif isinstance(action, AddedKong):
            if action.tile in opts.added_kongs:
                return
            why = f"no added kong of {_fmt(action.tile)} is possible"
        elif isinstance(action, Win):
            if action.eight_flowers:
                if any(w.hand == HandType.EIGHT_FLOWERS for w in opts.wins):
                    return
                why = "八花齐 is not possible now: it needs all eight flowers, on the own turn"
            elif opts.wins:
                return
            else:
                why = "the hand cannot win now"
        else:
            why = f"{action_name(action)} is not an own-turn action (discard, 敲, kong or win)"
        raise FailedPrecondition(why, reason="ILLEGAL_ACTION", action=action_name(action))

    @staticmethod
    def _check_claim(p: Pending, action: Action) -> None:
        opts = p.options
        assert isinstance(opts, ClaimOptions)
        if isinstance(action, Pass):
            return
        if isinstance(action, Win):
            if action.eight_flowers:
                raise FailedPrecondition(
                    "八花齐 is declared on the seat's own turn, not on a claim",
                    reason="ILLEGAL_ACTION",
                )
            if opts.win is None:
                raise FailedPrecondition(
                    f"{_fmt(p.tile)} does not win for seat {p.seat}"
                    + (" (漏胡: passed this tile kind)" if opts.missed_win else ""),
                    reason="ILLEGAL_ACTION",
                )
            return
        if p.kind == ROB_KONG:
            raise FailedPrecondition(
                f"on an added kong only win (抢杠) or pass is possible, not {action_name(action)}",
                reason="ILLEGAL_ACTION",
            )
        if isinstance(action, Pong) and opts.pong:
            return
        if isinstance(action, ExposedKong) and opts.exposed_kong:
            return
        if isinstance(action, Chow) and action.low in opts.chows:
            return
        if isinstance(action, Chow):
            shapes = ", ".join(T.format_tiles(range(k, k + 3)) for k in opts.chows) or "none"
            why = f"chow {T.format_tiles(action.tiles)} is not possible; possible: {shapes}"
        else:
            why = f"{action_name(action)} of {_fmt(p.tile)} is not possible for seat {p.seat}"
        raise FailedPrecondition(why, reason="ILLEGAL_ACTION")

    def _apply_own_turn(self, seat: int, p: Pending, action: Action, auto: bool) -> None:
        s = self.seats[seat]
        self.pending = {}
        if isinstance(action, _DISCARD_ACTIONS):
            tile = action.tile if isinstance(action, Discard) else action.discard
            self._discard(seat, tile, isinstance(action, DeclareReady), auto)
        elif isinstance(action, ConcealedKong):
            s.counts[action.tile] -= 4
            s.melds.append(Meld(MeldKind.CONCEALED_KONG, (action.tile,) * 4, None))
            s.changed()
            self.first_go_around = False
            self.drawn.pop(seat, None)
            self.emit("meld_declared", seat=seat, meld=_meld_json(s.melds[-1]))
            self._step, self._step_seat, self._step_replacement = STEP_DRAW, seat, True
            self._then()
        elif isinstance(action, AddedKong):
            self._added_kong(seat, action.tile)
        elif isinstance(action, Win):
            opts = p.options
            assert isinstance(opts, OwnTurnOptions)
            win = _choose_win(opts.wins, action.eight_flowers)
            self._step, self._step_wins, self._step_from = STEP_WIN, [(seat, win)], None
            self._then()

    def _discard(self, seat: int, tile: int, ready: bool, auto: bool) -> None:
        s = self.seats[seat]
        s.counts[tile] -= 1
        s.discards.append(tile)
        drawn = self.drawn.pop(seat, None)
        if ready:
            s.ready = True
        s._state = None  # changed(), inlined on the per-turn path
        self.turn = seat
        self.last = LastAction(LastActionKind.DISCARD, seat, tile)
        self._emit(
            "tile_discarded",
            {
                "hand_id": self.hand_id,
                "hand_number": self._number,
                "seat": seat,
                "tile": TILE_TEXT[tile],
                "declared_ready": ready,
                "auto": auto,
                "drawn_tile": drawn == tile,
            },
        )
        if ready:
            self.emit("ready_declared", seat=seat)
        self._step = STEP_WINDOW
        self._then()

    def _added_kong(self, seat: int, tile: int) -> None:
        s = self.seats[seat]
        for i, m in enumerate(s.melds):
            if m.kind is MeldKind.PONG and m.tiles[0] == tile:
                s.melds[i] = Meld(MeldKind.ADDED_KONG, (tile,) * 4, m.from_seat)
                break
        else:  # options said it was possible; a mismatch is a bug in the options
            raise FailedPrecondition(f"seat {seat} holds no pong of {_fmt(tile)}")
        s.counts[tile] -= 1
        s.changed()
        self.drawn.pop(seat, None)
        self.turn = seat
        self.last = LastAction(LastActionKind.ADDED_KONG, seat, tile)
        self.emit("meld_declared", seat=seat, meld=_meld_json(s.melds[i]))
        self._step = STEP_WINDOW
        self._then()

    def _open_window(self) -> None:
        """The window on the last discard (or added kong: 抢杠 only): one rules call for every
        other seat's options; prompt those that have any."""
        last = self.last
        seat, tile = last.seat, last.tile
        kind = ROB_KONG if last.kind is LastActionKind.ADDED_KONG else CLAIM
        options = self.rules.claim_options(self.snapshot())
        if kind == ROB_KONG:
            active = {s: o for s, o in options.items() if o.win is not None and s != seat}
        else:
            active = {s: o for s, o in options.items() if o.any and s != seat}
        if not active:
            self._after_window(kind, seat)
            return
        self.window = kind
        self.claims = {}
        self.window_options = active
        ms = self.config.claim_ms
        self.pending = {
            s: Pending(s, kind, o, self._due(s, ms), tile, seat) for s, o in active.items()
        }
        self._step = STEP_NONE
        for s in sorted(self.pending, key=lambda x: (x - seat) % NUM_SEATS):
            p = self.pending[s]
            p.sequence = self._emit_prompt(p)

    def _after_window(self, kind: str, seat: int) -> None:
        """Nobody took the tile: the next seat draws, or the kong is completed."""
        self.window = None
        if kind == ROB_KONG:
            self._draw(seat, replacement=True)
        else:
            self._draw((seat + 1) % NUM_SEATS, replacement=False)

    def _resolve_window(self) -> None:
        kind, claims, last = self.window, self.claims, self.last
        assert kind is not None and last.tile is not None
        tile, discarder = last.tile, last.seat
        if all(isinstance(a, Pass) for a in claims.values()):
            missed = tuple(
                s for s, o in self.window_options.items() if o.win is not None and s in claims
            )
            res = ClaimResolution(tile=tile, missed_wins=missed)
        else:
            res = self.rules.resolve_claims(self.snapshot(), dict(claims))
        for s in res.missed_wins:
            self.seats[s].missed.add(tile)
            self.seats[s].changed()
        self.window, self.claims, self.window_options = None, {}, {}
        if res.winners:
            wins = [(s, res.win_options[s]) for s in res.winners]
            if kind == ROB_KONG:
                self._rob_kong(discarder, tile)
            self._finish_win(wins, discarder)
            return
        if res.taker is None or res.action is None:
            self._after_window(kind, discarder)
            return
        self._take(res.taker, res.action, discarder, tile)

    def _rob_kong(self, seat: int, tile: int) -> None:
        """抢杠: the added kong goes back to a pong; the tile is the robber's win tile."""
        s = self.seats[seat]
        for i, m in enumerate(s.melds):
            if m.kind is MeldKind.ADDED_KONG and m.tiles[0] == tile:
                s.melds[i] = Meld(MeldKind.PONG, (tile,) * 3, m.from_seat)
                break
        s.changed()
        self.robbed_tile = tile

    def _take(self, taker: int, action: Action, discarder: int, tile: int) -> None:
        s = self.seats[taker]
        self.seats[discarder].claimed += 1
        if isinstance(action, Pong):
            s.counts[tile] -= 2
            meld = Meld(MeldKind.PONG, (tile,) * 3, discarder)
        elif isinstance(action, ExposedKong):
            s.counts[tile] -= 3
            meld = Meld(MeldKind.EXPOSED_KONG, (tile,) * 4, discarder)
        elif isinstance(action, Chow):
            for k in action.tiles:
                if k != tile:
                    s.counts[k] -= 1
            meld = Meld(MeldKind.CHOW, action.tiles, discarder)
        else:
            raise FailedPrecondition(f"rules resolved to {action_name(action)}, not a claim")
        s.melds.append(meld)
        s.missed.clear()  # 动牌
        s.changed()
        self.claim_counts[taker][discarder] += 1
        self._claim_counts_tuple = tuple(map(tuple, self.claim_counts))
        self.claims_made.append((taker, discarder, self.seats[discarder].ready))
        self.first_go_around = False
        data = _meld_json(meld)
        data["claimed"] = TILE_TEXT[tile]
        self.emit("meld_declared", seat=taker, meld=data)
        if isinstance(action, ExposedKong):
            self._draw(taker, replacement=True)
            return
        self.turn = taker
        kind = LastActionKind.PONG if isinstance(action, Pong) else LastActionKind.CHOW
        self.last = LastAction(kind, taker, tile)
        self.drawn.pop(taker, None)
        self.replacement_draw = False
        self._prompt_own_turn(taker)

    # --- drawing ---------------------------------------------------------------------------
    def _draw(self, seat: int, *, replacement: bool) -> None:
        """A live or replacement draw; flowers are exposed and replaced from the tail."""
        if seat == self.dealer and not replacement:
            self.first_go_around = False  # the dealer's second turn begins
        after_flower = False
        while True:
            self._step, self._step_seat, self._step_replacement = STEP_DRAW, seat, replacement
            if self.remaining <= self._reserved_tiles:  # nothing drawable
                self._finish_drawn_hand()
                return
            n = self.wall_calls + 1
            if replacement:
                d = self.wall.draw_replacement(self.hand_id, seat, n)
            else:
                d = self.wall.draw(self.hand_id, seat, n)
            self.wall_calls = n
            self.remaining = d.remaining
            if not self._bonus(d.tile):  # not a flower (the wall holds valid kinds only)
                break
            self.seats[seat].flowers.append(d.tile)
            self.seats[seat].changed()
            self.emit(
                "flowers_exposed",
                seat=seat,
                flowers=TILE_TEXT[d.tile],
                replacements="",
                draw="replacement" if replacement else "live",
                tiles_left=self.remaining,
            )
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
        kind = LastActionKind.REPLACEMENT_DRAW if replacement else LastActionKind.DRAW
        self.last = LastAction(kind, seat, d.tile)
        self._emit(
            "tile_drawn",
            {
                "hand_id": self.hand_id,
                "hand_number": self._number,
                "seat": seat,
                "tile": TILE_TEXT[d.tile],
                "replacement": replacement,
                "tiles_left": self.remaining,
            },
        )
        self._prompt_own_turn(seat)

    # --- the end ---------------------------------------------------------------------------
    def _facts(self, **kw: Any) -> HandFacts:
        cfg = self.config
        return HandFacts(
            ruleset_name=cfg.ruleset_name,
            overrides=dict(cfg.overrides),
            stake=cfg.stake,
            dealer=self.dealer,
            dice=self.dice,
            huangfan=cfg.huangfan,
            ready=ready_seats(self.seats, cfg.ruleset, (w.seat for w in kw.get("winners", ()))),
            claims=tuple(self.claims_made),
            first_go_around=self.first_go_around,
            garden_stacks=cfg.garden_stacks,
            **kw,
        )

    def _finish_win(self, wins: list[tuple[int, WinOption]], from_seat: int | None) -> None:
        """Settle a win. Service calls (scoring, the wall's reveal) come before any event, so a
        failed call can be retried without repeating facts."""
        self._step, self._step_wins, self._step_from = STEP_WIN, wins, from_seat
        win_kind = wins[0][1].kind
        winners = []
        for seat, opt in wins:
            s = self.seats[seat]
            counts = list(s.counts)
            if win_kind == WinKind.SELF_DRAW and opt.win_tile is not None:
                counts[opt.win_tile] -= 1
            winners.append(
                WinnerInput(
                    seat=seat,
                    concealed=tuple(T.from_counts(counts)),
                    melds=tuple(s.melds),
                    flowers=tuple(s.flowers),
                    win_tile=opt.win_tile,
                )
            )
        facts = self._facts(
            winners=tuple(winners),
            win=win_kind.label,
            from_seat=from_seat,
            replacement=any(o.replacement for _, o in wins),
            last_tile=win_kind == WinKind.SELF_DRAW and self.remaining <= self._reserved_tiles,
            replacement_after="flower" if self.replaced_flower else "kong",
            feeder_hand=self._feeder_hand(from_seat, win_kind, wins[0][1].win_tile),
            wild_indicator=self.flipped[-1] if self.flipped else None,
        )
        self.settlement = self.scoring.settle_win(facts)
        reveal = self.wall.reveal(self.hand_id)
        self.pending = {}
        self.outcome = "win"
        for seat, opt in wins:
            self.emit(
                "win_declared",
                seat=seat,
                win_kind=opt.kind.label,
                tile=TILE_TEXT[opt.win_tile] if opt.win_tile is not None else "",
                from_seat=from_seat,
                hand=HandType(opt.hand).label,
            )
        reveal_all = win_kind == WinKind.DISCARD
        shown = range(NUM_SEATS) if reveal_all else [s for s, _ in wins]
        self._publish_result("win", wins, shown, reveal)

    def _feeder_hand(
        self, seat: int | None, kind: WinKind, tile: int | None
    ) -> tuple[tuple[int, ...], tuple[Meld, ...]] | None:
        """The discarder's (robbed player's) hand after the winning tile left it: a robbed
        added kong is a pong again (RULES-presets §13.0 ``from_hand``)."""
        if seat is None or kind not in (WinKind.DISCARD, WinKind.ROB_KONG):
            return None
        s = self.seats[seat]
        melds = tuple(
            Meld(MeldKind.PONG, m.tiles[:3], m.from_seat)
            if kind == WinKind.ROB_KONG and m.kind is MeldKind.ADDED_KONG and m.tiles[0] == tile
            else m
            for m in s.melds
        )
        return tuple(T.from_counts(s.counts)), melds

    def _finish_drawn_hand(self) -> None:
        self.settlement = self.scoring.settle_draw(self._facts())
        reveal = self.wall.reveal(self.hand_id)
        self.pending = {}
        self.outcome = "draw"
        self.emit("hand_drawn", tiles_left=self.remaining)
        self._publish_result("draw", [], [], reveal)

    def _publish_result(
        self, outcome: str, wins: list[tuple[int, WinOption]], shown, rv: WallReveal
    ) -> None:
        st = self.settlement
        assert st is not None
        win_of = dict(wins)
        stacks = self.config.garden_stacks  # 逛花园: the stacks after this hand
        self.emit(
            "hand_result",
            **(
                {}
                if stacks is None
                else {"garden_stacks": [b + p for b, p in zip(stacks, st.payments, strict=True)]}
            ),
            outcome=outcome,
            winners=[
                {
                    "seat": w.seat,
                    "hand": HandType(w.hand).label,
                    "flowers": w.flowers,
                    "value": w.value,
                    "win_kind": win_of[w.seat].kind.label if w.seat in win_of else "",
                    "win_tile": _fmt_opt(win_of[w.seat].win_tile) if w.seat in win_of else "",
                }
                for w in st.winners
            ],
            from_seat=self.last.seat if outcome == "win" and wins and _from_other(wins) else None,
            payments=list(st.payments),
            house=st.house,
            breakdown=[
                {"seat": b.seat, "code": b.code, "label": b.label, "amount": b.amount}
                for b in st.breakdown
            ],
            revealed=[self._reveal(s) for s in shown],
            next_dealer=st.next_dealer,
            next_huangfan=0 if self.huangfan_reset else st.next_huangfan,
            robbed_tile=_fmt_opt(self.robbed_tile),
        )
        self.emit("seed_revealed", seed=rv.seed, commitment=rv.commitment or self.commitment)
        self.finished = True
        self._step = STEP_NONE

    def _reveal(self, seat: int) -> dict[str, Any]:
        s = self.seats[seat]
        return {
            "seat": seat,
            "concealed": T.format_tiles(s.concealed_tiles()),
            "melds": [_meld_json(m) for m in s.melds],
            "flowers": T.format_tiles(s.flowers),
        }

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

    def tiles_accounted(self) -> int:
        """Tiles in hands, melds, flowers, unclaimed discards and the wall: always the set's
        144 (152 or 148 in the 百搭 sets)."""
        n = self.remaining + (1 if self.robbed_tile is not None else 0) + len(self.flipped)
        for s in self.seats:
            n += sum(s.counts) + sum(len(m.tiles) for m in s.melds) + len(s.flowers)
            n += len(s.discards) - s.claimed
        return n

    def copy_state(self) -> dict[str, Any]:
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


def _from_other(wins: list[tuple[int, WinOption]]) -> bool:
    return wins[0][1].kind in (WinKind.DISCARD, WinKind.ROB_KONG)


def _choose_win(wins: tuple[WinOption, ...], eight_flowers: bool) -> WinOption:
    """The win a bare 胡 declares: 八花齐 only when asked for or the only one offered."""
    shaped = [w for w in wins if w.hand != HandType.EIGHT_FLOWERS]
    flowers = [w for w in wins if w.hand == HandType.EIGHT_FLOWERS]
    if eight_flowers and flowers:
        return flowers[0]
    return (shaped or flowers)[0]


def _fmt(k: int | None) -> str:
    return TILE_TEXT[k] if k is not None else "?"


def _fmt_opt(k: int | None) -> str:
    return TILE_TEXT[k] if k is not None else ""


def _fmts(ks) -> str:
    return " ".join(TILE_TEXT[k] for k in ks)
