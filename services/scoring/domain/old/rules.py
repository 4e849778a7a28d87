"""The options of the 户/番 model (``scoring_model = "old"``, shanghai-old, RULES-presets
§13.A, §13.D) compiled once per ruleset into plain fields.

Sections read: ``[old_hu]`` (户 per item), ``[old_fan]`` (番 per item), ``[old_scoring]``
(rounding, the limit, what counts as 杠上开花 and 大吊车) and ``[old_payment]`` (shares of
each payment, 包冲, 包输 and its 三番叫胡 exception). Nothing of the 敲麻 sections ``[hands]``
``[hand_caps]`` ``[flowers]`` ``[scoring]`` is read. Every number of the model is one of these
options; the code holds none.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.scoring.domain.rules import per_ruleset
from shared.ruleset import Ruleset

# 户 items (§13.A.5), in the order the breakdown lists them: option name of [old_hu].
HU_OPTIONS = (
    "win",
    "self_draw",
    "only_wait",
    "flower",
    "pair_dragon",
    "pair_seat_wind",
    "pong_simple_exposed",
    "pong_simple_concealed",
    "pong_terminal_exposed",
    "pong_terminal_concealed",
    "kong_simple_exposed",
    "kong_simple_concealed",
    "kong_terminal_exposed",
    "kong_terminal_concealed",
)

# 番 items (§13.A.6) in the order of the §13.A.6 table: the ``fan_items`` names and the
# option names of [old_fan].
FAN_OPTIONS = (
    "menqing",
    "pong_pong",
    "half_flush",
    "full_flush",
    "all_honors",
    "seven_pairs",
    "big_hanging",
    "replacement",
    "last_tile",
    "rob_kong",
    "dragon_pong",
    "seat_wind_pong",
)


@dataclass(frozen=True, slots=True)
class OldRules:
    """``hu[option]`` and ``fan[option]`` are the [old_hu] and [old_fan] values."""

    name: str
    hu: dict[str, int]
    fan: dict[str, int]
    limit_hu: int  # 0: no limit
    hu_round_up_to: int  # 1: no rounding
    replacement_after_flower: bool
    big_hanging_concealed_kong: bool
    self_draw_shares: int
    discard_payment: str  # chuchong | baochong | discarder_only
    chuchong_discarder_shares: int
    chuchong_other_shares: int
    baochong_shares: int
    discarder_only_shares: int
    baoshu: bool
    baoshu_exposed_melds: int
    baoshu_shares: int
    baoshu_exempt_fan: int  # 0: no 三番叫胡 exception

    @property
    def max_shares(self) -> int:
        """The most shares one payer can owe one winner under these options."""
        return max(
            self.self_draw_shares,
            self.chuchong_discarder_shares,
            self.chuchong_other_shares,
            self.baochong_shares,
            self.discarder_only_shares,
            self.baoshu_shares,
        )


def old_rules(ruleset: Ruleset) -> OldRules:
    """The compiled options of ``ruleset`` (built on first use, then cached)."""
    return _compiled(ruleset)


@per_ruleset
def _compiled(rs: Ruleset) -> OldRules:
    hu, fan, sc, pay = rs.old_hu, rs.old_fan, rs.old_scoring, rs.old_payment
    return OldRules(
        name=rs.name,
        hu={o: getattr(hu, o) for o in HU_OPTIONS},
        fan={o: getattr(fan, o) for o in FAN_OPTIONS},
        limit_hu=sc.limit_hu,
        # 0 would divide by zero; it means what 1 means, no rounding
        hu_round_up_to=max(sc.hu_round_up_to, 1),
        replacement_after_flower=sc.replacement_after_flower,
        big_hanging_concealed_kong=sc.big_hanging_concealed_kong,
        self_draw_shares=pay.self_draw_shares,
        discard_payment=pay.discard_payment,
        chuchong_discarder_shares=pay.chuchong_discarder_shares,
        chuchong_other_shares=pay.chuchong_other_shares,
        baochong_shares=pay.baochong_shares,
        discarder_only_shares=pay.discarder_only_shares,
        baoshu=pay.baoshu,
        baoshu_exposed_melds=pay.baoshu_exposed_melds,
        baoshu_shares=pay.baoshu_shares,
        baoshu_exempt_fan=pay.baoshu_exempt_fan,
    )
