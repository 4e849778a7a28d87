"""Win situations that modify a hand's value (RULES §6, §8, §10; seed 001 for 天胡/地胡).

Open points decided here (each is a ruleset option or follows RULES):

* 大吊车 with a concealed kong: seed 000/001 say 其他牌都吃碰杠下 ("every other tile chowed,
  ponged or konged down"). A concealed kong is a declared kong laid on the table face down, and
  the winner still holds one tile and waits on its pair, which is what 大吊车 rewards, so by
  default it counts (``scoring.big_hanging_concealed_kong`` = true). With false, every one of
  the four sets must be exposed.
* 大吊车 may be won on a discard or by self-draw; the single held tile must equal the winning
  tile (the pair wait). A 八花齐 win is never 大吊车 (the flower is not a pair).
* 门清 allows concealed kongs only (RULES §6) and counts on a discard win too (seed 000: 听牌后
  自摸或胡别人点的炮); it never applies to 八花齐 (RULES §6 table).
* 荒番 is present when the counter (plus the dice 荒番 of seed 001 when ``dice_huangfan``) is
  above zero; it doubles once, whatever the counter's height.
* 天胡/地胡 (``hands.heavenly_earthly``): the caller says the win came in the first go-around
  with no claim made yet; 天胡 is then the dealer's self-draw, 地胡 any non-dealer's win.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.melds import Meld, MeldKind


def is_menqing(melds: Sequence[Meld]) -> bool:
    """门清 concealed hand: no chow, pong or exposed/added kong (concealed kongs allowed)."""
    return all(m.kind is MeldKind.CONCEALED_KONG for m in melds)


def is_big_hanging(
    concealed: Sequence[int], melds: Sequence[Meld], win_tile: int, allow_concealed_kong: bool
) -> bool:
    """大吊车: four sets laid down and the single held tile waits on its pair (see module doc
    for concealed kongs). ``concealed`` excludes the winning tile."""
    if len(melds) != 4 or len(concealed) != 1 or concealed[0] != win_tile:
        return False
    return allow_concealed_kong or all(m.kind is not MeldKind.CONCEALED_KONG for m in melds)


def is_heavenly_win(seat: int, dealer: int, self_drawn: bool, first_go_around: bool) -> bool:
    """天胡: the dealer wins by self-draw on the initial 14 tiles."""
    return first_go_around and self_drawn and seat == dealer


def is_earthly_win(seat: int, dealer: int, first_go_around: bool) -> bool:
    """地胡: a non-dealer wins during the first go-around."""
    return first_go_around and seat != dealer
