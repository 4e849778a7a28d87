"""What a settlement takes in and gives back (the scoring domain's data model).

Inputs mirror the scoring vector format (tests/vectors/README.md): a :class:`HandContext` (the
table's ruleset, stake, dealer, dice and 荒番 counter), and for a won hand the winners' tiles,
how the hand was won, who discarded or was robbed, who had declared 敲 and every claim of the
hand (for 承包). Outputs are a :class:`Settlement`: per-winner results, chips per seat, the
house share, the next dealer and 荒番 counter, the transfers between seats and the itemized
breakdown. Seats are 0-3 in turn order; tiles are kinds (:mod:`shared.tiles`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from services.scoring.domain.breakdown import Item
from shared.hand import HandType
from shared.melds import Meld
from shared.ruleset import Ruleset


class WinKind(enum.Enum):
    """How a hand was won (RULES §6); the values are the labels of the vectors and the CLI."""

    SELF_DRAW = "self_draw"  # 自摸
    DISCARD = "discard"  # 冲 / 点炮
    ROB_KONG = "rob_kong"  # 抢杠, robbing an added kong
    EIGHT_FLOWERS = "eight_flowers"  # 八花齐, all eight flowers: wins at once

    @property
    def is_self_draw(self) -> bool:
        """Paid like a self-draw by every other player (RULES §9: incl. 杠开 and 八花齐)."""
        return self in (WinKind.SELF_DRAW, WinKind.EIGHT_FLOWERS)

    @property
    def has_feeder(self) -> bool:
        """The winning tile came from another seat: the discarder or the robbed player."""
        return self in (WinKind.DISCARD, WinKind.ROB_KONG)


@dataclass(frozen=True, slots=True)
class HandContext:
    """The table around one hand. ``stake`` is chips per point (底分 of §11); ``huangfan`` is
    the 荒番 counter when the hand started (§10); ``garden_stacks`` the chips each seat holds
    under 逛花园 (payment.garden), else None; ``doubled_seats`` the seats that played a 加倍卡
    for the hand (RULES-items §2)."""

    ruleset: Ruleset
    stake: int
    dealer: int
    dice: tuple[int, int] | None = None
    huangfan: int = 0
    garden_stacks: tuple[int, ...] | None = None
    doubled_seats: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class WinnerHand:
    """One winner's tiles. ``concealed`` excludes the winning tile; ``flowers`` are the exposed
    flower tiles (kinds 34-41). For 八花齐 the winning tile is the eighth flower (it may also
    be listed among ``flowers``)."""

    seat: int
    concealed: tuple[int, ...]
    melds: tuple[Meld, ...]
    flowers: tuple[int, ...]
    win_tile: int


@dataclass(frozen=True, slots=True)
class FeederHand:
    """The discarder's (or the robbed player's) hand after the winning tile left it:
    ``concealed`` and ``melds``, 13 tiles with a kong counting 3 (shanghai-old judges
    九张落地包输 and its 三番叫胡 exception on it, RULES-presets §13.A.9)."""

    concealed: tuple[int, ...]
    melds: tuple[Meld, ...]


class ReplacementAfter(enum.Enum):
    """What the replacement draw of a 杠开 win replaced (RULES-presets §13.0)."""

    KONG = "kong"
    FLOWER = "flower"


@dataclass(frozen=True, slots=True)
class Claim:
    """A chow, pong or exposed kong that ``claimer`` took from ``claimed_from``'s discard.
    ``feeder_ready``: the discarder had already declared 敲 (for
    payment.chengbao_excludes_declared_feeder)."""

    claimer: int
    claimed_from: int
    feeder_ready: bool = False


@dataclass(frozen=True, slots=True)
class WinInput:
    """A won hand to settle. ``from_seat`` is the discarder (discard) or the robbed player
    (rob_kong), None otherwise. ``replacement``: the winning tile was a replacement draw after
    a kong or a flower (杠开). ``claims`` None means: the winners' claimed melds are the claims.
    ``first_go_around``: the win came in the first go-around with no claim yet (天胡/地胡).
    RULES-presets §13.0: ``last_tile`` the winning tile was the last the wall could give
    (海底捞月); ``replacement_after`` what a replacement draw replaced; ``feeder_hand`` the
    discarder's hand (shanghai-old's 包输); ``wild_indicator`` the turned-up indicator of a
    flipped-百搭 table (``baida_tiles.wildcards = "flipped"``), None otherwise; ``visible``
    the tiles the winner sees outside the hand (discards, the other seats' melds but their
    concealed kongs; the indicator apart), read when ``baida_tiles.wildcard_fifth_copy`` is
    false (§13.B.3)."""

    context: HandContext
    winners: tuple[WinnerHand, ...]
    win: WinKind
    from_seat: int | None = None
    replacement: bool = False
    ready: frozenset[int] = frozenset()
    claims: tuple[Claim, ...] | None = None
    first_go_around: bool = False
    last_tile: bool = False
    replacement_after: ReplacementAfter = ReplacementAfter.KONG
    feeder_hand: FeederHand | None = None
    wild_indicator: int | None = None
    visible: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class OldResult:
    """The 户/番 of the arrangement scored (§13.A.7): 户 before and after rounding, 番 and the
    番 item names in table order, one per occurrence."""

    hu: int
    hu_rounded: int
    fan: int
    fan_items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BaidaResult:
    """The 倍 of the reading scored (§13.B.6) and how many 百搭 the hand held."""

    multiplier: int
    wildcards: int


@dataclass(frozen=True, slots=True)
class WinnerResult:
    """A winner's hand, its 花 count and value: the points of one share. Under the 敲麻 model
    ``hand`` is the RULES §6 hand and ``cap_lezi`` its cap; under the 户/番 model (``hand``
    STANDARD or SEVEN_PAIRS) ``old`` and under the 倍 model (``hand`` PING_HU … FULL_FLUSH_
    DRAGON_SEVEN_PAIRS) ``baida`` say how it was scored (``cap_lezi`` 0; ``flowers`` is then
    the bonus tiles: 坐花 in old, 花 in baida)."""

    seat: int
    hand: HandType
    flowers: int
    value: int
    cap_lezi: int = 0
    old: OldResult | None = None
    baida: BaidaResult | None = None


@dataclass(frozen=True, slots=True)
class Transfer:
    """Chips that move from ``payer`` to ``payee`` (to the house when ``payee`` is None)."""

    payer: int
    payee: int | None
    chips: int


class SettlementKind(enum.Enum):
    WIN = "win"
    DRAW = "draw"  # 流局 / 荒
    ESCAPE = "escape"  # 逃跑或掉线


@dataclass(frozen=True, slots=True)
class Settlement:
    """The result. ``payments[seat]``: chips, positive = received; their sum plus ``house`` is
    zero. ``huangfan`` is the counter this hand was played under (with dice 荒番 added);
    ``next_huangfan`` the counter for the next hand."""

    kind: SettlementKind
    winners: tuple[WinnerResult, ...]
    payments: tuple[int, ...]
    house: int
    transfers: tuple[Transfer, ...]
    next_dealer: int
    huangfan: int
    next_huangfan: int
    breakdown: tuple[Item, ...]
    garden_stacks_after: tuple[int, ...] | None = None
