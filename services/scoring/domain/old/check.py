"""Checks of a 户/番 win before anything is settled (INVALID_ARGUMENT naming the problem).

On top of the checks every model makes (:mod:`services.scoring.domain.validate`): no 八花齐
(the preset has no instant win), the standard 144-tile set only, each winner's 14 tiles a
winning hand of §13.A.4 (some arrangement exists), and — only where 九张落地包输 needs it to
judge 三番叫胡 — the discarder's hand (``feeder_hand``): 13 tiles, kongs counting 3, no kind
more than four times with the winners' tiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.scoring.domain.model import FeederHand, WinInput, WinKind, WinnerHand
from services.scoring.domain.old.arrangement import Arrangement, Colour, arrangements, colour_of
from services.scoring.domain.old.baoshu import is_nine_tiles_down
from services.scoring.domain.old.rules import OldRules
from services.scoring.domain.validate import (
    check_claimed_melds,
    check_complete_hand,
    check_natural_melds,
    check_tiles_add_up,
    check_win_request,
    check_win_tile_kind,
    not_a_win,
    winners_tiles,
)
from shared.errors import InvalidArgument
from shared.hand.input import (
    WAITING_SIZE,
    check_copies,
    check_flowers,
    counts_from_tiles,
    hand_size,
)


@dataclass(frozen=True, slots=True)
class OldChecked:
    """A winner that passed: its counts with the winning tile, its colour, its arrangements."""

    hand: WinnerHand
    counts: list[int]
    colour: Colour
    arrangements: tuple[Arrangement, ...]


def check_old_win(w: WinInput, rules: OldRules) -> list[OldChecked]:
    check_win_request(w, needs_dice=False)
    if w.win is WinKind.EIGHT_FLOWERS:
        raise InvalidArgument(
            f"ruleset {rules.name} has no 八花齐 instant win (RULES-presets §13.1)", field="win"
        )
    seven_pairs = rules.fan["seven_pairs"] > 0
    checked = []
    for h in w.winners:
        who = f"seat {h.seat}"
        check_claimed_melds(h, who)
        check_flowers(h.flowers, f"{who} flowers")
        counts = counts_from_tiles(h.concealed, f"{who} concealed tiles")
        check_win_tile_kind(h.win_tile, who)
        full = check_complete_hand(w, h, counts, who)
        arrs = arrangements(full, h.melds, h.win_tile, w.win.has_feeder, seven_pairs)
        if not arrs:
            why = "is neither four sets and a pair nor 七对 (RULES-presets §13.A.4)"
            raise not_a_win(who, full, h.melds, why)
        checked.append(OldChecked(h, full, colour_of(full, h.melds), tuple(arrs)))
    check_tiles_add_up(w, checked)
    if needs_feeder_hand(w, checked, rules):
        check_feeder_hand(w, checked)
    return checked


def needs_feeder_hand(w: WinInput, checked: Sequence[OldChecked], rules: OldRules) -> bool:
    """包输 needs the discarder's hand: a 九张落地 win from another player, with the 三番叫胡
    exception on."""
    return (
        w.win.has_feeder
        and rules.baoshu_exempt_fan > 0
        and any(is_nine_tiles_down(c.colour.full_flush, c.hand.melds, rules) for c in checked)
    )


def check_feeder_hand(w: WinInput, checked: Sequence[OldChecked]) -> FeederHand:
    hand = w.feeder_hand
    what = "from_hand"
    if hand is None:
        raise InvalidArgument(
            f"a 清一色 win with its melds laid down (九张落地) is paid by seat {w.from_seat} alone "
            "unless that seat was ready with 3 番 (三番叫胡): its hand (from_hand) is required",
            field=what,
        )
    counts = counts_from_tiles(hand.concealed, f"{what} concealed tiles")
    check_natural_melds(hand.melds, f"{what} melds")
    size = hand_size(counts, hand.melds)
    if size != WAITING_SIZE:
        raise InvalidArgument(
            f"{what} has {sum(counts)} concealed tiles and {len(hand.melds)} melds, {size} tiles "
            f"in all (a kong counts as 3); after the discard it holds {WAITING_SIZE}",
            field=what,
        )
    total = [a + b for a, b in zip(counts, winners_tiles(w, checked), strict=True)]
    check_copies(total, hand.melds, f"{what} with the winners' hands")
    return hand
