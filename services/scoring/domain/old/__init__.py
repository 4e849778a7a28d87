"""The 户/番 scoring model of shanghai-old (RULES-presets §13.A), one concept per module:

================  ===========================================================================
``rules``         the [old_hu] [old_fan] [old_scoring] [old_payment] options, compiled
``arrangement``   the readings of 14 tiles (decomposition + the group the winning tile
                  completes, or 七对), their colour, and the waits of a 13-tile hand
``hu``            户 items of one arrangement (§13.A.5)
``fan``           番 items of one arrangement (§13.A.6)
``value``         rounding, 户 × 2^番, the limit, the best arrangement (§13.A.7)
``payments``      self-draw shares, 出冲 / 包冲 / discarder-only (§13.A.8)
``baoshu``        清一色九张落地包输 and the 三番叫胡 exception (§13.A.9)
``check``         INVALID_ARGUMENT checks of a 户/番 win and of the discarder's hand
``settle``        a win, a drawn hand, an escape (§13.A.10)
================  ===========================================================================
"""
