"""Levels (等级) by silver and their base chips, RULES.md §11 (seed 001's table).

A player's silver decides the level; the level's base chips are the stake (底分) of its quick-match
tier. A level may play its own tier and every lower one. 待业 (under 100 silver) may not play
rated tables (quick match, tournaments).

Each level also sets the room service fee (房间服务费 / 台费, RULES.md §9a) of its quick-match
tables, silver charged to each human seat per hand and paid to the house: the level's base
chips × the deployment's ``level_fee_units`` (:data:`FEE_STAKE_UNITS`, 1 by default: one stake
unit, half of the 2-point 底分), :func:`fee_for_stake`.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from shared.errors import FailedPrecondition, InvalidArgument


@dataclass(frozen=True, slots=True)
class Level:
    rank: int  # 0 = 待业
    name: str  # Chinese title
    english: str
    min_silver: int
    base_chips: int  # 0 for 待业: no rated tier

    @property
    def rated(self) -> bool:
        return self.base_chips > 0


# (name, English, minimum silver, base chips) in rising order.
_TABLE = (
    ("待业", "unemployed", 0, 0),
    ("临时工", "temp worker", 100, 1),
    ("合同工", "contract worker", 200, 2),
    ("正式工", "regular worker", 400, 4),
    ("副主管", "deputy supervisor", 800, 8),
    ("主管", "supervisor", 1600, 16),
    ("副经理", "deputy manager", 3200, 32),
    ("经理", "manager", 6400, 64),
    ("副总监", "deputy director", 12800, 128),
    ("总监", "director", 25600, 256),
    ("总裁秘书", "president's secretary", 51200, 512),
    ("副总裁", "vice president", 102400, 1024),
    ("总裁", "president", 204800, 2048),
    ("董秘", "board secretary", 409600, 4096),
    ("副董事长", "vice chairman", 819200, 8192),
    ("董事长", "chairman", 1638400, 16384),
    ("集团秘书", "group secretary", 3276800, 32768),
    ("集团主席", "group chairman", 6553600, 65536),
)

# The room service fee of a level's tables, in stake units (RULES.md §9a): one unit, half of
# the 底分 (2 points) a bare win costs each payer, 1/50 of the 5-勒子 loss cap (50 units). A
# player at a level's floor (100 units of silver) pays 50 hands of fees before the fees alone
# take them down a level; four humans pay the house 4 units a hand.
FEE_STAKE_UNITS = 1

LEVELS: tuple[Level, ...] = tuple(
    Level(rank, name, english, floor, base)
    for rank, (name, english, floor, base) in enumerate(_TABLE)
)
_FLOORS = [lv.min_silver for lv in LEVELS]
STAKE_TIERS: tuple[int, ...] = tuple(lv.base_chips for lv in LEVELS if lv.rated)
_LEVEL_BY_STAKE = {lv.base_chips: lv for lv in LEVELS if lv.rated}
RATED_MIN_SILVER = LEVELS[1].min_silver


def level_for(silver: int) -> Level:
    """The level of a silver balance (a negative balance is 待业)."""
    return LEVELS[max(bisect.bisect_right(_FLOORS, silver) - 1, 0)]


def allowed_stakes(level: Level) -> tuple[int, ...]:
    """Stake tiers a level may join: its own base chips and every lower tier (none for 待业)."""
    return tuple(s for s in STAKE_TIERS if s <= level.base_chips)


def level_for_stake(stake: int) -> Level:
    """The level whose tier a stake is; InvalidArgument when the stake is not a tier."""
    try:
        return _LEVEL_BY_STAKE[stake]
    except KeyError:
        raise InvalidArgument(
            f"stake {stake} is not a tier; tiers are {', '.join(map(str, STAKE_TIERS))}",
            field="stake",
        ) from None


def fee_for_stake(stake: int, units: int = FEE_STAKE_UNITS) -> int:
    """The room service fee per hand of a quick-match table at ``stake`` (its level's: the
    stake × ``units``); 0 for a stake that is no tier (待业 has none)."""
    return stake * units if stake in _LEVEL_BY_STAKE else 0


def check_rated_stake(silver: int, stake: int) -> int:
    """The stake a player with ``silver`` plays at a rated table (0 = the level's own tier).

    FailedPrecondition ``SILVER_TOO_LOW`` for 待业, ``STAKE_NOT_ALLOWED`` for a tier above the
    player's level; InvalidArgument for a stake that is no tier.
    """
    level = level_for(silver)
    if not level.rated:
        raise FailedPrecondition(
            f"silver {silver} is below {RATED_MIN_SILVER}: 待业 may not join rated games",
            reason="SILVER_TOO_LOW",
            silver=silver,
            needed=RATED_MIN_SILVER,
        )
    if stake == 0:
        return level.base_chips
    needed = level_for_stake(stake)
    if stake > level.base_chips:
        raise FailedPrecondition(
            f"stake {stake} needs level {needed.name} ({needed.min_silver} silver); "
            f"the player is {level.name} with {silver} silver (tiers up to {level.base_chips})",
            reason="STAKE_NOT_ALLOWED",
            stake=stake,
            level=level.name,
        )
    return stake
