"""The table's events: one class per kind, the facts of a table as its log keeps them.

Every fact a table publishes is one of these values (frozen dataclasses, compiled with the
engine), stored complete in the table's log (:mod:`.codec`) and cut down per viewer by
:mod:`.views`. Tiles are kinds (ints, :mod:`shared.tiles`), seats 0-3; ``None`` is "none" (no
tile, no seat) — and, in a viewer's copy, a hidden tile. Every event names the hand it belongs
to (``hand_id``, ``hand_number``; empty between hands).

:data:`KINDS` names every class as the log and the API do (``tile_drawn``, …); an event's
``KIND`` is that name. A class listed there without a rule in :mod:`.views` or a converter in
the gateway's proto conversion fails the import: no kind reaches a viewer unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Final

from shared.melds import Meld, MeldKind
from shared.table import Decision

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_MELD_CONCEALED_KONG: Final = MeldKind.CONCEALED_KONG

# What a prompt asks for (Prompt.kind, TimedOut.kind).
OWN_TURN: Final = "own_turn"
CLAIM: Final = "claim"
ROB_KONG: Final = "rob_kong"
SWAP: Final = "tile_swap"


class Record:
    """Base of the values built on the engine's hot path: plain compiled classes (a dataclass's
    generated ``__init__`` costs several times a dict here), each naming its ``FIELDS``;
    equality, ``repr`` and :meth:`replace` are defined once, here. Treat them as immutable."""

    FIELDS: ClassVar[tuple[str, ...]] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.FIELDS)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        args = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({args})"

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` (field name -> value)."""
        args = {f: getattr(self, f) for f in self.FIELDS}
        args.update(changes)
        return type(self)(**args)


# --- values inside events --------------------------------------------------------------------


@dataclass(frozen=True)
class SeatAssignment:
    """Who sits in a seat when the table starts (empty player id: an open seat)."""

    player_id: str
    display_name: str
    bot: bool


@dataclass(frozen=True)
class MeldFact:
    """A meld as an event shows it: its kind and tiles, whom it was claimed from and which
    tile was claimed. ``tiles`` is empty in another seat's copy of a concealed kong (暗杠)."""

    kind: MeldKind
    tiles: tuple[int, ...]
    from_seat: int | None = None
    claimed: int | None = None

    @staticmethod
    def of(meld: Meld, claimed: int | None = None) -> MeldFact:
        return MeldFact(meld.kind, meld.tiles, meld.from_seat, claimed)

    def hidden(self) -> MeldFact:
        """This meld as others see it: a concealed kong shows no face, anything else all."""
        if self.kind is _MELD_CONCEALED_KONG and self.tiles:
            return MeldFact(self.kind, (), None, None)
        return self


class PromptOptions(Record):
    """What a prompted seat may do (the rules' options, as the prompt carries them).

    Own turn: ``discards``, ``ready_discards`` (敲), ``concealed_kongs``, ``added_kongs``,
    ``win`` and, when 八花齐 is offered, ``win_eight_flowers`` with ``win_shape`` (a shaped win
    is offered too). Claim or 抢杠: ``win``, ``pong``, ``exposed_kong``, ``chows`` (the runs'
    low tiles), ``pass_``. 换牌: ``swap_count`` and ``pass_``."""

    FIELDS = (
        "discards",
        "ready_discards",
        "concealed_kongs",
        "added_kongs",
        "win",
        "win_eight_flowers",
        "win_shape",
        "pong",
        "exposed_kong",
        "chows",
        "swap_count",
        "pass_",
    )

    def __init__(
        self,
        discards: tuple[int, ...] = (),
        ready_discards: tuple[int, ...] = (),
        concealed_kongs: tuple[int, ...] = (),
        added_kongs: tuple[int, ...] = (),
        win: bool = False,
        win_eight_flowers: bool = False,
        win_shape: bool = False,
        pong: bool = False,
        exposed_kong: bool = False,
        chows: tuple[int, ...] = (),
        swap_count: int = 0,
        pass_: bool = False,
    ) -> None:
        self.discards = discards
        self.ready_discards = ready_discards
        self.concealed_kongs = concealed_kongs
        self.added_kongs = added_kongs
        self.win = win
        self.win_eight_flowers = win_eight_flowers
        self.win_shape = win_shape
        self.pong = pong
        self.exposed_kong = exposed_kong
        self.chows = chows
        self.swap_count = swap_count
        self.pass_ = pass_


@dataclass(frozen=True)
class WinnerLine:
    """One winner of a hand's result."""

    seat: int
    hand: str  # the hand type's label (HandType.label)
    flowers: int
    value: int
    win_kind: str  # WinKind label, "" when unknown
    win_tile: int | None


@dataclass(frozen=True)
class BreakdownLine:
    """One line of the scoring breakdown (seat None: the whole table)."""

    seat: int | None
    code: str
    label: str
    amount: int


@dataclass(frozen=True)
class RevealedHand:
    """A seat's tiles shown at the end of a hand."""

    seat: int
    concealed: tuple[int, ...]
    melds: tuple[MeldFact, ...]
    flowers: tuple[int, ...]


# --- the events ------------------------------------------------------------------------------


class TableEvent(Record):
    """Base of every event class: each lists its fields, the hand's id and number last."""

    @property
    def KIND(self) -> str:
        """The kind's name in the log and the API (``tile_drawn``, …)."""
        return KIND_NAMES[type(self)]


class TableStarted(TableEvent):
    """The table opens: its rules, stake, seats and limits; ``seat_deadline_ms`` when open
    seats are waited for until then; ``first_dealer``: the seat dealing the first hand (drawn at
    random unless asked for), so a replica taking the table over before that hand's
    HandStarted is logged asks the wall for the same hand (None in records written before);
    ``end_by_ms``: the table's deadline, Unix ms, after which no hand is dealt (0 = none, and
    in records written before it existed)."""

    FIELDS = (
        "ruleset",
        "overrides",
        "stake",
        "seats",
        "max_hands",
        "max_rounds",
        "tag",
        "seat_deadline_ms",
        "first_dealer",
        "end_by_ms",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        ruleset: str,
        overrides: dict[str, str],
        stake: int,
        seats: tuple[SeatAssignment, ...],
        max_hands: int,
        max_rounds: int,
        tag: str,
        seat_deadline_ms: int = 0,
        first_dealer: int | None = None,
        end_by_ms: int = 0,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.ruleset = ruleset
        self.overrides = overrides
        self.stake = stake
        self.seats = seats
        self.max_hands = max_hands
        self.max_rounds = max_rounds
        self.tag = tag
        self.seat_deadline_ms = seat_deadline_ms
        self.first_dealer = first_dealer
        self.end_by_ms = end_by_ms
        self.hand_id = hand_id
        self.hand_number = hand_number


class HandStarted(TableEvent):
    """A hand begins: the wall's commitment and dice, the dealer, 开宝 and the 荒番 it is played
    under (``huangfan_dice``: the dice's part, under ``scoring.dice_huangfan``)."""

    FIELDS = (
        "dealer",
        "dice",
        "commitment",
        "kaibao",
        "huangfan",
        "huangfan_dice",
        "garden_stacks",
        "hand_id",
        "hand_number",
        "doubled_seats",
    )

    def __init__(
        self,
        dealer: int,
        dice: tuple[int, int],
        commitment: str,
        kaibao: bool,
        huangfan: int,
        huangfan_dice: int | None = None,
        garden_stacks: tuple[int, ...] | None = None,
        hand_id: str = "",
        hand_number: int = 0,
        doubled_seats: tuple[int, ...] = (),
    ) -> None:
        self.doubled_seats = doubled_seats  # seats that played a 加倍卡 for this hand
        self.dealer = dealer
        self.dice = dice
        self.commitment = commitment
        self.kaibao = kaibao
        self.huangfan = huangfan
        self.huangfan_dice = huangfan_dice
        self.garden_stacks = garden_stacks  # 逛花园: each seat's chips before the hand
        self.hand_id = hand_id
        self.hand_number = hand_number


class TilesDealt(TableEvent):
    """The deal: each seat's starting tiles in the order dealt. A viewer's copy holds its own
    tiles only, and ``counts`` (how many each seat got)."""

    FIELDS = (
        "hands",
        "tiles_left",
        "counts",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        hands: tuple[tuple[int, ...], ...],
        tiles_left: int,
        counts: tuple[int, ...] = (),
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.hands = hands
        self.tiles_left = tiles_left
        self.counts = counts
        self.hand_id = hand_id
        self.hand_number = hand_number


class FlowersExposed(TableEvent):
    """补花: a seat shows flowers and draws their replacements from the tail (``draw``: at the
    ``deal``, a ``live`` or ``replacement`` draw, or a ``swap``). Others see how many
    replacements it drew (``replacement_count``), not which."""

    FIELDS = (
        "seat",
        "flowers",
        "replacements",
        "draw",
        "tiles_left",
        "replacement_count",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        flowers: tuple[int, ...],
        replacements: tuple[int, ...],
        draw: str,
        tiles_left: int,
        replacement_count: int | None = None,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.flowers = flowers
        self.replacements = replacements
        self.draw = draw
        self.tiles_left = tiles_left
        self.replacement_count = replacement_count
        self.hand_id = hand_id
        self.hand_number = hand_number


class TileDrawn(TableEvent):
    """摸牌: a seat draws (from the tail when ``replacement``); the tile is the drawer's own."""

    FIELDS = (
        "seat",
        "tile",
        "replacement",
        "tiles_left",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        tile: int | None,
        replacement: bool,
        tiles_left: int,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.tile = tile
        self.replacement = replacement
        self.tiles_left = tiles_left
        self.hand_id = hand_id
        self.hand_number = hand_number


class TileDiscarded(TableEvent):
    """打牌: a discard (with 敲 when ``declared_ready``; ``drawn_tile``: the tile just drawn)."""

    FIELDS = (
        "seat",
        "tile",
        "declared_ready",
        "auto",
        "drawn_tile",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        tile: int,
        declared_ready: bool,
        auto: bool,
        drawn_tile: bool,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.tile = tile
        self.declared_ready = declared_ready
        self.auto = auto
        self.drawn_tile = drawn_tile
        self.hand_id = hand_id
        self.hand_number = hand_number


class MeldDeclared(TableEvent):
    """A chow, pong or kong is declared (a claimed one names the tile it took)."""

    FIELDS = (
        "seat",
        "meld",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        meld: MeldFact,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.meld = meld
        self.hand_id = hand_id
        self.hand_number = hand_number


class ReadyDeclared(TableEvent):
    """敲: the seat declared ready."""

    FIELDS = (
        "seat",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.hand_id = hand_id
        self.hand_number = hand_number


class Prompt(TableEvent):
    """A decision the seat owes now (``kind``: own_turn, claim, rob_kong or tile_swap), its
    options and deadline; ``tile`` is the drawn tile or the tile under claim."""

    FIELDS = (
        "seat",
        "kind",
        "options",
        "deadline_ms",
        "tile",
        "from_seat",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        kind: str,
        options: PromptOptions,
        deadline_ms: int,
        tile: int | None,
        from_seat: int | None,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.kind = kind
        self.options = options
        self.deadline_ms = deadline_ms
        self.tile = tile
        self.from_seat = from_seat
        self.hand_id = hand_id
        self.hand_number = hand_number


class ActionTaken(TableEvent):
    """The log's record of an applied decision (``auto``: the timer's, a bot's or 托管's), for
    restores and replays; no viewer sees it. ``request_id``: the Act that made a player's
    decision, so a replica taking the table over knows it was applied even when the owner
    died before keeping its request record ("" for automatic ones and older records)."""

    FIELDS = (
        "seat",
        "action",
        "auto",
        "request_id",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        action: Decision,
        auto: bool,
        request_id: str = "",
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.action = action
        self.auto = auto
        self.request_id = request_id
        self.hand_id = hand_id
        self.hand_number = hand_number


class WinDeclared(TableEvent):
    """胡: a seat wins (``hand``: the hand type's label)."""

    FIELDS = (
        "seat",
        "win_kind",
        "tile",
        "from_seat",
        "hand",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        win_kind: str,
        tile: int | None,
        from_seat: int | None,
        hand: str,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.win_kind = win_kind
        self.tile = tile
        self.from_seat = from_seat
        self.hand = hand
        self.hand_id = hand_id
        self.hand_number = hand_number


class HandResult(TableEvent):
    """A hand is settled (``outcome``: win, draw or escape): winners, payments, the house's
    share, the breakdown, the hands shown, and what the next hand is played under."""

    FIELDS = (
        "outcome",
        "winners",
        "payments",
        "house",
        "breakdown",
        "revealed",
        "next_dealer",
        "next_huangfan",
        "from_seat",
        "robbed_tile",
        "escaped_seat",
        "garden_stacks",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        outcome: str,
        winners: tuple[WinnerLine, ...],
        payments: tuple[int, ...],
        house: int,
        breakdown: tuple[BreakdownLine, ...],
        revealed: tuple[RevealedHand, ...],
        next_dealer: int,
        next_huangfan: int,
        from_seat: int | None = None,
        robbed_tile: int | None = None,
        escaped_seat: int | None = None,
        garden_stacks: tuple[int, ...] | None = None,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.outcome = outcome
        self.winners = winners
        self.payments = payments
        self.house = house
        self.breakdown = breakdown
        self.revealed = revealed
        self.next_dealer = next_dealer
        self.next_huangfan = next_huangfan
        self.from_seat = from_seat
        self.robbed_tile = robbed_tile
        self.escaped_seat = escaped_seat
        self.garden_stacks = garden_stacks  # 逛花园: the stacks after the hand
        self.hand_id = hand_id
        self.hand_number = hand_number


class SeedRevealed(TableEvent):
    """The wall's seed once the hand is over (it hashes to the hand's commitment)."""

    FIELDS = (
        "seed",
        "commitment",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seed: str,
        commitment: str,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seed = seed
        self.commitment = commitment
        self.hand_id = hand_id
        self.hand_number = hand_number


class HandDrawn(TableEvent):
    """流局: the wall ran out."""

    FIELDS = (
        "tiles_left",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        tiles_left: int,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.tiles_left = tiles_left
        self.hand_id = hand_id
        self.hand_number = hand_number


class TableFinished(TableEvent):
    """The table ends (``reason``: max_hands, max_rounds, players_left, seats_not_filled)."""

    FIELDS = (
        "hands_played",
        "chips",
        "reason",
        "rounds_played",
        "garden_stacks",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        hands_played: int,
        chips: tuple[int, ...],
        reason: str,
        rounds_played: int,
        garden_stacks: tuple[int, ...] | None = None,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.hands_played = hands_played
        self.chips = chips
        self.reason = reason
        self.rounds_played = rounds_played
        self.garden_stacks = garden_stacks
        self.hand_id = hand_id
        self.hand_number = hand_number


class SeatChanged(TableEvent):
    """A seat's occupant changed (``reason``: joined, left, auto_play_on, auto_play_off).
    ``private``: for the seat only (a 托管 the others have not been told of);
    ``deadline_private``: the new ``deadline_ms`` is the seat's own (a claim is pending)."""

    FIELDS = (
        "seat",
        "player_id",
        "bot",
        "reason",
        "auto_play",
        "left",
        "deadline_ms",
        "private",
        "deadline_private",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        player_id: str,
        bot: bool,
        reason: str,
        auto_play: bool = False,
        left: bool = False,
        deadline_ms: int = 0,
        private: bool = False,
        deadline_private: bool = False,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.player_id = player_id
        self.bot = bot
        self.reason = reason
        self.auto_play = auto_play
        self.left = left
        self.deadline_ms = deadline_ms
        self.private = private
        self.deadline_private = deadline_private
        self.hand_id = hand_id
        self.hand_number = hand_number


class TilesSwapped(TableEvent):
    """换牌: a seat buried tiles in the wall and took as many; others see how many."""

    FIELDS = (
        "seat",
        "buried",
        "taken",
        "count",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        buried: tuple[int, ...],
        taken: tuple[int, ...],
        count: int | None = None,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.buried = buried
        self.taken = taken
        self.count = count
        self.hand_id = hand_id
        self.hand_number = hand_number


class TimedOut(TableEvent):
    """A seat missed a decision (``kind``: the prompt's); ``in_a_row`` counts its misses."""

    FIELDS = (
        "seat",
        "kind",
        "in_a_row",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        seat: int,
        kind: str,
        in_a_row: int,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.kind = kind
        self.in_a_row = in_a_row
        self.hand_id = hand_id
        self.hand_number = hand_number


class TableHalted(TableEvent):
    """The table stopped on an error no retry mends (a bug, not a service being down): every
    seat is told; the table's log is kept as it is for an operator. ``reason`` is a code
    (ENGINE_FAILED), ``message`` for people, ``error`` the exception's type and text."""

    FIELDS = (
        "reason",
        "message",
        "error",
        "hand_id",
        "hand_number",
    )

    def __init__(
        self,
        reason: str,
        message: str,
        error: str,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.reason = reason
        self.message = message
        self.error = error
        self.hand_id = hand_id
        self.hand_number = hand_number


class WildFlipped(TableEvent):
    """翻百搭 (``baida_tiles.wildcards = "flipped"``): after the deal's 补花 the wall turns up the
    indicator from the replacement end (``set_aside``: bonus tiles turned before it, set aside);
    ``wild`` is the kind that is 百搭 this hand. Public: the tiles lie face up."""

    FIELDS = ("indicator", "wild", "set_aside", "tiles_left", "hand_id", "hand_number")

    def __init__(
        self,
        indicator: int,
        wild: int,
        set_aside: tuple[int, ...],
        tiles_left: int,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.indicator = indicator
        self.wild = wild
        self.set_aside = set_aside
        self.tiles_left = tiles_left
        self.hand_id = hand_id
        self.hand_number = hand_number


class DoubleCardPlayed(TableEvent):
    """加倍卡 (RULES-items §2): ``seat`` played a double card for hand ``doubled_hand`` (the
    table's next hand), between hands or before the first deal. Public: every seat and
    spectator sees who doubled. The head names the hand before it (empty before the first)."""

    FIELDS = ("seat", "doubled_hand", "hand_id", "hand_number")

    def __init__(self, seat: int, doubled_hand: int, hand_id: str = "", hand_number: int = 0):
        self.seat = seat
        self.doubled_hand = doubled_hand
        self.hand_id = hand_id
        self.hand_number = hand_number


class SeatBankrupt(TableEvent):
    """破产 (RULES-items §4): after hand ``after_hand`` the player of ``seat`` no longer covers
    the most one hand can cost at the table's stake (matchmaking's answer to that hand's
    report), so they left the table and the bot ``bot_id`` took the seat before the next deal.
    Public: every seat and spectator sees who went bankrupt. Between hands: the head is empty."""

    FIELDS = ("seat", "player_id", "bot_id", "after_hand", "hand_id", "hand_number")

    def __init__(
        self,
        seat: int,
        player_id: str,
        bot_id: str,
        after_hand: int,
        hand_id: str = "",
        hand_number: int = 0,
    ) -> None:
        self.seat = seat
        self.player_id = player_id
        self.bot_id = bot_id
        self.after_hand = after_hand
        self.hand_id = hand_id
        self.hand_number = hand_number


# Every kind by its name in the log and the API.
KINDS: dict[str, type[TableEvent]] = {
    "table_started": TableStarted,
    "hand_started": HandStarted,
    "tiles_dealt": TilesDealt,
    "flowers_exposed": FlowersExposed,
    "tile_drawn": TileDrawn,
    "tile_discarded": TileDiscarded,
    "meld_declared": MeldDeclared,
    "ready_declared": ReadyDeclared,
    "prompt": Prompt,
    "action": ActionTaken,
    "win_declared": WinDeclared,
    "hand_result": HandResult,
    "seed_revealed": SeedRevealed,
    "hand_drawn": HandDrawn,
    "table_finished": TableFinished,
    "seat_changed": SeatChanged,
    "tiles_swapped": TilesSwapped,
    "timed_out": TimedOut,
    "table_halted": TableHalted,
    "wild_flipped": WildFlipped,
    "double_card_played": DoubleCardPlayed,
    "seat_bankrupt": SeatBankrupt,
}
KIND_NAMES: dict[type[TableEvent], str] = {cls: name for name, cls in KINDS.items()}
EVENT_CLASSES: tuple[type[TableEvent], ...] = tuple(KINDS.values())
