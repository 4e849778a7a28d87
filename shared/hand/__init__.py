"""Hand evaluation shared by the rules, scoring and gateway code: shapes, hand types, waits.

Pure functions on 34-count arrays (see :mod:`shared.tiles`); no I/O, no gRPC.
"""

from shared.hand.hand_type import HandType, classify, is_winning_hand
from shared.hand.shape import is_all_pongs_shape, is_standard_shape
from shared.hand.waits import waits

__all__ = [
    "HandType",
    "classify",
    "is_all_pongs_shape",
    "is_standard_shape",
    "is_winning_hand",
    "waits",
]
