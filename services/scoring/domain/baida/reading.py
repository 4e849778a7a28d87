"""What a reading of a 百搭 hand is (RULES-presets §13.B.3, §13.B.5): one arrangement from
:func:`shared.hand.wildcard.readings` (the decomposition or the seven pairs with the 百搭
substitutions chosen) judged as a shape and a colour on the substituted hand.

* shape: ``ping_hu`` 平胡 (a standard shape with a chow), ``pong_pong`` 对对胡 (every set a pong
  or kong), ``seven_pairs`` 七对 (seven different kinds), ``dragon_seven_pairs`` 龙七对 (a kind
  makes two of the pairs);
* colour: 清一色 when every tile — naturals, melds and what the 百搭 stand for — is of one suit,
  or with ``baida_scoring.honors_flush`` all winds; 混一色 one suit and winds.

With ``baida_tiles.wildcard_fifth_copy`` false a reading in which a 百搭 stands for a kind of
which all four are held (melds included) or visible (the winner's ``visible`` tiles and the
flipped indicator) is no reading: :func:`shared.hand.wildcard.readings` is given the caps.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from services.scoring.domain.baida.rules import BaidaRules
from shared import tiles as T
from shared.hand import HandType
from shared.hand.decomposition import SetKind
from shared.hand.wildcard import Reading, readings, wild_caps
from shared.melds import Meld

# (shape, 清一色) -> the hand's name (shared.hand.HandType)
HAND_TYPES = {
    ("ping_hu", False): HandType.PING_HU,
    ("pong_pong", False): HandType.PONG_PONG,
    ("seven_pairs", False): HandType.SEVEN_PAIRS,
    ("dragon_seven_pairs", False): HandType.DRAGON_SEVEN_PAIRS,
    ("ping_hu", True): HandType.FULL_FLUSH,
    ("pong_pong", True): HandType.FULL_FLUSH_PONG_PONG,
    ("seven_pairs", True): HandType.FULL_FLUSH_SEVEN_PAIRS,
    ("dragon_seven_pairs", True): HandType.FULL_FLUSH_DRAGON_SEVEN_PAIRS,
}


SHAPE_ZH = {
    "ping_hu": "平胡",
    "pong_pong": "对对胡",
    "seven_pairs": "七对",
    "dragon_seven_pairs": "龙七对",
}


@dataclass(frozen=True, slots=True)
class Judged:
    """A reading with its shape and colour."""

    reading: Reading
    shape: str
    full_flush: bool
    half_flush: bool

    @property
    def hand(self) -> HandType:
        return HAND_TYPES[self.shape, self.full_flush]

    @property
    def name(self) -> str:
        """The hand in words: ``清一色对对胡 full_flush_pong_pong``."""
        zh = ("清一色" if self.full_flush else "") + SHAPE_ZH[self.shape]
        return f"{zh} {self.hand.label}"


def shape_of(r: Reading) -> str:
    if r.is_seven_pairs:
        return "dragon_seven_pairs" if r.is_dragon_seven_pairs else "seven_pairs"
    assert r.decomposition is not None  # not seven pairs: a standard decomposition
    if all(s.kind is not SetKind.CHOW for s in r.decomposition.sets):
        return "pong_pong"
    return "ping_hu"


def substituted(counts: Sequence[int], melds: Sequence[Meld], r: Reading) -> list[int]:
    """Copies of each kind in the hand with every 百搭 read as its kind, melds included."""
    out = list(counts)
    for m in melds:
        for k in m.tiles:
            out[k] += 1
    for k in r.wild:
        out[k] += 1
    return out


def judge(counts: Sequence[int], melds: Sequence[Meld], r: Reading, rules: BaidaRules) -> Judged:
    held = substituted(counts, melds, r)
    suits = {T.suit_of(k) for k, n in enumerate(held) if n and T.is_suited(k)}
    honors = any(n and T.is_honor(k) for k, n in enumerate(held))
    one_suit = len(suits) == 1
    full = (one_suit and not honors) or (not suits and rules.honors_flush)
    return Judged(r, shape_of(r), full, one_suit and honors)


def judged_readings(
    counts: Sequence[int],
    jokers: int,
    melds: Sequence[Meld],
    rules: BaidaRules,
    visible: Sequence[int] | None = None,
) -> Iterator[Judged]:
    """Every reading of the concealed naturals ``counts`` (winning tile included) with
    ``jokers`` 百搭 and ``melds``, judged; shapes worth 0 倍 (no win) and fifth copies the
    options forbid (counting the ``visible`` tiles) are left out."""
    caps = None if rules.tiles.wildcard_fifth_copy else wild_caps(counts, melds, visible)
    allowed = rules.wild_stand_ins
    seven = rules.shape["seven_pairs"] > 0 or rules.shape["dragon_seven_pairs"] > 0
    for r in readings(counts, jokers, melds, allowed=allowed, seven_pairs=seven, caps=caps):
        j = judge(counts, melds, r, rules)
        if rules.shape[j.shape] > 0:
            yield j
