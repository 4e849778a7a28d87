"""The 倍 scoring model of shanghai-baida (RULES-presets §13.B), one concept per module:

==============  ============================================================================
``rules``       the [baida_scoring] options and the tile set of [baida_tiles], compiled
``check``       INVALID_ARGUMENT checks of a 百搭 win; which tiles are the hand's 百搭
``reading``     a reading of the wildcard hand (shared.hand.wildcard) as shape × colour
``multiplier``  倍: shape, 清一色, kongs, 海底捞月, 杠上花, no-百搭 factor (§13.B.6)
``value``       (底分 + 花) × 倍 under the cap, the best reading (§13.B.6)
``payments``    one share from each of the three others (§13.B.7)
``settle``      a win, a drawn hand, an escape (§13.B.8)
==============  ============================================================================
"""
