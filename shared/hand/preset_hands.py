"""Winning hands and waits of every preset (RULES §6; RULES-presets §13.A.4, §13.B.5), by the
ruleset's ``table.scoring_model``:

* ``qiaoma`` — RULES §6 (:mod:`shared.hand.hand_type`, :mod:`shared.hand.waits`), unchanged;
* ``old`` (shanghai-old) — any standard shape (``STANDARD``, 平胡 included, no minimum), or
  七对 of seven different kinds with no melds (``SEVEN_PAIRS``; ``old_fan.seven_pairs`` 0
  makes it no win); tiles that read both ways are 七对;
* ``baida`` (shanghai-baida) — with the hand's 百搭 substituted (:mod:`shared.hand.wildcard`):
  平胡 / 对对胡 / 七对 / 龙七对, each also 清一色 when every natural tile (melds included) is
  in one suit (or, with ``baida_scoring.honors_flush``, all honors). The hand named is the one
  with the highest hand 倍 (shape × colour, ``baida_scoring``), ties going to 龙七对, 对对胡,
  七对, 平胡; a shape worth 0 is no win.

Every function takes the natural 34-count array and, for baida, the number of 百搭 held
(``jokers``); the qiaoma path is the table-driven code it always was. With
``baida_tiles.wildcard_fifth_copy`` false the baida checks also take ``visible``: the 34 counts
of the tiles the owner sees outside the hand (:func:`shared.table.visible_tiles`), since a 百搭
may not stand for a kind of which all four natural tiles are held or visible (§13.B.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from shared.hand.hand_type import HandType, classify, is_winning_hand
from shared.hand.shape import is_standard_shape
from shared.hand.waits import waits
from shared.hand.wildcard import (
    Reading,
    completing_kinds,
    pong_pong_cost,
    readings,
    seven_pairs_kinds,
    standard_cost,
    wild_caps,
)
from shared.melds import Meld, MeldKind
from shared.per_ruleset import PerRuleset
from shared.ruleset import Ruleset
from shared.tiles import NUM_KINDS, WILDCARD

QIAOMA: Final = 0
OLD: Final = 1
BAIDA: Final = 2
_MODELS: Final = {"qiaoma": QIAOMA, "old": OLD, "baida": BAIDA}


class _Options:
    """The options the hand checks read, looked up once per ruleset object."""

    __slots__ = (
        "allowed",
        "dragon_value",
        "every_shape_wins",
        "fifth_copy",
        "flush",
        "honors_flush",
        "model",
        "ping_value",
        "pong_value",
        "seven_value",
    )

    def __init__(self, ruleset: Ruleset) -> None:
        table = ruleset.sections["table"]
        self.model = _MODELS.get(table.get("scoring_model", "qiaoma"), QIAOMA)
        self.seven_value = 0
        self.ping_value = self.pong_value = self.dragon_value = self.flush = 1
        self.honors_flush = False
        self.fifth_copy = True
        dragons_playing = True
        if self.model == OLD:
            self.seven_value = int(ruleset.old_fan.seven_pairs)
        elif self.model == BAIDA:
            bs = ruleset.baida_scoring
            self.ping_value = int(bs.ping_hu)
            self.pong_value = int(bs.pong_pong)
            self.seven_value = int(bs.seven_pairs)
            self.dragon_value = int(bs.dragon_seven_pairs)
            self.flush = int(bs.full_flush)
            self.honors_flush = bool(bs.honors_flush)
            bt = ruleset.baida_tiles
            self.fifth_copy = bool(bt.wildcard_fifth_copy)
            dragons_playing = table.get("tile_set") != "baida" or not bt.dragons_are_flowers
        self.allowed: tuple[int, ...] = tuple(
            k for k in range(NUM_KINDS) if dragons_playing or not 31 <= k <= 33
        )
        # the defaults: any standard shape, 七对 or 龙七对 wins, so a win check needs no shape
        self.every_shape_wins = self.fifth_copy and (
            min(self.ping_value, self.pong_value, self.seven_value, self.dragon_value) > 0
        )


_OPTIONS: Final = PerRuleset(_Options)


def model_of(ruleset: Ruleset) -> int:
    """QIAOMA, OLD or BAIDA: the ruleset's ``table.scoring_model``."""
    return _OPTIONS.get(ruleset).model


def wildcard_kinds(ruleset: Ruleset) -> tuple[int, ...]:
    """The kinds a 百搭 may stand for: playing kinds that are no bonus tile (§13.B.3)."""
    return _OPTIONS.get(ruleset).allowed


# --- shanghai-old ----------------------------------------------------------------------------
def is_seven_pairs(counts: Sequence[int]) -> bool:
    """七对 of seven different kinds (old, §13.A.4): four of a kind is not two pairs."""
    pairs = 0
    for c in counts:
        if c == 2:
            pairs += 1
        elif c:
            return False
    return pairs == 7


def classify_old(counts: Sequence[int], melds: Sequence[Meld], ruleset: Ruleset) -> HandType | None:
    """``SEVEN_PAIRS``, ``STANDARD`` or None (§13.A.4)."""
    if not melds and _OPTIONS.get(ruleset).seven_value > 0 and is_seven_pairs(counts):
        return HandType.SEVEN_PAIRS
    return HandType.STANDARD if is_standard_shape(counts) else None


# --- shanghai-baida --------------------------------------------------------------------------
_FLUSH_OF: Final = {
    HandType.PING_HU: HandType.FULL_FLUSH,
    HandType.PONG_PONG: HandType.FULL_FLUSH_PONG_PONG,
    HandType.SEVEN_PAIRS: HandType.FULL_FLUSH_SEVEN_PAIRS,
    HandType.DRAGON_SEVEN_PAIRS: HandType.FULL_FLUSH_DRAGON_SEVEN_PAIRS,
}
_SHAPE_OF: Final = {v: k for k, v in _FLUSH_OF.items()}


def shape_of(hand: HandType) -> HandType:
    """The baida shape of a hand type (清一色 removed): PING_HU, PONG_PONG, SEVEN_PAIRS or
    DRAGON_SEVEN_PAIRS."""
    return _SHAPE_OF.get(hand, hand)


def is_baida_flush(counts: Sequence[int], melds: Sequence[Meld], honors_flush: bool) -> bool:
    """清一色 (§13.B.5): every natural tile, melds included, in one suit — or, with
    ``honors_flush``, all honors. 百搭 take the colour they are given."""
    group = -1
    for k, c in enumerate(counts):
        if c:
            g = k // 9 if k < 27 else 3
            if group == -1:
                group = g
            elif g != group:
                return False
    for m in melds:
        k = m.tiles[0]
        g = k // 9 if k < 27 else 3
        if group == -1:
            group = g
        elif g != group:
            return False
    return group != -1 and (group < 3 or honors_flush)


def baida_shapes(
    counts: Sequence[int],
    jokers: int,
    melds: Sequence[Meld],
    ruleset: Ruleset,
    visible: Sequence[int] | None = None,
) -> list[HandType]:
    """The shapes (PING_HU, PONG_PONG, SEVEN_PAIRS, DRAGON_SEVEN_PAIRS) some substitution of the
    ``jokers`` 百搭 makes of the hand (win tile included). 平胡 is left out of a hand that reads
    as 对对胡 unless the options make 平胡 worth more (then a reading with a chow is looked
    for). ``visible`` is read only without fifth copies (the module docstring)."""
    opts = _OPTIONS.get(ruleset)
    if not opts.fifth_copy and jokers:
        caps = wild_caps(counts, melds, visible)
        if any(caps[k] < jokers for k in opts.allowed):
            return _capped_shapes(counts, jokers, melds, opts, caps)
        # otherwise no kind is so near its last copy that the 百搭 could make a fifth
    out: list[HandType] = []
    chow_meld = any(m.kind is MeldKind.CHOW for m in melds)
    if not melds:
        plain, dragon = seven_pairs_kinds(counts, jokers)
        if dragon:
            out.append(HandType.DRAGON_SEVEN_PAIRS)
        if plain:
            out.append(HandType.SEVEN_PAIRS)
    standard = standard_cost(counts) <= jokers
    if standard and not chow_meld and pong_pong_cost(counts) <= jokers:
        out.append(HandType.PONG_PONG)
        if chow_meld or _has_chow_reading(counts, jokers, melds, opts):
            out.append(HandType.PING_HU)
    elif standard:
        out.append(HandType.PING_HU)
    return out


def _has_chow_reading(
    counts: Sequence[int], jokers: int, melds: Sequence[Meld], opts: _Options
) -> bool:
    """Whether a hand that reads as 对对胡 also reads with a chow (asked only when 平胡 could be
    worth more than 对对胡 by the options)."""
    if opts.ping_value <= opts.pong_value:
        return False  # never the better reading: not worth the search
    return any(
        r.decomposition is not None and not r.decomposition.all_pongs
        for r in readings(counts, jokers, melds, allowed=opts.allowed, seven_pairs=False)
    )


def _capped_shapes(
    counts: Sequence[int],
    jokers: int,
    melds: Sequence[Meld],
    opts: _Options,
    caps: Sequence[int],
) -> list[HandType]:
    """:func:`baida_shapes` with no fifth copies: the shapes of the readings in which no kind
    has more 百搭 than its cap (:func:`shared.hand.wildcard.wild_caps`: held and visible
    counted). A hand no substitution at all completes is rejected first, off the tables."""
    if not _baida_wins(counts, jokers, melds):
        return []
    found = {_shape(r) for r in readings(counts, jokers, melds, allowed=opts.allowed, caps=caps)}
    return [h for h in _TIE_ORDER if h in found]


def _shape(r: Reading) -> HandType:
    if r.decomposition is None:
        return HandType.DRAGON_SEVEN_PAIRS if r.is_dragon_seven_pairs else HandType.SEVEN_PAIRS
    return HandType.PONG_PONG if r.decomposition.all_pongs else HandType.PING_HU


def _capped_wins(
    counts: Sequence[int],
    jokers: int,
    melds: Sequence[Meld],
    opts: _Options,
    visible: Sequence[int] | None,
) -> bool:
    """The win check without fifth copies: the first reading within the caps whose shape is
    worth something decides (no search for the best, which only scoring needs)."""
    if not _baida_wins(counts, jokers, melds):
        return False
    limits = wild_caps(counts, melds, visible)
    # without a kind so near its last copy that a 百搭 could be a fifth, no caps are needed
    binding = jokers > 0 and any(limits[k] < jokers for k in opts.allowed)
    caps = limits if binding else None
    values = {
        HandType.PING_HU: opts.ping_value,
        HandType.PONG_PONG: opts.pong_value,
        HandType.SEVEN_PAIRS: opts.seven_value,
        HandType.DRAGON_SEVEN_PAIRS: opts.dragon_value,
    }
    return any(
        values[_shape(r)] > 0
        for r in readings(counts, jokers, melds, allowed=opts.allowed, caps=caps)
    )


_TIE_ORDER: Final = (
    HandType.DRAGON_SEVEN_PAIRS,
    HandType.PONG_PONG,
    HandType.SEVEN_PAIRS,
    HandType.PING_HU,
)


def shape_value(shape: HandType, ruleset: Ruleset) -> int:
    """The shape's 倍 (``baida_scoring``); 0 = no win."""
    opts = _OPTIONS.get(ruleset)
    if shape is HandType.PING_HU:
        return opts.ping_value
    if shape is HandType.PONG_PONG:
        return opts.pong_value
    if shape is HandType.SEVEN_PAIRS:
        return opts.seven_value
    return opts.dragon_value


def classify_baida(
    counts: Sequence[int],
    jokers: int,
    melds: Sequence[Meld],
    ruleset: Ruleset,
    visible: Sequence[int] | None = None,
) -> HandType | None:
    """The baida hand with the highest hand 倍 (shape × colour), or None (§13.B.5)."""
    best: HandType | None = None
    best_value = 0
    for shape in baida_shapes(counts, jokers, melds, ruleset, visible):
        value = shape_value(shape, ruleset)
        if value > best_value or (
            value == best_value and best is not None and _before(shape, best)
        ):
            best, best_value = shape, value
    if best is None:
        return None
    opts = _OPTIONS.get(ruleset)
    if is_baida_flush(counts, melds, opts.honors_flush):
        return _FLUSH_OF[best]
    return best


def _before(a: HandType, b: HandType) -> bool:
    return _TIE_ORDER.index(a) < _TIE_ORDER.index(b)


# --- every preset ------------------------------------------------------------------------------
def classify_hand(
    counts: Sequence[int],
    melds: Sequence[Meld],
    ruleset: Ruleset,
    jokers: int = 0,
    visible: Sequence[int] | None = None,
) -> HandType | None:
    """The winning hand the concealed ``counts`` (win tile included), ``jokers`` 百搭 and
    ``melds`` make under the ruleset's model, or None (``visible``: the module docstring)."""
    model = _OPTIONS.get(ruleset).model
    if model == QIAOMA:
        return classify(counts, melds, ruleset) if not jokers else None
    if model == OLD:
        return classify_old(counts, melds, ruleset) if not jokers else None
    return classify_baida(counts, jokers, melds, ruleset, visible)


def _baida_wins(counts: Sequence[int], jokers: int, melds: Sequence[Meld]) -> bool:
    """The baida win check: with the default options a standard shape or seven pairs (either
    kind) is enough, read off the 百搭-needed tables; otherwise the hand is classified."""
    if standard_cost(counts) <= jokers:
        return True
    if melds:
        return False
    plain, dragon = seven_pairs_kinds(counts, jokers)
    return plain or dragon


def is_winning(
    counts: Sequence[int],
    melds: Sequence[Meld],
    ruleset: Ruleset,
    jokers: int = 0,
    visible: Sequence[int] | None = None,
) -> bool:
    """胡 check under the ruleset's model (the qiaoma path keeps its fast scans)."""
    opts = _OPTIONS.get(ruleset)
    if opts.model == QIAOMA:
        return not jokers and is_winning_hand(counts, melds, ruleset)
    if opts.model == BAIDA and opts.every_shape_wins:
        return _baida_wins(counts, jokers, melds)
    if opts.model == BAIDA and not opts.fifth_copy:
        return _capped_wins(counts, jokers, melds, opts, visible)
    return classify_hand(counts, melds, ruleset, jokers, visible) is not None


def hand_waits(
    counts: Sequence[int],
    melds: Sequence[Meld],
    ruleset: Ruleset,
    jokers: int = 0,
    visible: Sequence[int] | None = None,
) -> list[int]:
    """Every kind that completes the 13-tile hand (13 − 3 × melds concealed tiles, 百搭
    included) under the ruleset's model, in canonical order, 1j last when drawing a 百搭
    completes it (baida). Natural kinds the hand holds four of are left out; a 百搭 may still
    stand for a fifth copy, so ``1j`` may be the only wait — unless ``wildcard_fifth_copy`` is
    false: then the ``visible`` tiles count with the hand's own (§13.B.3), both for the kinds
    a 百搭 may stand for and for the natural kinds left out (all four held or seen)."""
    opts = _OPTIONS.get(ruleset)
    if opts.model == QIAOMA:
        return waits(counts, melds, ruleset) if not jokers else []
    held = list(counts)
    for m in melds:
        for k in m.tiles:
            held[k] += 1
    trial = list(counts)
    out: list[int] = []
    if opts.model == OLD:
        candidates = [k for k in range(NUM_KINDS) if held[k] < 4]
        out = completing_kinds(counts, 0, False, candidates)  # standard shapes
        if not melds and opts.seven_value > 0 and counts.count(2) == 6 and counts.count(1) == 1:
            single = list(counts).index(1)  # six pairs and a single: 七对 on the single
            if held[single] < 4 and single not in out:
                out = sorted([*out, single])
        return out
    if not is_winning(counts, melds, ruleset, jokers + 1, visible):
        return []  # a natural tile that completes the hand could be a 百搭 instead
    if visible is not None and not opts.fifth_copy:  # a kind all seen cannot be drawn either
        held = [a + b for a, b in zip(held, visible, strict=True)]
    candidates = [k for k in opts.allowed if held[k] < 4]
    if opts.every_shape_wins:
        out = completing_kinds(counts, jokers, not melds, candidates)
    else:
        for k in candidates:
            trial[k] += 1
            if is_winning(trial, melds, ruleset, jokers, visible):
                out.append(k)
            trial[k] -= 1
    if jokers < 4:  # all four 百搭 held: none left to draw
        out.append(WILDCARD)
    return out
