"""The value of a 户/番 hand (RULES-presets §13.A.7): points of one share.

1. every arrangement of the 14 tiles (:mod:`.arrangement`);
2. its 户 (:mod:`.hu`) and 番 (:mod:`.fan`);
3. 户 rounded up to a multiple of ``old_scoring.hu_round_up_to`` (1: no rounding);
4. value = min(rounded 户 × 2^番, ``old_scoring.limit_hu``) (0: no limit);
5. the arrangement with the highest value is scored; on a tie the one with more 番, then more
   户 (then the first listed, so the choice is deterministic).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.scoring.domain.old.arrangement import Arrangement, Colour
from services.scoring.domain.old.fan import fan_lines
from services.scoring.domain.old.hu import OldSituation, hu_lines
from services.scoring.domain.old.lines import Line
from services.scoring.domain.old.rules import OldRules


@dataclass(frozen=True, slots=True)
class OldValue:
    """The scored arrangement: its 户 and 番 lines, 户 before and after rounding, 番, the
    value before the limit and the value of one share."""

    arrangement: Arrangement
    hu_lines: tuple[Line, ...]
    fan_lines: tuple[Line, ...]
    hu: int
    hu_rounded: int
    fan: int
    unlimited: int
    value: int

    @property
    def fan_items(self) -> tuple[str, ...]:
        return tuple(line.option for line in self.fan_lines)


def round_up(hu: int, step: int) -> int:
    """户 rounded up to a multiple of ``step`` (1: unchanged)."""
    return -(-hu // step) * step


def limited(hu_rounded: int, fan: int, limit: int) -> tuple[int, int]:
    """(户 × 2^番, the value under ``limit``; 0 = no limit)."""
    raw = hu_rounded << fan
    return raw, min(raw, limit) if limit else raw


def value_of(arr: Arrangement, colour: Colour, situ: OldSituation, rules: OldRules) -> OldValue:
    hus = hu_lines(arr, situ, rules)
    fans = fan_lines(arr, colour, situ, rules)
    hu = sum(line.amount for line in hus)
    fan = sum(line.amount for line in fans)
    rounded = round_up(hu, rules.hu_round_up_to)
    raw, value = limited(rounded, fan, rules.limit_hu)
    return OldValue(arr, tuple(hus), tuple(fans), hu, rounded, fan, raw, value)


def best_value(
    arrangements: Sequence[Arrangement], colour: Colour, situ: OldSituation, rules: OldRules
) -> OldValue:
    """The arrangement scored (step 5); ``arrangements`` is not empty."""
    values = [value_of(a, colour, situ, rules) for a in arrangements]
    return max(values, key=lambda v: (v.value, v.fan, v.hu))
