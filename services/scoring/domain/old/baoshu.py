"""清一色九张落地包输 and its 三番叫胡 exception (RULES-presets §13.A.9, seed 003).

When ``old_payment.baoshu`` is on and winner W wins on a discard or by 抢杠 from player D with
a 清一色 hand (one suit, no honors) showing at least ``baoshu_exposed_melds`` (3) exposed melds
(chow, pong, exposed or added kong: "nine tiles on the table"; a concealed kong lies face down
and does not count), D alone pays ``baoshu_shares`` (4) shares and nobody else pays for W —

unless D was ready with three 番 (三番叫胡却可不包): D's hand after the discard waits on at least
one tile, and the best 番 of that hand completed by any of its waits, counted as a discard win
by D (D's seat wind; no 杠上开花, 海底捞月 or 抢杠), reaches ``baoshu_exempt_fan`` (3; 0 = no
exception). Then W is paid as usual (§13.A.8).

**Decision**: 包输 replaces whatever the discard payment would be, 包冲 and discarder-only
included (with the default shares 包冲 pays the same 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.scoring.domain.model import FeederHand, HandContext
from services.scoring.domain.old.arrangement import arrangements, colour_of
from services.scoring.domain.old.fan import fan_lines
from services.scoring.domain.old.hu import OldSituation, seat_wind
from services.scoring.domain.old.rules import OldRules
from services.scoring.domain.situations import is_big_hanging, is_menqing
from shared.hand.input import counts_from_tiles
from shared.hand.preset_hands import hand_waits
from shared.melds import Meld, MeldKind


def exposed_melds(melds: Sequence[Meld]) -> int:
    """Melds that lie face up: chow, pong, exposed and added kong."""
    return sum(1 for m in melds if m.kind is not MeldKind.CONCEALED_KONG)


def is_nine_tiles_down(full_flush: bool, melds: Sequence[Meld], rules: OldRules) -> bool:
    """九张落地: a 清一色 win with at least ``baoshu_exposed_melds`` exposed melds (the caller
    has checked it was won from another player)."""
    return rules.baoshu and full_flush and exposed_melds(melds) >= rules.baoshu_exposed_melds


@dataclass(frozen=True, slots=True)
class ReadyFan:
    """The best 番 of the feeder's hand over its waits, and the wait that gives it (None
    when the hand waits on nothing)."""

    fan: int
    wait: int | None
    items: tuple[str, ...] = ()


def ready_fan(hand: FeederHand, seat: int, ctx: HandContext, rules: OldRules) -> ReadyFan:
    """How many 番 the feeder's 13 tiles are ready with (see module doc)."""
    counts = counts_from_tiles(hand.concealed, "from_hand concealed tiles")
    sp = rules.fan["seven_pairs"] > 0
    best = ReadyFan(0, None)
    dealer = ctx.dealer
    for k in hand_waits(counts, hand.melds, ctx.ruleset):
        full = list(counts)
        full[k] += 1
        situ = OldSituation(
            seat_wind=seat_wind(seat, dealer),
            self_drawn=False,
            only_wait=False,
            flowers=(),
            menqing=is_menqing(hand.melds),
            big_hanging=is_big_hanging(
                hand.concealed, hand.melds, k, rules.big_hanging_concealed_kong
            ),
            replacement=False,
            last_tile=False,
            rob_kong=False,
        )
        colour = colour_of(full, hand.melds)
        for arr in arrangements(full, hand.melds, k, by_feeder=True, seven_pairs=sp):
            lines = fan_lines(arr, colour, situ, rules)
            fan = sum(line.amount for line in lines)
            if best.wait is None or fan > best.fan:
                best = ReadyFan(fan, k, tuple(line.option for line in lines))
    return best


def is_exempt(ready: ReadyFan, rules: OldRules) -> bool:
    """三番叫胡: the feeder waits and its best 番 reaches ``baoshu_exempt_fan`` (not 0)."""
    return (
        rules.baoshu_exempt_fan > 0
        and ready.wait is not None
        and ready.fan >= rules.baoshu_exempt_fan
    )
