"""What one hand holds while it runs: each seat's tiles, the decisions owed, the configuration.

The engine's private, mutable state (:class:`SeatHand`, :class:`Pending`), the immutable
:class:`HandConfig` a hand is started with, and the names of decisions (``OWN_TURN``, ``CLAIM``,
``ROB_KONG``, ``SWAP``) and engine steps (``STEP_*``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

from shared import tiles as T
from shared.melds import Meld
from shared.ruleset import Ruleset
from shared.table import ClaimOptions, OwnTurnOptions, SeatState

# The engine's next step: what it does on its own, without waiting for a decision
# (HandEngine.resume). It is recorded before every service call, once the state that call follows
# is complete, so a call that fails is retried from that call on the state it left: no tile is
# drawn, no meld made and no event emitted twice.
STEP_NONE: Final = 0  # a decision is pending, or the hand is over
STEP_WINDOW: Final = 1  # open the claim (or 抢杠) window on the last discard (or added kong)
STEP_RESOLVE: Final = 2  # resolve the claims of the window
STEP_DRAW: Final = 3  # draw for _step_seat (from the tail when _step_replacement)
STEP_PROMPT: Final = 4  # ask rules for _step_seat's own-turn options and prompt it
STEP_WIN: Final = 5  # settle the win(s) _step_wins (from _step_from) and end the hand
STEP_NEW_HAND: Final = 6  # ask the wall for the hand (NewHand) and announce it
STEP_DEAL: Final = 7  # ask the wall for the deal and show it
STEP_DEAL_FLOWERS: Final = 8  # 补花 after the deal, from seat _deal_turn (in dealer order) on
STEP_CLOSE_WINDOW: Final = 9  # the hold of a window nobody may answer ran out: draw on

_NO_MARKS: Final[frozenset[int]] = frozenset()
# SeatState (a named tuple) from its fields as one tuple: tuple.__new__ directly, without the
# named tuple's Python-level __new__ (a decision point builds one).
_new_seat_state: Final = functools.partial(tuple.__new__, SeatState)


@dataclass(frozen=True, slots=True)
class SwapOptions:
    """换牌 (option table.tile_swap): bury exactly ``count`` concealed tiles, or pass."""

    seat: int
    count: int


class SeatHand:
    """One seat's tiles during a hand (mutable; the engine's private state). ``counts`` is
    indexed by every kind, so a held 百搭 is ``counts[T.WILDCARD]``; the rules see the 34
    playing kinds and the 百搭 apart (:meth:`state`).

    A plain class, not a dataclass: compiled, a dataclass's ``__init__`` stays the Python one
    :mod:`dataclasses` writes, and the engine builds these (and :class:`Pending`) every hand."""

    __slots__ = (
        "_state",
        "claimed_at",
        "counts",
        "discards",
        "flowers",
        "front",
        "has_drawn",
        "melds",
        "missed",
        "ready",
    )

    def __init__(self) -> None:
        self.counts: list[int] = [0] * T.NUM_TILE_KINDS
        self.melds: list[Meld] = []
        self.flowers: list[int] = []
        self.discards: list[int] = []  # every discard, in order, as the table's views show them
        self.front: list[int] = []  # those still in front of the seat (none claimed)
        self.claimed_at: list[int] = []  # indices of discards others claimed
        self.ready = False  # 敲
        self.missed: set[int] = set()  # 漏胡 marks
        self.has_drawn = False
        self._state: SeatState | None = None

    def __repr__(self) -> str:
        return (
            f"SeatHand(counts={self.counts!r}, melds={self.melds!r}, flowers={self.flowers!r}, "
            f"discards={self.discards!r}, claimed_at={self.claimed_at!r}, ready={self.ready!r}, "
            f"missed={self.missed!r}, has_drawn={self.has_drawn!r})"
        )

    def state(self) -> SeatState:
        """The rules' view of this seat, built once and kept until :meth:`changed` (a decision
        point changes one seat, so a snapshot rebuilds one seat state, not four)."""
        st = self._state
        if st is None:
            counts = self.counts
            missed = self.missed
            st = self._state = _new_seat_state(
                (  # SeatState's fields, in order
                    tuple(counts[: T.NUM_KINDS]),
                    tuple(self.melds),
                    tuple(self.flowers),
                    tuple(self.front),
                    self.ready,
                    frozenset(missed) if missed else _NO_MARKS,
                    self.has_drawn,
                    counts[T.WILDCARD],
                )
            )
        return st

    @property
    def claimed(self) -> int:
        """How many of the discards others claimed (chow, pong, kong)."""
        return len(self.claimed_at)

    def discard(self, tile: int) -> None:
        """``tile`` is discarded: it lies in front of the seat until (unless) it is claimed."""
        self.discards.append(tile)
        self.front.append(tile)
        self._state = None

    def last_discard_claimed(self) -> None:
        """Another seat claimed the last discard: it leaves the front for the claimer's meld."""
        self.claimed_at.append(len(self.discards) - 1)
        self.front.pop()
        self._state = None

    def discards_in_front(self) -> tuple[int, ...]:
        """The discards still in front of the seat (the rules' ``SeatState.discards``): those
        others claimed sit in their melds instead. ``discards`` lists them all, in order, as
        the table's views show them."""
        return tuple(self.front)

    def changed(self) -> None:
        """To be called after any change to the seat's tiles, melds, flowers, discards, 敲 or
        漏胡 marks: the next :meth:`state` rebuilds."""
        self._state = None

    def concealed_tiles(self) -> list[int]:
        return T.from_counts(self.counts)


class Pending:
    """A decision a seat owes: its kind, the options it holds, the timer's deadline."""

    __slots__ = ("deadline_ms", "from_seat", "kind", "options", "seat", "sequence", "tile")

    def __init__(
        self,
        seat: int,
        kind: str,  # what it asks for: events.kinds OWN_TURN, CLAIM, ROB_KONG or SWAP
        options: OwnTurnOptions | ClaimOptions | SwapOptions,
        deadline_ms: int,
        tile: int | None = None,  # the drawn tile (own turn) or the tile under claim
        from_seat: int | None = None,
        sequence: int = 0,  # the prompt event's number
    ) -> None:
        self.seat = seat
        self.kind = kind
        self.options = options
        self.deadline_ms = deadline_ms
        self.tile = tile
        self.from_seat = from_seat
        self.sequence = sequence

    def __repr__(self) -> str:
        return (
            f"Pending(seat={self.seat!r}, kind={self.kind!r}, options={self.options!r}, "
            f"deadline_ms={self.deadline_ms!r}, tile={self.tile!r}, "
            f"from_seat={self.from_seat!r}, sequence={self.sequence!r})"
        )


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
    doubled_seats: tuple[int, ...] = ()  # 加倍卡 played for this hand (RULES-items §2)
    fees: tuple[int, ...] = ()  # 台费 by seat, fixed at the deal (empty = none)
