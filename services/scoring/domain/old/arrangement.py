"""The arrangements (读法) of a 14-tile 户/番 hand (RULES-presets §13.A.4, §13.A.7 step 1).

An arrangement is one way to read the hand for scoring: a standard decomposition (four sets and
a pair, the declared melds among the sets) together with the group the winning tile completes,
or the 七对 reading. The group matters on a discard or 抢杠 win only: the triplet the winning
tile completes is an exposed pong there (§13.A.5), while a chow or the pair it completes leaves
every concealed triplet concealed. Arrangements that score alike are listed once.

Also here: the facts of the hand that do not depend on the arrangement (its colour). Which
hands win and what a hand waits on are the rules' (:mod:`shared.hand.preset_hands`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared import tiles as T
from shared.hand.decomposition import HandSet, SetKind, decompositions
from shared.hand.preset_hands import is_seven_pairs
from shared.melds import Meld


@dataclass(frozen=True, slots=True)
class Arrangement:
    """One reading. Standard: ``pair`` and ``sets`` (declared melds first, each with
    ``concealed`` as it scores). 七对: ``seven_pairs`` with the seven kinds in ``pairs``.
    ``completes`` says in words which group the winning tile completes."""

    seven_pairs: bool
    pair: int | None
    sets: tuple[HandSet, ...]
    pairs: tuple[int, ...] = ()
    completes: str = ""


@dataclass(frozen=True, slots=True)
class Colour:
    """Which suits (bits 1/2/4 for m/p/s) and whether honors the 14 tiles hold, melds
    included."""

    suits: int
    honors: bool

    @property
    def one_suit(self) -> bool:
        return self.suits in (1, 2, 4)

    @property
    def full_flush(self) -> bool:
        """清一色: one suit, no honors."""
        return self.one_suit and not self.honors

    @property
    def half_flush(self) -> bool:
        """混一色: one suit and at least one honor."""
        return self.one_suit and self.honors

    @property
    def all_honors(self) -> bool:
        """字一色: honors only."""
        return self.suits == 0 and self.honors


def colour_of(counts: Sequence[int], melds: Sequence[Meld]) -> Colour:
    kinds = [k for k, n in enumerate(counts) if n] + [m.tiles[0] for m in melds]
    suits = 0
    for k in kinds:
        if T.is_suited(k):
            suits |= 1 << T.suit_of(k)
    return Colour(suits, any(T.is_honor(k) for k in kinds))


def arrangements(
    counts: Sequence[int],
    melds: Sequence[Meld],
    win_tile: int,
    by_feeder: bool,
    seven_pairs: bool,
) -> list[Arrangement]:
    """Every arrangement of concealed ``counts`` (winning tile included) and ``melds``;
    ``by_feeder``: won on a discard or by 抢杠. Empty when the hand is no win."""
    out: list[Arrangement] = []
    seen: set[tuple] = set()
    declared = len(melds)
    for d in decompositions(counts, melds):
        concealed = d.sets[declared:]
        choices: list[tuple[int | None, str]] = []
        if d.pair == win_tile:
            choices.append((None, f"the pair {T.format_tiles((win_tile,) * 2)}"))
        for i, s in enumerate(concealed):
            if win_tile in s.tiles:
                what = "chow" if s.kind is SetKind.CHOW else "triplet"
                choices.append((i, f"the {what} {s}"))
        for index, words in choices:
            sets = list(concealed)
            if index is not None and by_feeder and sets[index].kind is SetKind.PONG:
                sets[index] = HandSet(SetKind.PONG, sets[index].first, concealed=False)
                words += ", exposed: completed by another player's tile"
            scored = d.sets[:declared] + tuple(sorted(sets))
            key = (d.pair, scored)
            if key in seen:
                continue
            seen.add(key)
            out.append(Arrangement(False, d.pair, scored, completes=words))
    if seven_pairs and not melds and is_seven_pairs(counts):
        kinds = tuple(k for k, n in enumerate(counts) if n)
        out.append(Arrangement(True, None, (), kinds, completes="a pair of 七对"))
    return out
