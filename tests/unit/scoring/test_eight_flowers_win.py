"""八花齐 (RULES §6) is declared on the winner's own turn, after the eighth flower's
replacement draw (services.rules.domain.own_turn.eight_flowers_win), so any seat, not only the
dealer at the deal, may hold 14 tiles (a kong counting 3) when it is settled."""

from __future__ import annotations

import pytest

from shared.errors import InvalidArgument
from tests.unit.scoring.builders import meld, settle, winner

# Seat 3 (not the dealer) drew the eighth flower, took its replacement (5z) and wins at once.
AFTER_REPLACEMENT = winner(3, "1235m467p3s125z", "8f", [meld("pong", "999s", 0)], "1234567f")


def test_a_non_dealer_wins_eight_flowers_holding_the_replacement_tile():
    s = settle(winners=[AFTER_REPLACEMENT], win="eight_flowers", ready=[], replacement=True)
    (w,) = s.winners
    assert (w.seat, w.hand.label, w.flowers, w.value) == (3, "eight_flowers", 8, 20)
    assert s.payments == (-20, -20, -20, 60)


def test_eight_flowers_still_rejects_a_hand_of_the_wrong_size():
    short = dict(AFTER_REPLACEMENT, concealed="1235m467p3s1z")  # 12 tiles with the pong
    with pytest.raises(InvalidArgument, match="holds 12 tiles"):
        settle(winners=[short], win="eight_flowers", ready=[])
