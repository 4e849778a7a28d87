"""The table's events: one class per kind, the facts of a table as its log keeps them.

Every fact a table publishes is one of these values (dataclasses, each field declared once),
stored complete in the table's log (:mod:`.codec`) and cut down per viewer by :mod:`.views`.
Tiles are kinds (ints, :mod:`shared.tiles`), seats 0-3; ``None`` is "none" (no tile, no seat) —
and, in a viewer's copy, a hidden tile. Every event names the hand it belongs to (``hand_id``,
``hand_number``; empty between hands). Treat events as immutable: a changed
copy is :meth:`TableEvent.replace`'s.

A class's fields, in order, are its record's keys in the order written (:func:`field_names`):
add a field at the end of a class, with a default, so that older records still read. Keep the
events and :class:`PromptOptions` bare ``@dataclass`` classes with plain fields: compiled
(pyproject.toml ``native_classes``), mypyc gets them spelled out as native classes with the
same ``__init__``, equality and repr (:mod:`build_support.native_classes`), since a compiled
dataclass's ``__init__`` stays interpreted and the engine builds hundreds of events a hand.

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


@dataclass
class PromptOptions:
    """What a prompted seat may do (the rules' options, as the prompt carries them).

    Own turn: ``discards``, ``ready_discards`` (敲), ``concealed_kongs``, ``added_kongs``,
    ``win`` and, when 八花齐 is offered, ``win_eight_flowers`` with ``win_shape`` (a shaped win
    is offered too). Claim or 抢杠: ``win``, ``pong``, ``exposed_kong``, ``chows`` (the runs'
    low tiles), ``pass_``. 换牌: ``swap_count`` and ``pass_``."""

    discards: tuple[int, ...] = ()
    ready_discards: tuple[int, ...] = ()
    concealed_kongs: tuple[int, ...] = ()
    added_kongs: tuple[int, ...] = ()
    win: bool = False
    win_eight_flowers: bool = False
    win_shape: bool = False
    pong: bool = False
    exposed_kong: bool = False
    chows: tuple[int, ...] = ()
    swap_count: int = 0
    pass_: bool = False


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
    other_seat: int | None = None  # the counterparty (a TRANSFER's payee)


@dataclass(frozen=True)
class RevealedHand:
    """A seat's tiles shown at the end of a hand."""

    seat: int
    concealed: tuple[int, ...]
    melds: tuple[MeldFact, ...]
    flowers: tuple[int, ...]


# --- the events ------------------------------------------------------------------------------


class TableEvent:
    """Base of every event class: a dataclass whose fields end with the hand's id and number
    (and the fields added since, each with a default)."""

    __match_args__: ClassVar[tuple[str, ...]] = ()  # each class's fields, in order

    @property
    def KIND(self) -> str:
        """The kind's name in the log and the API (``tile_drawn``, …)."""
        return KIND_NAMES[type(self)]

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` (field name -> value)."""
        args = {name: getattr(self, name) for name in self.__match_args__}
        args.update(changes)
        return type(self)(**args)


def field_names(cls: type[TableEvent]) -> tuple[str, ...]:
    """The fields of an event class, in order: its record's keys, in the order written."""
    return cls.__match_args__


@dataclass
class TableStarted(TableEvent):
    """The table opens: its rules, stake, seats and limits; ``seat_deadline_ms`` when open
    seats are waited for until then; ``first_dealer``: the seat dealing the first hand (drawn at
    random unless asked for), so a replica taking the table over before that hand's
    HandStarted is logged asks the wall for the same hand (None in records written before);
    ``end_by_ms``: the table's deadline, Unix ms, after which no hand is dealt (0 = none, and
    in records written before it existed)."""

    ruleset: str
    overrides: dict[str, str]
    stake: int
    seats: tuple[SeatAssignment, ...]
    max_hands: int
    max_rounds: int
    tag: str
    seat_deadline_ms: int = 0
    first_dealer: int | None = None
    end_by_ms: int = 0
    hand_id: str = ""
    hand_number: int = 0
    fee_per_hand: int = 0  # 台费: chips per hand from each player's seat (0 = none)


@dataclass
class HandStarted(TableEvent):
    """A hand begins: the wall's commitment and dice, the dealer, 开宝 and the 荒番 it is played
    under (``huangfan_dice``: the dice's part, under ``scoring.dice_huangfan``)."""

    dealer: int
    dice: tuple[int, int]
    commitment: str
    kaibao: bool
    huangfan: int
    huangfan_dice: int | None = None
    garden_stacks: tuple[int, ...] | None = None  # 逛花园: each seat's chips before the hand
    hand_id: str = ""
    hand_number: int = 0
    doubled_seats: tuple[int, ...] = ()  # seats that played a 加倍卡 for this hand
    fees: tuple[int, ...] = ()  # 台费 each seat pays for this hand, fixed at the deal


@dataclass
class TilesDealt(TableEvent):
    """The deal: each seat's starting tiles in the order dealt. A viewer's copy holds its own
    tiles only, and ``counts`` (how many each seat got)."""

    hands: tuple[tuple[int, ...], ...]
    tiles_left: int
    counts: tuple[int, ...] = ()
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class FlowersExposed(TableEvent):
    """补花: a seat shows flowers and draws their replacements from the tail (``draw``: at the
    ``deal``, a ``live`` or ``replacement`` draw, or a ``swap``). Others see how many
    replacements it drew (``replacement_count``), not which."""

    seat: int
    flowers: tuple[int, ...]
    replacements: tuple[int, ...]
    draw: str
    tiles_left: int
    replacement_count: int | None = None
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class TileDrawn(TableEvent):
    """摸牌: a seat draws (from the tail when ``replacement``); the tile is the drawer's own."""

    seat: int
    tile: int | None
    replacement: bool
    tiles_left: int
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class TileDiscarded(TableEvent):
    """打牌: a discard (with 敲 when ``declared_ready``; ``drawn_tile``: the tile just drawn)."""

    seat: int
    tile: int
    declared_ready: bool
    auto: bool
    drawn_tile: bool
    hand_id: str = ""
    hand_number: int = 0
    # The claim window's hold drawn for this discard (ms; RULES §4): the log's, for a replica
    # taking the table over mid-window; no viewer sees it (events.views).
    hold_ms: int = 0


@dataclass
class MeldDeclared(TableEvent):
    """A chow, pong or kong is declared (a claimed one names the tile it took)."""

    seat: int
    meld: MeldFact
    hand_id: str = ""
    hand_number: int = 0
    hold_ms: int = 0  # an added kong's 抢杠 window's hold, as TileDiscarded's


@dataclass
class ReadyDeclared(TableEvent):
    """敲: the seat declared ready."""

    seat: int
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class Prompt(TableEvent):
    """A decision the seat owes now (``kind``: own_turn, claim, rob_kong or tile_swap), its
    options and deadline; ``tile`` is the drawn tile or the tile under claim."""

    seat: int
    kind: str
    options: PromptOptions
    deadline_ms: int
    tile: int | None
    from_seat: int | None
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class ActionTaken(TableEvent):
    """The log's record of an applied decision (``auto``: the timer's, a bot's or 托管's), for
    restores and replays; no viewer sees it. ``request_id``: the Act that made a player's
    decision, so a replica taking the table over knows it was applied even when the owner
    died before keeping its request record ("" for automatic ones and older records)."""

    seat: int
    action: Decision
    auto: bool
    request_id: str = ""
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class WinDeclared(TableEvent):
    """胡: a seat wins (``hand``: the hand type's label)."""

    seat: int
    win_kind: str
    tile: int | None
    from_seat: int | None
    hand: str
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class HandResult(TableEvent):
    """A hand is settled (``outcome``: win, draw or escape): winners, payments, the house's
    share, the breakdown, the hands shown, and what the next hand is played under."""

    outcome: str
    winners: tuple[WinnerLine, ...]
    payments: tuple[int, ...]
    house: int
    breakdown: tuple[BreakdownLine, ...]
    revealed: tuple[RevealedHand, ...]
    next_dealer: int
    next_huangfan: int
    from_seat: int | None = None
    robbed_tile: int | None = None
    escaped_seat: int | None = None
    garden_stacks: tuple[int, ...] | None = None  # 逛花园: the stacks after the hand
    escape_reason: str = ""  # an escape's: "left" (Leave) or "disconnected" (掉线)
    hand_id: str = ""
    hand_number: int = 0
    fees: tuple[int, ...] = ()  # 台费 each seat paid the house, apart from payments


@dataclass
class SeedRevealed(TableEvent):
    """The wall's seed once the hand is over (it hashes to the hand's commitment)."""

    seed: str
    commitment: str
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class HandDrawn(TableEvent):
    """流局: the wall ran out."""

    tiles_left: int
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class TableFinished(TableEvent):
    """The table ends (``reason``: max_hands, max_rounds, players_left, seats_not_filled)."""

    hands_played: int
    chips: tuple[int, ...]
    reason: str
    rounds_played: int
    garden_stacks: tuple[int, ...] | None = None
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class SeatChanged(TableEvent):
    """A seat's occupant changed (``reason``: joined, left, auto_play_on, auto_play_off, and
    掉线's disconnected — no stream and no call for the ruleset's grace — and reconnected).
    ``private``: for the seat only (a 托管 the others have not been told of);
    ``deadline_private``: the new ``deadline_ms`` is the seat's own (a claim is pending)."""

    seat: int
    player_id: str
    bot: bool
    reason: str
    auto_play: bool = False
    left: bool = False
    deadline_ms: int = 0
    private: bool = False
    deadline_private: bool = False
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class TilesSwapped(TableEvent):
    """换牌: a seat buried tiles in the wall and took as many; others see how many."""

    seat: int
    buried: tuple[int, ...]
    taken: tuple[int, ...]
    count: int | None = None
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class TimedOut(TableEvent):
    """A seat missed a decision (``kind``: the prompt's); ``in_a_row`` counts its misses."""

    seat: int
    kind: str
    in_a_row: int
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class TableHalted(TableEvent):
    """The table stopped on an error no retry mends (a bug, not a service being down): every
    seat is told; the table's log is kept as it is for an operator. ``reason`` is a code
    (ENGINE_FAILED), ``message`` for people, ``error`` the exception's type and text."""

    reason: str
    message: str
    error: str
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class WildFlipped(TableEvent):
    """翻百搭 (``baida_tiles.wildcards = "flipped"``): after the deal's 补花 the wall turns up the
    indicator from the replacement end (``set_aside``: bonus tiles turned before it, set aside);
    ``wild`` is the kind that is 百搭 this hand. Public: the tiles lie face up."""

    indicator: int
    wild: int
    set_aside: tuple[int, ...]
    tiles_left: int
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class DoubleCardPlayed(TableEvent):
    """加倍卡 (RULES-items §2): ``seat`` played a double card for hand ``doubled_hand`` (the
    table's next hand), between hands or before the first deal. Public: every seat and
    spectator sees who doubled. The head names the hand before it (empty before the first)."""

    seat: int
    doubled_hand: int
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class SeatBankrupt(TableEvent):
    """破产 (RULES-items §4): after hand ``after_hand`` the player of ``seat`` no longer covers
    the most one hand can cost at the table's stake (matchmaking's answer to that hand's
    report), so they left the table and the bot ``bot_id`` took the seat before the next deal.
    Public: every seat and spectator sees who went bankrupt. Between hands: the head is empty."""

    seat: int
    player_id: str
    bot_id: str
    after_hand: int
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class NextHandReady(TableEvent):
    """Next (RULES §11 "Between hands"): the person in ``seat`` pressed Next after hand
    ``after_hand``'s result. Public, so every viewer sees who is ready at once; in the log, so
    a replica taking the table over between hands keeps who is ready. Between hands: the head
    is empty."""

    seat: int
    after_hand: int
    hand_id: str = ""
    hand_number: int = 0


@dataclass
class WindowPadding(TableEvent):
    """A claim window's filler (RULES §4 "Claim windows"): no fact, seen by nobody. A held
    window is closed with as many as make its prompts, answers and fillers a constant count
    (:func:`services.gateway.domain.hand.claims.pad_window`), so the sequence numbers a viewer
    sees on either side of it do not tell how many seats were prompted."""

    hand_id: str = ""
    hand_number: int = 0


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
    "next_hand_ready": NextHandReady,
    "window_padding": WindowPadding,
}
KIND_NAMES: dict[type[TableEvent], str] = {cls: name for name, cls in KINDS.items()}
EVENT_CLASSES: tuple[type[TableEvent], ...] = tuple(KINDS.values())
