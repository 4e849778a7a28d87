"""What one hand holds while it runs: each seat's tiles, the decisions owed, the configuration.

The engine's private, mutable state (:class:`SeatHand`, :class:`Pending`), the immutable
:class:`HandConfig` a hand is started with, and the names of decisions (``OWN_TURN``, ``CLAIM``,
``ROB_KONG``, ``SWAP``) and engine steps (``STEP_*``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shared import tiles as T
from shared.melds import Meld
from shared.ruleset import Ruleset
from shared.table import ClaimOptions, OwnTurnOptions, SeatState

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

_NO_MARKS: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class SwapOptions:
    """换牌 (option table.tile_swap): bury exactly ``count`` concealed tiles, or pass."""

    seat: int
    count: int


@dataclass
class SeatHand:
    """One seat's tiles during a hand (mutable; the engine's private state). ``counts`` is
    indexed by every kind, so a held 百搭 is ``counts[T.WILDCARD]``; the rules see the 34
    playing kinds and the 百搭 apart (:meth:`state`)."""

    counts: list[int] = field(default_factory=lambda: [0] * T.NUM_TILE_KINDS)
    melds: list[Meld] = field(default_factory=list)
    flowers: list[int] = field(default_factory=list)
    discards: list[int] = field(default_factory=list)
    claimed_at: list[int] = field(default_factory=list)  # indices of discards others claimed
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
                self.discards_in_front(),
                self.ready,
                frozenset(self.missed) if self.missed else _NO_MARKS,
                self.has_drawn,
                self.counts[T.WILDCARD],
            )
        return st

    @property
    def claimed(self) -> int:
        """How many of the discards others claimed (chow, pong, kong)."""
        return len(self.claimed_at)

    def discards_in_front(self) -> tuple[int, ...]:
        """The discards still in front of the seat (the rules' ``SeatState.discards``): those
        others claimed sit in their melds instead. ``discards`` lists them all, in order, as
        the table's views show them."""
        if not self.claimed_at:
            return tuple(self.discards)
        taken = set(self.claimed_at)
        return tuple(k for i, k in enumerate(self.discards) if i not in taken)

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
    kind: str  # what it asks for: events.kinds OWN_TURN, CLAIM, ROB_KONG or SWAP
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
    doubled_seats: tuple[int, ...] = ()  # 加倍卡 played for this hand (RULES-items §2)
