"""番 doublings of one arrangement (RULES-presets §13.A.6), in the order of the §13.A.6 table.

==================  ==============================================================
``menqing``         门清: no chow, pong, exposed or added kong (concealed kongs allowed)
``pong_pong``       碰碰胡: a standard reading with no chow
``half_flush``      混一色: one suit and at least one honor
``full_flush``      清一色: one suit, no honors
``all_honors``      字一色: honors only
``seven_pairs``     七对
``big_hanging``     大吊车: four declared melds, the win completes the pair
``replacement``     杠上开花: self-drawn on a replacement (after a kong; after a flower
                    with ``old_scoring.replacement_after_flower``)
``last_tile``       海底捞月: self-drawn last tile of the wall
``rob_kong``        抢杠
``dragon_pong``     箭刻: each pong or kong of a dragon
``seat_wind_pong``  门风刻: a pong or kong of the winner's seat wind
==================  ==============================================================

All that apply add up; 清一色 and 字一色 exclude 混一色 by their definitions. An item whose
option is 0 is not counted and not listed.
"""

from __future__ import annotations

from services.scoring.domain.old.arrangement import Arrangement, Colour
from services.scoring.domain.old.hu import OldSituation
from services.scoring.domain.old.lines import Line
from services.scoring.domain.old.rules import OldRules
from shared import tiles as T
from shared.hand.decomposition import SetKind


def fan_lines(arr: Arrangement, colour: Colour, situ: OldSituation, rules: OldRules) -> list[Line]:
    """The 番 items of ``arr`` (one line per occurrence, table order)."""
    standard = not arr.seven_pairs
    triplets = [s for s in arr.sets if s.kind is not SetKind.CHOW]
    flags = (
        ("menqing", situ.menqing, "no chow, pong or exposed kong"),
        ("pong_pong", standard and len(triplets) == 4, "every set a pong or kong"),
        ("half_flush", colour.half_flush, "one suit and honors"),
        ("full_flush", colour.full_flush, "one suit, no honors"),
        ("all_honors", colour.all_honors, "honors only"),
        ("seven_pairs", arr.seven_pairs, "seven different pairs"),
        ("big_hanging", situ.big_hanging, "four melds down, the win completes the pair"),
        ("replacement", situ.replacement, "self-drawn on a replacement tile"),
        ("last_tile", situ.last_tile, "self-drawn last tile of the wall"),
        ("rob_kong", situ.rob_kong, "won on a robbed added kong"),
    )
    fan = rules.fan
    out = [Line(option, fan[option], why) for option, on, why in flags if on]
    for s in triplets:
        if T.is_dragon(s.first):
            out.append(Line("dragon_pong", fan["dragon_pong"], str(s)))
    for s in triplets:
        if s.first == situ.seat_wind:
            out.append(Line("seat_wind_pong", fan["seat_wind_pong"], f"{s}, the seat wind"))
    return [line for line in out if line.amount]
