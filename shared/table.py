"""The table snapshot the rules decide on: seats, last action, actions and options (RULES §4-7).

Pure, immutable values with no I/O and no gRPC. The ones built at every decision point (the
snapshot, its seat states and last action, the options and wins) are named tuples: immutable,
and several times cheaper to build than frozen dataclasses (which set each field through
``object.__setattr__``); change one with ``_replace``. Actions stay frozen dataclasses, so that
``Pong() != Pass()``. The gateway keeps (or builds) its live table in these types, the rules
domain (``services/rules/domain``) decides on them and ``services/rules/convert.py`` converts them
to and from protobuf.

Tiles are kinds (:mod:`shared.tiles`); a seat's concealed hand is a 34-count tuple of natural
tiles plus ``wildcards``, the 百搭 ``1j`` it holds (shanghai-baida, RULES-presets §13.B.3). A
snapshot holds only what the rules need and nothing secret beyond the concealed hands: no wall
order.

Hand sizes: a seat waiting between turns holds ``13 - 3 × melds`` concealed tiles (a kong counts
as one set); the seat to act after a draw, after a chow/pong, or the dealer at the start holds
``14 - 3 × melds``.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from shared import tiles as T
from shared.errors import InvalidArgument
from shared.hand.hand_type import HandType
from shared.hand.input import (
    COMPLETE_SIZE,
    WAITING_SIZE,
    check_flowers,
    check_hand,
    held_counts,
)
from shared.melds import Meld, MeldKind
from shared.ruleset import Ruleset
from shared.tile_set import check_hand_kinds, tile_set_of
from shared.tiles import NUM_KINDS

NUM_SEATS: Final = 4
# Chips per point (底分), far above the highest level's base (65536, RULES §11), low enough that
# every amount (at most 勒子 × points × shares × stake) stays a 64-bit protobuf integer.
MAX_STAKE: Final = 10**12
# The most hands and rounds (圈) one table may be created for (the gateway refuses more); the
# tables matchmaking asks for are checked against them when a room or tournament is created.
MAX_HANDS: Final = 10_000
MAX_ROUNDS: Final = 1_000


def next_seat(seat: int) -> int:
    """The 下家 of ``seat`` (play passes 0→1→2→3→0)."""
    return (seat + 1) % NUM_SEATS


def previous_seat(seat: int) -> int:
    """The 上家 of ``seat``: the seat whose discards ``seat`` may chow."""
    return (seat - 1) % NUM_SEATS


class WinKind(enum.IntEnum):
    """How a hand is won (RULES §6); values match the protobuf ``WinKind`` enum."""

    SELF_DRAW = 1  # 自摸 (杠开 is a self-draw on a replacement tile)
    DISCARD = 2  # 冲 / 点炮
    ROB_KONG = 3  # 抢杠 robbing an added kong
    EIGHT_FLOWERS = 4  # 八花齐

    @property
    def label(self) -> str:
        return self.name.lower()


class LastActionKind(enum.IntEnum):
    """What happened last at the table; it decides who may do what now."""

    DEAL = 1  # hand start: the dealer holds 14 tiles and acts first
    DRAW = 2  # ``seat`` drew ``tile`` from the live wall
    REPLACEMENT_DRAW = 3  # ``seat`` drew ``tile`` as a replacement after a kong or a flower
    DISCARD = 4  # ``seat`` discarded ``tile``: the others may claim it
    ADDED_KONG = 5  # ``seat`` added ``tile`` to its pong (already shown as an added kong in its
    # melds): the others may rob it (抢杠) before the replacement draw
    CHOW = 6  # ``seat`` chowed ``tile`` and must discard
    PONG = 7  # ``seat`` ponged ``tile`` and must discard

    @property
    def label(self) -> str:
        return self.name.lower()


# What may be done with a 百搭: drawn and discarded, never claimed or melded.
_WILDCARD_ACTIONS = (LastActionKind.DRAW, LastActionKind.REPLACEMENT_DRAW, LastActionKind.DISCARD)


class LastAction(NamedTuple):
    kind: LastActionKind
    seat: int
    tile: int | None = None  # the drawn, discarded, added or claimed tile


class SeatState(NamedTuple):
    """One seat as the rules see it.

    ``missed_wins`` are the 漏胡 marks (RULES §7): tile kinds this seat may not win on until it
    next moves. ``has_drawn`` is False until the seat's first draw of the hand (first go-around,
    地胡).
    """

    concealed: tuple[int, ...] = (0,) * NUM_KINDS
    melds: tuple[Meld, ...] = ()
    flowers: tuple[int, ...] = ()
    discards: tuple[int, ...] = ()
    declared_ready: bool = False  # 敲
    missed_wins: frozenset[int] = frozenset()  # 漏胡 marks
    has_drawn: bool = False
    wildcards: int = 0  # 百搭 1j held (concealed; never in a meld)

    @property
    def concealed_count(self) -> int:
        return sum(self.concealed) + self.wildcards

    def holds(self, tile: int) -> bool:
        """Whether the concealed hand holds a ``tile`` (a natural kind or 1j)."""
        if tile == T.WILDCARD:
            return self.wildcards > 0
        return 0 <= tile < NUM_KINDS and self.concealed[tile] > 0

    @property
    def set_count(self) -> int:
        """Declared sets (a kong is one set)."""
        return len(self.melds)

    def with_missed_win(self, tile: int) -> SeatState:
        """漏胡: this seat passed a win on ``tile``; it may not win on that kind until it moves."""
        return self._replace(missed_wins=self.missed_wins | {tile})

    def moved(self) -> SeatState:
        """动牌: the seat drew, chowed, ponged or konged, which clears its 漏胡 marks."""
        if not self.missed_wins:
            return self
        return self._replace(missed_wins=frozenset())


class TableSnapshot(NamedTuple):
    """Everything the rules need to judge an action at one moment of a hand.

    ``claim_counts[a][b]`` is how many times seat ``a`` has chowed, ponged or kong-claimed from
    seat ``b`` this hand (承包, RULES §9). ``first_go_around`` stays True until a claim is made or
    the dealer's second turn begins (天胡 / 地胡). ``wall_remaining`` counts the tiles still
    drawable (live and replacement ends together).
    """

    ruleset: Ruleset
    seats: tuple[SeatState, SeatState, SeatState, SeatState]
    dealer: int = 0
    turn: int = 0  # the seat to act, or whose discard / added kong is being claimed
    wall_remaining: int = 0
    last: LastAction = LastAction(LastActionKind.DEAL, 0)
    first_go_around: bool = True
    claim_counts: tuple[tuple[int, ...], ...] = ((0,) * NUM_SEATS,) * NUM_SEATS
    wild_kind: int | None = None  # 翻百搭: every tile of this kind is a 百搭 (§13.B.9)

    def seat(self, seat: int) -> SeatState:
        return self.seats[seat]

    def with_seat(self, seat: int, state: SeatState) -> TableSnapshot:
        seats = list(self.seats)
        seats[seat] = state
        return self._replace(seats=tuple(seats))  # type: ignore[arg-type]

    @property
    def drawable(self) -> int:
        """Tiles that may still be drawn before the hand is drawn (荒): reserved ones excluded."""
        return max(0, self.wall_remaining - self.ruleset.table.reserved_tiles)


def counts_of(tiles: Iterable[int]) -> tuple[int, ...]:
    c = [0] * NUM_KINDS
    for k in tiles:
        c[k] += 1
    return tuple(c)


# --- actions ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Discard:
    tile: int


@dataclass(frozen=True, slots=True)
class DeclareReady:
    """敲: declare ready together with this discard (RULES §5)."""

    discard: int


@dataclass(frozen=True, slots=True)
class Chow:
    """吃 the discard into the run starting at ``low`` (e.g. low=2m for 234m)."""

    low: int

    @property
    def tiles(self) -> tuple[int, int, int]:
        return (self.low, self.low + 1, self.low + 2)


@dataclass(frozen=True, slots=True)
class Pong:
    pass


@dataclass(frozen=True, slots=True)
class ExposedKong:
    """明杠 from a discard."""


@dataclass(frozen=True, slots=True)
class AddedKong:
    """上杠/蓄杠: add ``tile`` to the seat's own pong of it."""

    tile: int


@dataclass(frozen=True, slots=True)
class ConcealedKong:
    """暗杠 of four ``tile`` held."""

    tile: int


@dataclass(frozen=True, slots=True)
class Win:
    """胡. ``eight_flowers`` picks the 八花齐 win when the seat holds all eight flowers."""

    eight_flowers: bool = False


@dataclass(frozen=True, slots=True)
class Pass:
    """Decline a claim (or a robbing win)."""


Action = Discard | DeclareReady | Chow | Pong | ExposedKong | AddedKong | ConcealedKong | Win | Pass


@dataclass(frozen=True, slots=True)
class TileSwap:
    """换牌 (option ``table.tile_swap``): bury these tiles in the live wall and take as many from
    it, once, after the deal and before the first draw of play."""

    tiles: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ResumePlay:
    """End 托管 (auto-play) now: not a decision on a prompt; the table applies it at once."""


# What a seat may send during a hand: a hand action or a tile swap.
Decision = Action | TileSwap
# What a client may send: a decision, or ending 托管.
SeatRequest = Decision | ResumePlay

OWN_TURN_ACTIONS = (Discard, DeclareReady, ConcealedKong, AddedKong, Win)
CLAIM_ACTIONS = (Win, Pong, ExposedKong, Chow, Pass)


def action_name(action: Action) -> str:
    """``discard``, ``declare_ready``, ``exposed_kong`` … for messages and logs."""
    return _action_type_name(type(action))


@functools.cache  # one name per class: the engine logs every action by name
def _action_type_name(cls: type) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in cls.__name__).lstrip("_")


# --- options ---------------------------------------------------------------------------------
class WinOption(NamedTuple):
    """A win the seat may declare now, with what scoring needs to know about it."""

    hand: HandType
    kind: WinKind
    win_tile: int | None = None  # None for 八花齐
    replacement: bool = False  # 杠开 (after a kong or a flower)
    big_hanging: bool = False  # 大吊车
    concealed_hand: bool = False  # 门清
    heavenly: bool = False  # 天胡 (presets with heavenly_earthly)
    earthly: bool = False  # 地胡


class OwnTurnOptions(NamedTuple):
    """What the seat to act may do (RULES §4-5). ``ready_discards`` are the discards that may be
    made with 敲 (declaring ready); empty when the seat is ready already or the ruleset has no 敲.
    ``wins`` holds a shape win and/or the 八花齐 win."""

    seat: int
    discards: tuple[int, ...] = ()
    ready_discards: tuple[int, ...] = ()
    concealed_kongs: tuple[int, ...] = ()
    added_kongs: tuple[int, ...] = ()
    wins: tuple[WinOption, ...] = ()

    @property
    def can_win(self) -> bool:
        return bool(self.wins)


class ClaimOptions(NamedTuple):
    """What one other seat may do with the last discard (or robbing an added kong).

    ``chows`` are the lows of every run the seat may make (only the discarder's 下家).
    ``missed_win`` is True when the tile would complete the hand but 漏胡 blocks it."""

    seat: int
    win: WinOption | None = None
    pong: bool = False
    exposed_kong: bool = False
    chows: tuple[int, ...] = ()
    missed_win: bool = False

    @property
    def any(self) -> bool:
        return bool(self.win or self.pong or self.exposed_kong or self.chows)


@dataclass(frozen=True, slots=True)
class ClaimResolution:
    """Who takes the claimed tile. ``winners`` (in turn order from the discarder) all stand
    (一炮多响); otherwise ``taker`` makes ``action`` (pong/kong over chow) or nobody claims.
    ``missed_wins`` are the seats that passed a win and get a 漏胡 mark on ``tile``."""

    tile: int
    winners: tuple[int, ...] = ()
    win_options: Mapping[int, WinOption] = field(default_factory=dict)
    taker: int | None = None
    action: Action | None = None
    missed_wins: tuple[int, ...] = ()


def seats_from(seat: int) -> Sequence[int]:
    """The other three seats in turn order starting at ``seat``'s 下家."""
    return _SEATS_FROM[seat % NUM_SEATS]


_SEATS_FROM = tuple(tuple((s + i) % NUM_SEATS for i in range(1, NUM_SEATS)) for s in range(4))


# --- input checks ----------------------------------------------------------------------------
_ACTING_KINDS = (
    LastActionKind.DEAL,
    LastActionKind.DRAW,
    LastActionKind.REPLACEMENT_DRAW,
    LastActionKind.CHOW,
    LastActionKind.PONG,
)


_CLAIM_MELD = {LastActionKind.CHOW: MeldKind.CHOW, LastActionKind.PONG: MeldKind.PONG}


def check_seat(seat: int, what: str = "seat") -> None:
    """InvalidArgument unless ``seat`` is 0-3."""
    if not isinstance(seat, int) or not 0 <= seat < NUM_SEATS:
        raise InvalidArgument(f"{what} {seat} out of range 0-3", field=what)


def acting_seat(snap: TableSnapshot) -> int | None:
    """The seat holding 14 − 3 × melds tiles now (to act on its own turn), or None while a
    discard or an added kong is being claimed."""
    return snap.last.seat if snap.last.kind in _ACTING_KINDS else None


def is_wild_tile(snap: TableSnapshot, tile: int | None) -> bool:
    """A 百搭: the dedicated 1j, or a tile of the hand's flipped wild kind."""
    return tile is not None and (tile == T.WILDCARD or tile == snap.wild_kind)


def wild_hand(snap: TableSnapshot, st: SeatState) -> tuple[Sequence[int], int]:
    """A seat's concealed hand as (natural counts, 百搭 held): with a flipped wild kind its
    tiles are taken out of the counts and counted as 百搭."""
    wild = snap.wild_kind
    if wild is None:
        return st.concealed, st.wildcards
    counts = list(st.concealed)
    jokers = counts[wild]
    counts[wild] = 0
    return counts, st.wildcards + jokers


def visible_tiles(snap: TableSnapshot, seat: int, indicator: bool = True) -> tuple[int, ...] | None:
    """What ``seat`` sees outside its hand, as 34 counts, for the rule that a 百搭 may not stand
    for a kind of which all four natural tiles are held or visible (RULES-presets §13.B.3,
    ``baida_tiles.wildcard_fifth_copy`` false): every discard on the table, the other seats'
    melds (a concealed kong stays face down, RULES §4, so it is not seen) and the flipped
    百搭's indicator (§13.B.9, face up aside). Bonus tiles are no kind a 百搭 may be and are
    left out (and the indicator too without ``indicator``: scoring counts it from
    ``wild_indicator``). None when the option allows fifth copies (nothing needs counting)."""
    ts = tile_set_of(snap.ruleset)
    if ts.wildcard_fifth_copy or not ts.has_wildcards:
        return None
    out = [0] * NUM_KINDS
    for i, st in enumerate(snap.seats):
        for k in st.discards:
            if k < NUM_KINDS:
                out[k] += 1
        if i == seat:
            continue
        for m in st.melds:
            if m.kind is not MeldKind.CONCEALED_KONG:
                for k in m.tiles:
                    out[k] += 1
    if indicator and snap.wild_kind is not None:
        out[ts.indicator_for(snap.wild_kind)] += 1
    return tuple(out)


def check_snapshot(snap: TableSnapshot) -> None:
    """InvalidArgument naming the first thing that makes ``snap`` impossible: seats out of
    range, impossible melds, flowers among hand tiles, more than four copies of a kind, or a
    hand of the wrong size for the moment (only the seat to act holds 14 − 3 × melds)."""
    if len(snap.seats) != NUM_SEATS:
        raise InvalidArgument(f"a table has {NUM_SEATS} seats, not {len(snap.seats)}")
    check_seat(snap.dealer, "dealer")
    check_seat(snap.turn, "turn")
    check_seat(snap.last.seat, "last action seat")
    if snap.wall_remaining < 0:
        raise InvalidArgument(f"wall_remaining {snap.wall_remaining} is negative")
    if len(snap.claim_counts) != NUM_SEATS or any(
        len(row) != NUM_SEATS or any(n < 0 for n in row) for row in snap.claim_counts
    ):
        raise InvalidArgument("claim_counts must be 4 × 4 non-negative counts")
    last = snap.last
    ts = tile_set_of(snap.ruleset)
    wild = snap.wild_kind
    if wild is not None:
        if not ts.flipped_wildcard:
            raise InvalidArgument("a wild kind is set but the ruleset has no flipped 百搭")
        if not ts.is_hand_kind(wild) or T.is_wildcard(wild):
            raise InvalidArgument(f"wild kind {wild!r} is no playing kind of the set")
        for seat, st in enumerate(snap.seats):
            if any(wild in m.tiles for m in st.melds):
                raise InvalidArgument(
                    f"seat {seat} shows {T.format_tile(wild)} (百搭 this hand) in a meld"
                )
    bad_tile = last.tile is None or not ts.is_hand_kind(last.tile)
    if last.kind is not LastActionKind.DEAL and bad_tile:
        raise InvalidArgument(f"last action {last.kind.label} needs a hand tile")
    if last.tile == T.WILDCARD and last.kind not in _WILDCARD_ACTIONS:
        raise InvalidArgument(f"a 百搭 is never {last.kind.label}ed (RULES-presets §13.B.3)")
    if last.seat != snap.turn:  # the seat to act, or whose tile is being claimed
        raise InvalidArgument(
            f"last action {last.kind.label} by seat {last.seat} but turn is seat {snap.turn}"
        )
    if last.kind is LastActionKind.DEAL and last.seat != snap.dealer:
        raise InvalidArgument(f"the deal leaves dealer {snap.dealer} to act, not seat {last.seat}")
    actor = acting_seat(snap)
    total = [0] * NUM_KINDS
    all_flowers: list[int] = []
    wildcards = 0
    for seat, st in enumerate(snap.seats):
        what = f"seat {seat}"
        want = COMPLETE_SIZE if seat == actor else WAITING_SIZE
        check_hand(st.concealed, st.melds, (want,), what, st.wildcards)
        check_hand_kinds(ts, st.concealed, st.melds, st.wildcards, what)
        check_flowers(st.flowers, f"{what} flowers", dragons=ts.dragons_bonus, extras=ts.extras)
        all_flowers.extend(st.flowers)
        wildcards += st.wildcards + st.discards.count(T.WILDCARD)
        for k in list(st.discards) + list(st.missed_wins):
            if not T.is_valid_kind(k) or not ts.is_hand_kind(k):
                raise InvalidArgument(f"{what}: discards and 漏胡 marks are hand tiles, got {k!r}")
        for k, n in enumerate(held_counts(st.concealed, st.melds)):
            total[k] += n
    for k, n in enumerate(total):
        if n > T.COPIES:
            raise InvalidArgument(
                f"the hands hold {n} copies of {T.format_tile(k)}; there are only {T.COPIES}",
                tile=T.format_tile(k),
            )
    if wildcards > T.COPIES:
        raise InvalidArgument(f"the table holds {wildcards} 百搭; the set has {T.COPIES}")
    check_flowers(all_flowers, "flowers of all seats", dragons=ts.dragons_bonus, extras=ts.extras)
    if last.kind in (LastActionKind.DRAW, LastActionKind.REPLACEMENT_DRAW):
        assert last.tile is not None
        if not snap.seats[last.seat].holds(last.tile):
            raise InvalidArgument(
                f"seat {last.seat} drew {T.format_tile(last.tile)} but does not hold it"
            )
    if last.kind is LastActionKind.DISCARD and last.tile != T.WILDCARD:
        assert last.tile is not None
        if total[last.tile] >= T.COPIES:
            raise InvalidArgument(
                f"discard {T.format_tile(last.tile)} by seat {last.seat} would be a fifth copy"
            )
    claimed = {LastActionKind.CHOW: MeldKind.CHOW, LastActionKind.PONG: MeldKind.PONG}.get(
        last.kind
    )
    if claimed is not None and not any(
        m.kind is claimed and last.tile in m.tiles for m in snap.seats[last.seat].melds
    ):
        raise InvalidArgument(
            f"seat {last.seat} {last.kind.label}ed {T.format_tile(last.tile or 0)} but shows "
            f"no such {last.kind.label} among its melds"
        )
    if last.kind is LastActionKind.ADDED_KONG and not any(
        m.kind is MeldKind.ADDED_KONG and m.tiles[0] == last.tile
        for m in snap.seats[last.seat].melds
    ):
        raise InvalidArgument(
            f"seat {last.seat} added a kong of {T.format_tile(last.tile or 0)} but shows no "
            "such added kong among its melds"
        )
