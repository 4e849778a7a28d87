"""八花齐 eight flowers (RULES §6): holding all eight flowers wins at once, whatever the hand,
without 敲. A player who holds them and wins another way later is scored for that hand."""

from __future__ import annotations

from shared.table import SeatState
from shared.tiles import NUM_FLOWERS


def has_eight_flowers(seat: SeatState) -> bool:
    """Does the seat hold all eight flowers (春夏秋冬梅兰竹菊)?"""
    return len(set(seat.flowers)) == NUM_FLOWERS
