"""Waits (听牌): the tile kinds that complete an allowed winning hand (RULES.md §6).

No trial-and-error over 34 kinds. Since only 碰碰胡, one-suit hands and all-honor hands win:

* a hand of two or more suits (melds included) can only become 碰碰胡, whose waits are read off
  the counts (one single, or two pairs, and everything else a triplet);
* a one-suit hand waits on the suit ranks the precomputed wait tables of
  :mod:`shared.hand.shape` give for its suit pattern, plus the honors it holds once or twice;
* an all-honor hand tries the seven honors (乱风向 makes nearly all of them waits).
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.hand.hand_type import classify_bytes, composition, dragons_are_honors
from shared.hand.shape import WAITS_NO_PAIR, WAITS_WITH_PAIR
from shared.melds import Meld
from shared.ruleset import Ruleset

_ONE_SUIT = {1: 0, 2: 9, 4: 18}
_HONORS = range(27, 34)


def _completes(b: bytes, k: int, melds: Sequence[Meld], dragons_honor: bool) -> bool:
    trial = bytearray(b)
    trial[k] += 1
    return classify_bytes(bytes(trial), melds, dragons_honor) is not None


def waits(counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset) -> list[int]:
    """Every kind that completes the concealed ``counts`` (13 − 3 × melds tiles) and ``melds``
    into an allowed winning hand, in canonical order. Kinds of which the hand itself (concealed
    and melds) already holds all four are left out."""
    b = bytes(counts)
    dragons_honor = dragons_are_honors(ruleset)
    held = bytearray(b)
    for m in melds:
        for k in m.tiles:
            held[k] += 1
    suits, _honors, dragons, chow = composition(b, melds)
    if not suits:
        return [k for k in _HONORS if held[k] < 4 and _completes(b, k, melds, dragons_honor)]
    base = _ONE_SUIT.get(suits)
    if base is None or (dragons and not dragons_honor):
        return _pong_pong_waits(b, held, chow)
    h = b[27:34]
    out: list[int] = []
    if 1 not in h and 4 not in h:
        pairs = h.count(2)
        table = WAITS_WITH_PAIR if pairs == 0 else WAITS_NO_PAIR if pairs == 1 else None
        if table is not None:
            out.extend(base + r for r in table.get(b[base : base + 9], ()) if held[base + r] < 4)
    for k in _HONORS:
        if b[k] in (1, 2) and held[k] < 4 and _completes(b, k, melds, dragons_honor):
            out.append(k)
    return out


def _pong_pong_waits(b: bytes, held: bytearray, chow: bool) -> list[int]:
    """Waits of a hand that can only win as 碰碰胡: a single among triplets (单吊), or two pairs
    among triplets (对倒)."""
    if chow or 4 in b:
        return []
    ones, twos = b.count(1), b.count(2)
    if ones == 1 and twos == 0:
        k = b.index(1)
        return [k] if held[k] < 4 else []
    if ones == 0 and twos == 2:
        i = b.index(2)
        j = b.index(2, i + 1)
        return [k for k in (i, j) if held[k] < 4]
    return []
