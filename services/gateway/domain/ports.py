"""Ports (interfaces) through which the table engine reaches the wall, the rules and scoring,
and through which the layers above it are reached without a call running back up a layer:
the table's event log and outbox (:class:`Emit`, :class:`Report`), the ownership the wall's
calls carry (:class:`WallFence`) and an Act's early answer (:class:`ActAnswer`). The gateway's
tables implement them and pass them down (:mod:`services.gateway.tables.wiring`,
:mod:`services.gateway.tables.answer_early`).

The engine is pure: it never imports gRPC. Two sets of adapters implement these ports:
:mod:`services.gateway.adapters.inprocess` calls the domain packages directly (unit tests, the
domain-only benchmark, ``mahjong replay verify``) and :mod:`services.gateway.adapters.remote`
calls the services over gRPC with deadlines. Hop budget (issue 5): one wall call per draw, one
rules call per decision point (never one per seat); actions are checked against options held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, NoReturn, Protocol

from shared.errors import Aborted, ResourceExhausted, Unavailable
from shared.melds import Meld
from shared.table import (
    Action,
    ClaimOptions,
    ClaimResolution,
    OwnTurnOptions,
    TableSnapshot,
)

if TYPE_CHECKING:
    from services.gateway.domain.events.kinds import TableEvent


@dataclass(frozen=True, slots=True)
class WallHand:
    """A hand's wall as NewHand answers: its id, the dice and the seed commitment (hex)."""

    hand_id: str
    dice: tuple[int, int]
    commitment: str
    remaining: int


class WallDraw(NamedTuple):  # one per draw: a named tuple is the cheapest immutable value
    tile: int
    remaining: int  # tiles still standing after the draw


@dataclass(frozen=True, slots=True)
class WallReveal:
    seed: str  # hex
    commitment: str  # hex


def wall_call_id(hand_id: str, number: int) -> str:
    """The request id of the engine's wall call ``number`` of a hand (a draw, replacement draw
    or swap): the same on every replica, so the wall's fencing reads a repeat as one."""
    return f"{hand_id}/d{number}"


def flip_call_id(hand_id: str) -> str:
    """The request id of a hand's 翻百搭 call (one per hand)."""
    return f"{hand_id}/flip"


class WallFenced(Aborted):
    """The wall refused a call under this replica's ownership epoch of the table: a newer
    owner has called it since (the wall's own fencing: DrawRequest.owner_epoch)."""

    reason = "STALE_OWNER"


class WallPort(Protocol):
    def new_hand(
        self, ruleset_name: str, overrides: Mapping[str, str], dealer: int, request_id: str
    ) -> WallHand: ...

    def deal(self, hand_id: str) -> tuple[list[list[int]], int]:
        """The four starting hands (flowers included, in wall order) and tiles remaining."""

    # ``number``: the call's place among the hand's draws, replacement draws and swaps (1, 2,
    # ...), counted by the engine from its own state. A call retried after a failure has the same
    # number, so the wall answers it again (its request id) instead of handing out another tile.
    # ``epoch``: the caller's ownership epoch of the table (0: unfenced), which the gateway's
    # tables pass (services.gateway.tables.fenced_wall); a refusal raises WallFenced.
    def draw(self, hand_id: str, seat: int, number: int, *, epoch: int = 0) -> WallDraw: ...

    def draw_replacement(
        self, hand_id: str, seat: int, number: int, *, epoch: int = 0
    ) -> WallDraw: ...

    def swap(
        self, hand_id: str, seat: int, buried: list[int], number: int, *, epoch: int = 0
    ) -> list[int]:
        """换牌: bury these tiles in the live wall; the tiles taken in exchange."""

    def reveal(self, hand_id: str, number: int = 0, *, epoch: int = 0) -> WallReveal:
        """End the hand's wall: its seed. ``number``: the call the engine would make next
        (fenced, whatever the wall handed out under it and after was never logged: void)."""

    def flip_indicator(self, hand_id: str, *, epoch: int = 0) -> tuple[list[int], int]:
        """翻百搭: the tiles turned up (bonus tiles set aside, the indicator last) and the tiles
        left; the same answer when repeated."""


class WallFence(Protocol):
    """The ownership a table's wall calls carry (the lease's fencing token): ``epoch()``, and
    ``fenced(exc)`` when the wall refused it (another replica owns the table: raises
    NOT_OWNER, the table is let go)."""

    def epoch(self) -> int: ...

    def fenced(self, exc: WallFenced) -> NoReturn: ...


class Emit(Protocol):
    """A table's event log as its session writes a fact: the event joins the running step
    (one of its own when none runs); its sequence number."""

    def __call__(self, event: TableEvent, /) -> int: ...


class Report(Protocol):
    """A table's outbox for matchmaking: a settled hand (``"hand"``) or the table's end
    (``"finished"``), written with the step's events."""

    def __call__(self, kind: str, data: dict[str, object], /) -> None: ...


class ActAnswer(Protocol):
    """Where an Act's result goes as soon as its action is written, before the engine steps
    after it have run (the asyncio server answers early:
    :mod:`services.gateway.tables.answer_early`)."""

    def __call__(self, sequence: int, replayed: bool, /) -> None: ...


class RulesPort(Protocol):
    def own_turn_options(self, snapshot: TableSnapshot, seat: int) -> OwnTurnOptions: ...

    def claim_options(self, snapshot: TableSnapshot) -> dict[int, ClaimOptions]:
        """Every other seat's options on the last discard or added kong, in ONE call."""

    def resolve_claims(
        self, snapshot: TableSnapshot, claims: Mapping[int, Action]
    ) -> ClaimResolution: ...


@dataclass(frozen=True, slots=True)
class WinnerInput:
    """One winner as scoring needs it (the vectors' winner format)."""

    seat: int
    concealed: tuple[int, ...]  # concealed tiles without the win tile
    melds: tuple[Meld, ...]
    flowers: tuple[int, ...]
    win_tile: int | None


@dataclass(frozen=True, slots=True)
class HandFacts:
    """What scoring needs of a finished hand (mirrors tests/vectors/scoring.jsonl)."""

    ruleset_name: str
    overrides: Mapping[str, str]
    stake: int
    dealer: int
    dice: tuple[int, int]
    huangfan: int
    winners: tuple[WinnerInput, ...] = ()
    win: str = ""  # self_draw | discard | rob_kong | eight_flowers ("" for a draw)
    from_seat: int | None = None
    replacement: bool = False
    ready: tuple[int, ...] = ()
    claims: tuple[tuple[int, int, bool], ...] = ()  # (claimer, from, from was ready)
    first_go_around: bool = False  # 天胡 / 地胡
    garden_stacks: tuple[int, ...] | None = None  # 逛花园: each seat's chips before the hand
    doubled_seats: tuple[int, ...] = ()  # 加倍卡: payments with these seats double (scoring)
    # RULES-presets §13.0: the self-drawn winning tile was the last the wall could give (海底);
    # what the 杠开 replacement replaced ("kong" or "flower"); the discarder's (robbed
    # player's) hand after the winning tile left it, (concealed, melds), for old's 包输
    last_tile: bool = False
    replacement_after: str = "kong"
    feeder_hand: tuple[tuple[int, ...], tuple[Meld, ...]] | None = None
    wild_indicator: int | None = None  # 翻百搭: the indicator turned up
    visible: tuple[int, ...] = ()  # no fifth copies: what the winner sees outside the hand


@dataclass(frozen=True, slots=True)
class WinnerResult:
    seat: int
    hand: int  # HandType value
    flowers: int
    value: int


@dataclass(frozen=True, slots=True)
class BreakdownItem:
    seat: int | None
    code: str
    label: str
    amount: int = 0
    other_seat: int | None = None  # the counterparty (a TRANSFER's payee)


@dataclass(frozen=True, slots=True)
class Settlement:
    """Scoring's answer: chips by seat (+ received), the house, the next dealer and 荒番."""

    payments: tuple[int, int, int, int]
    house: int = 0
    winners: tuple[WinnerResult, ...] = ()
    next_dealer: int = 0
    next_huangfan: int = 0
    breakdown: tuple[BreakdownItem, ...] = field(default_factory=tuple)


class ScoringPort(Protocol):
    def settle_win(self, facts: HandFacts) -> Settlement: ...

    def settle_draw(self, facts: HandFacts) -> Settlement: ...

    def settle_escape(
        self,
        ruleset_name: str,
        overrides: Mapping[str, str],
        stake: int,
        seat: int,
        dealer: int,
        huangfan: int,
        garden_stacks: tuple[int, ...] | None = None,
    ) -> Settlement: ...


class DoubleCardBank(Protocol):
    """Where a player's 加倍卡 are held: matchmaking's ledger."""

    def hold(self, table_id: str, tag: str, player_id: str, hand_number: int, stake: int) -> int:
        """Hold one card for the hand; the cards left. DomainError naming a refusal."""

    def release(self, table_id: str, player_id: str, hand_number: int) -> bool: ...


def is_transient(exc: Exception) -> bool:
    """Is ``exc`` a failure that a retry may mend: another service unavailable, out of time
    or overloaded (the adapters raise these as Unavailable or ResourceExhausted)? Anything
    else — a refusal, a bug — is not, and retrying it would only hide it."""
    return isinstance(exc, Unavailable | ResourceExhausted)


@dataclass
class CallCounter:
    """Counts outgoing calls per port (the hop budget, reported by the benchmark)."""

    wall: int = 0
    rules: int = 0
    scoring: int = 0

    @property
    def total(self) -> int:
        return self.wall + self.rules + self.scoring
