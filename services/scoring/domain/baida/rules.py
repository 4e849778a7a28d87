"""The options of the 倍 model (``scoring_model = "baida"``, shanghai-baida, RULES-presets
§13.B.6, §13.D) compiled once per ruleset: ``[baida_scoring]`` and, through
:func:`shared.tile_set.tile_set_of`, the tile set of ``[baida_tiles]``. Nothing of the 敲麻
sections ``[hands]`` ``[hand_caps]`` ``[flowers]`` ``[scoring]`` is read."""

from __future__ import annotations

from dataclasses import dataclass

from services.scoring.domain.rules import per_ruleset
from shared import tiles as T
from shared.ruleset import Ruleset
from shared.tile_set import TileSet, tile_set_of

# shape option of [baida_scoring] per shape name (RULES-presets §13.B.5); 0: the shape is no win
SHAPES = ("ping_hu", "pong_pong", "seven_pairs", "dragon_seven_pairs")


@dataclass(frozen=True, slots=True)
class BaidaRules:
    name: str
    tiles: TileSet
    base_points: int  # 底分
    flower_tile: int  # 花 per bonus tile
    hand_cap_points: int  # 0: no cap
    shape: dict[str, int]  # 倍 per shape
    full_flush: int
    half_flush: int
    honors_flush: bool
    kong_doubling: int
    last_tile_doubling: int
    kong_replacement_doubling: int
    replacement_after_flower: bool
    no_wildcard_multiplier: int
    wild_stand_ins: tuple[int, ...]  # the kinds a 百搭 may be: playing kinds, no bonus tile


def baida_rules(ruleset: Ruleset) -> BaidaRules:
    """The compiled options of ``ruleset`` (built on first use, then cached)."""
    return _compiled(ruleset)


@per_ruleset
def _compiled(rs: Ruleset) -> BaidaRules:
    sc = rs.baida_scoring
    tiles = tile_set_of(rs)
    return BaidaRules(
        name=rs.name,
        tiles=tiles,
        base_points=sc.base_points,
        flower_tile=sc.flower_tile,
        hand_cap_points=sc.hand_cap_points,
        shape={s: getattr(sc, s) for s in SHAPES},
        full_flush=sc.full_flush,
        half_flush=sc.half_flush,
        honors_flush=sc.honors_flush,
        kong_doubling=sc.kong_doubling,
        last_tile_doubling=sc.last_tile_doubling,
        kong_replacement_doubling=sc.kong_replacement_doubling,
        replacement_after_flower=sc.replacement_after_flower,
        no_wildcard_multiplier=sc.no_wildcard_multiplier,
        wild_stand_ins=tuple(k for k in range(T.NUM_KINDS) if not tiles.is_bonus(k)),
    )
