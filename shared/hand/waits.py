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
from typing import Final

from shared.hand.hand_type import classify_bytes, composition, dragons_are_honors
from shared.hand.shape import WAITS_NO_PAIR, WAITS_WITH_PAIR
from shared.melds import Meld, MeldKind
from shared.ruleset import Ruleset

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_MELD_CHOW: Final = MeldKind.CHOW

_ONE_SUIT: Final = {1: 0, 2: 9, 4: 18}
_HONORS: Final = range(27, 34)


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


def discards_that_may_wait(counts: Sequence[int], melds: Sequence[Meld]) -> list[int]:
    """The kinds whose discard from the 14 − 3 × melds hand ``counts`` may leave a hand with
    waits, in canonical order: a quick necessary condition read off the counts, so that
    :func:`waits` need only be asked about these (a hand far from ready gives none).

    :func:`waits` finds a wait only in a hand of at most one suit (melds included; honors
    free), or in a 碰碰胡 hand one tile short (no chow meld, no four, and one single or two
    pairs among triplets). So a discard qualifies when it leaves at most one suit — any, when
    the hand holds one suit at most; the lone tile of one of two suits otherwise — or leaves
    that 碰碰胡 pattern."""
    # One native pass over the counts (compiled, several times cheaper than bytes(counts) and
    # its slices and counts): the suits held, singles, pairs and fours, and the suits held as
    # one lone tile.
    c = tuple(counts)  # no copy when it is one already (the rules' SeatState.concealed)
    meld_suits = 0
    chow = False
    for m in melds:
        k = m.tiles[0]
        if k < 27:
            meld_suits |= 1 << (k // 9)
        if m.kind is _MELD_CHOW:
            chow = True
    held = ones = twos = fours = 0
    lone: list[int] = []  # the tile of each suit held as one tile only
    size = len(c)
    for s in range(3):
        total = last = 0
        for k in range(9 * s, min(9 * s + 9, size)):
            n = c[k]
            if n:
                total += n
                last = k
                if n == 1:
                    ones += 1
                elif n == 2:
                    twos += 1
                elif n == 4:
                    fours += 1
        if total:
            held |= 1 << s
            if total == 1 and not meld_suits & (1 << s):
                lone.append(last)
    for k in range(27, size):
        n = c[k]
        if n == 1:
            ones += 1
        elif n == 2:
            twos += 1
        elif n == 4:
            fours += 1
    suits = meld_suits | held
    if suits in (0, 1, 2, 4):  # one suit at most: any discard keeps it so
        return [k for k in range(size) if c[k]]
    if suits == 7 and (chow or ones > 3):  # the usual hand, far from ready (below)
        return []
    # A discard changes one kind: singles and pairs drop by one at most, fours too.
    pong_pong = ones + twos <= 3 and fours <= 1 and not chow
    if suits == 7 and not pong_pong:  # the usual hand, far from ready
        return []
    out = set()
    if suits != 7:  # two suits: the lone tile of a suit no meld is in
        out.update(lone)
    if pong_pong:
        for k in range(size):
            n = c[k]
            if not n or fours - (n == 4):
                continue
            o = ones - (n == 1) + (n == 2)
            t = twos - (n == 2) + (n == 3)
            if (o == 1 and t == 0) or (o == 0 and t == 2):
                out.add(k)
    return sorted(out)
