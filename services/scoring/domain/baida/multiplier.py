"""倍 of a judged 百搭 reading (RULES-presets §13.B.6): the seed's 番 are multipliers.

倍 = shape (``ping_hu`` 1, ``pong_pong`` 2, ``seven_pairs`` 2, ``dragon_seven_pairs`` 4)
   × colour (清一色 ``full_flush`` 4; 混一色 ``half_flush``, 1 by default)
   × 2^(``kong_doubling`` per declared kong + ``last_tile_doubling`` for 海底捞月 +
        ``kong_replacement_doubling`` for 杠上花)
   × ``no_wildcard_multiplier`` when the hand holds no 百搭.

杠上花 is the replacement after the winner's own kong; after a flower only with
``replacement_after_flower``. Factors of 1 add no line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.scoring.domain.baida.reading import SHAPE_ZH, Judged
from services.scoring.domain.baida.rules import BaidaRules
from shared import tiles as T
from shared.melds import Meld


@dataclass(frozen=True, slots=True)
class BaidaSituation:
    melds: tuple[Meld, ...]
    last_tile: bool  # 海底捞月
    kong_replacement: bool  # 杠上花, as the options count it
    jokers: int  # 百搭 in the hand


@dataclass(frozen=True, slots=True)
class Factor:
    """One line: ``code`` (a breakdown code), the factor, a sentence."""

    code: str
    factor: int
    detail: str


def factors(j: Judged, situ: BaidaSituation, rules: BaidaRules) -> list[Factor]:
    out = [Factor("BEI_SHAPE", rules.shape[j.shape], f"{SHAPE_ZH[j.shape]} {j.shape}")]
    if j.full_flush:
        out.append(Factor("BEI_FULL_FLUSH", rules.full_flush, "one suit (or winds only)"))
    elif j.half_flush and rules.half_flush != 1:
        out.append(Factor("BEI_HALF_FLUSH", rules.half_flush, "one suit and winds"))
    kongs: Sequence[Meld] = [m for m in situ.melds if m.is_kong]
    for m in kongs:
        out.append(
            Factor("BEI_KONG", 2**rules.kong_doubling, f"{m.kind.label} {T.format_tiles(m.tiles)}")
        )
    if situ.last_tile:
        out.append(Factor("BEI_LAST_TILE", 2**rules.last_tile_doubling, "海底捞月"))
    if situ.kong_replacement:
        out.append(Factor("BEI_KONG_REPLACEMENT", 2**rules.kong_replacement_doubling, "杠上花"))
    if not situ.jokers:
        out.append(Factor("BEI_NO_WILDCARD", rules.no_wildcard_multiplier, "no 百搭 held"))
    return [f for f in out if f.factor != 1 or f.code == "BEI_SHAPE"]


def multiplier(fs: Sequence[Factor]) -> int:
    total = 1
    for f in fs:
        total *= f.factor
    return total
