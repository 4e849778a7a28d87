"""Table bookkeeping after a hand: the next dealer (庄家, RULES §2) and the 荒番 counter (§10).

* Next dealer: the winner; on 一炮多响 the winner nearest to the discarder in turn order
  (``table.multi_win_dealer`` = ``nearest_winner``), or the seat after that winner
  (``seat_after_nearest_winner``, the seeds' literal 下家). After a drawn hand the dealer deals
  again. **Decision**: after an escape the hand counts as not won, so the dealer deals again.
* 荒番 counter: with ``scoring.dice_huangfan`` (seed 001) the hand's dice first add to it and
  the hand is played under the sum (骰子荒番). After a drawn hand it rises by 1, after a hand
  with any number of winners it falls by 1, never below 0; it is reset to 0 when a player
  leaves the table, which an escape is.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.scoring.domain.breakdown import Item, Unit, item
from services.scoring.domain.rules import ScoringRules
from shared.dice import dice_huangfan_bonus


def huangfan_this_hand(
    r: ScoringRules, counter: int, dice: tuple[int, int] | None, seat: int | None = None
) -> tuple[int, list[Item]]:
    """The counter the hand is played under: ``counter`` plus the dice 荒番 when the preset
    has it."""
    items = []
    bonus = dice_huangfan_bonus(dice) if r.dice_huangfan else 0
    if bonus:
        assert dice is not None  # only dice give a bonus
        items.append(
            item(
                "HUANGFAN_DICE",
                bonus,
                Unit.COUNTER,
                seat,
                detail=f"dice {dice[0]}+{dice[1]}: counter {counter} → {counter + bonus}",
            )
        )
    now = counter + bonus
    items.append(
        item(
            "HUANGFAN_THIS_HAND",
            now,
            Unit.COUNTER,
            detail="荒番 hand: values ×2" if now else "not a 荒番 hand",
        )
    )
    return now, items


def next_huangfan(counter_this_hand: int, won: bool) -> int:
    """After a win −1 (not below 0); after a drawn hand +1."""
    return max(counter_this_hand - 1, 0) if won else counter_this_hand + 1


def next_dealer_after_win(
    r: ScoringRules, winners: Sequence[int], from_seat: int | None
) -> tuple[int, str]:
    """The next dealer after a won hand, with the reason."""
    if len(winners) == 1:
        return winners[0], "the winner deals"
    assert from_seat is not None  # several winners: one tile from another seat (validated)
    discarder = from_seat
    nearest = min(winners, key=lambda w: (w - discarder) % 4)
    if r.seat_after_nearest_winner:
        seat = (nearest + 1) % 4
        return seat, f"一炮多响: the seat after seat {nearest}, the winner nearest the discarder"
    return nearest, "一炮多响: the winner nearest to the discarder in turn order"


def bookkeeping_items(next_dealer: int, why: str, now: int, after: int, why_hf: str) -> list[Item]:
    return [
        item("NEXT_DEALER", next_dealer, Unit.SEAT, next_dealer, detail=why),
        item("NEXT_HUANGFAN", after, Unit.COUNTER, detail=f"{now} → {after}: {why_hf}"),
    ]
