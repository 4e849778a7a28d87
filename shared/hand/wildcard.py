"""百搭 wildcard hands on count arrays (RULES-presets §13.B.3, §13.B.5).

A wildcard hand is a 34-count array of natural tiles plus a number of 百搭 (``jokers``). No
substitution is ever tried one by one. The win checks are arithmetic on *jokers needed*:

* per suit, :func:`suit_cost` is the fewest 百搭 that make its nine counts complete — into sets
  only, and into sets plus the one pair — a table keyed by the suit's 9-byte pattern, filled on
  first use by a small search over the groups that can hold the suit's lowest tile (a pong, a
  chow or the pair, each with 百搭 filling its missing tiles) and kept (bounded) after;
* an honor kind needs ``_HONOR_SETS[c]`` / ``_HONOR_WITH_PAIR[c]`` 百搭 for ``c`` copies;
* a standard shape exists iff the sum of the components' set-only costs plus the cheapest
  component's extra cost for holding the pair (a pair of two 百搭 costs 2) is at most
  ``jokers``: what is left over is a multiple of three (sizes add up), and three 百搭 make a
  pong of any kind. A 百搭 may be a fifth copy (option ``wildcard_fifth_copy``), so no cap on
  the substituted counts applies.

对对胡 (all pongs), 七对 and 龙七对 are read off the counts the same way. :func:`readings` yields
the arrangements themselves (decompositions with the 百搭 substitutions chosen), for scoring to
pick the best; it searches groups, never substitutions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from shared.hand.decomposition import Decomposition, HandSet, SetKind, meld_set
from shared.melds import Meld
from shared.tiles import COPIES

INF: Final = 99  # more 百搭 than any hand holds
_CAP: Final = 5  # costs are exact up to 4 (a hand holds at most four 百搭); above is "too many"
_HONOR_SETS: Final = (0, 2, 1, 0, 2)  # 百搭 for c copies of an honor to become pongs
_HONOR_WITH_PAIR: Final = (2, 1, 0, 2, 1)  # … pongs and the pair
_SUIT_BASES: Final = (0, 9, 18)

_COST: Final[dict[tuple[bytes, bool], int]] = {}
_COST_LIMIT: Final = 400_000  # entries kept; cleared past this (a few tens of MB at most)


def _cost(c: list[int], pair: bool) -> int:
    """Fewest 百搭 making the nine suit counts ``c`` into sets (and the pair, with ``pair``),
    capped at :data:`_CAP`."""
    key = (bytes(c), pair)
    hit = _COST.get(key)
    if hit is not None:
        return hit
    i = 0
    while i < 9 and c[i] == 0:
        i += 1
    if i == 9:
        best = 2 if pair else 0
    else:
        best = _CAP
        n = c[i]
        # a pong of rank i with a natural copies (1-3) and 3 - a 百搭
        for a in range(1, min(n, 3) + 1):
            c[i] -= a
            best = min(best, 3 - a + _cost(c, pair))
            c[i] += a
        # the pair of rank i with a natural copies (1-2)
        if pair:
            for a in range(1, min(n, 2) + 1):
                c[i] -= a
                best = min(best, 2 - a + _cost(c, False))
                c[i] += a
        # a chow holding rank i: the window i..i+2, or the top window 7-9 for ranks 8 and 9;
        # ranks below i hold nothing, so they are 百搭; others use a natural or a 百搭
        s = i if i <= 6 else 6
        others = [r for r in (s, s + 1, s + 2) if r != i]
        c[i] -= 1
        for use0 in (False, True):
            if use0 and c[others[0]] == 0:
                continue
            for use1 in (False, True):
                if use1 and c[others[1]] == 0:
                    continue
                c[others[0]] -= use0
                c[others[1]] -= use1
                best = min(best, 2 - use0 - use1 + _cost(c, pair))
                c[others[0]] += use0
                c[others[1]] += use1
        c[i] += 1
        best = min(best, _CAP)
    if len(_COST) >= _COST_LIMIT:
        _COST.clear()
    _COST[key] = best
    return best


_SUIT: Final[dict[bytes, tuple[int, int]]] = {}  # a suit's 9-byte pattern → (sets, sets + pair)
_HONOR_DELTA: Final = tuple(p - q for p, q in zip(_HONOR_WITH_PAIR, _HONOR_SETS, strict=True))


def _suit_costs(key: bytes) -> tuple[int, int]:
    got = _SUIT.get(key)
    if got is None:
        c = list(key)
        got = (_cost(c, False), _cost(c, True))
        if len(_SUIT) >= _COST_LIMIT:
            _SUIT.clear()
        _SUIT[key] = got
    return got


def suit_cost(nine: Sequence[int], pair: bool) -> int:
    """Fewest 百搭 that make one suit's nine counts sets only (``pair`` False) or sets and the
    pair (True); :data:`_CAP` (5) stands for "more than four"."""
    return _suit_costs(bytes(nine))[1 if pair else 0]


def standard_cost(counts: Sequence[int]) -> int:
    """Fewest 百搭 that complete the natural ``counts`` (each 0-4) into sets and one pair
    (四副一将), with any melds counted apart; at least :data:`_CAP` when more than four would
    be needed. Three look-ups in the per-suit table and the seven honors."""
    b = bytes(counts)
    s0, p0 = _suit_costs(b[0:9])
    s1, p1 = _suit_costs(b[9:18])
    s2, p2 = _suit_costs(b[18:27])
    base = s0 + s1 + s2
    extra = min(2, p0 - s0, p1 - s1, p2 - s2)
    for c in b[27:34]:
        base += _HONOR_SETS[c]
        d = _HONOR_DELTA[c]
        if d < extra:
            extra = d
    return base + extra


def is_wild_standard(counts: Sequence[int], jokers: int) -> bool:
    """Do the natural ``counts`` and ``jokers`` 百搭 (3n + 2 tiles) make a standard shape with
    some substitution?"""
    return standard_cost(counts) <= jokers


def pong_pong_cost(counts: Sequence[int]) -> int:
    """Fewest 百搭 that make the natural ``counts`` pongs and one pair (对对胡)."""
    base = 0
    extra = 2
    for c in counts:
        if c > 4:
            return INF
        base += _HONOR_SETS[c]
        delta = _HONOR_WITH_PAIR[c] - _HONOR_SETS[c]
        if delta < extra:
            extra = delta
    return base + extra


def seven_pairs_kinds(counts: Sequence[int], jokers: int) -> tuple[bool, bool]:
    """(plain 七对 possible, 龙七对 possible) for a concealed hand of 14 tiles (``counts`` and
    ``jokers`` together; no melds). Pairs of seven different kinds need every natural count at
    most two; 龙七对 needs some kind four times, 百搭 included. Leftover 百搭 pair up with each
    other (as a new kind, or as a second pair of a kind held)."""
    singles = 0
    dragon = False
    plain = True
    for c in counts:
        if c & 1:
            singles += 1
        if c >= 3:
            plain = False
            dragon = True
    if singles > jokers or (jokers - singles) & 1:
        return False, False
    if jokers - singles >= 2:
        dragon = True  # two 百搭 double a pair already there
    return plain, dragon


@dataclass(frozen=True, slots=True)
class Reading:
    """One arrangement of a wildcard hand: the decomposition of the substituted hand (None for
    七对), the seven pairs' kinds for 七对 (a kind twice in 龙七对), and the kinds the 百搭 stand
    for (one entry per 百搭, in no particular order)."""

    decomposition: Decomposition | None
    pairs: tuple[int, ...]
    wild: tuple[int, ...]

    @property
    def is_seven_pairs(self) -> bool:
        return self.decomposition is None

    @property
    def is_dragon_seven_pairs(self) -> bool:
        """龙七对: some kind makes two of the seven pairs."""
        return self.decomposition is None and len(set(self.pairs)) < 7


def _filler_kind(
    counts: Sequence[int],
    allowed: Sequence[int],
    room: Sequence[int] | None = None,
    need: int = 0,
) -> int | None:
    """The kind a group made of 百搭 only stands for: one that keeps the hand's colour — the
    first allowed kind of the suit its natural tiles are in, if one suit, else the first
    allowed kind (scoring-wise every choice is alike beyond colour). With ``room`` (百搭 each
    kind may still stand for, no fifth copies) only a kind with ``need`` of room qualifies;
    None when none does."""
    suits = {k // 9 if k < 27 else 3 for k, n in enumerate(counts) if n}
    first = list(allowed)
    if len(suits) == 1:
        (s,) = suits
        first = [k for k in allowed if (k // 9 if k < 27 else 3) == s] + first
    for k in first:
        if room is None or room[k] >= need:
            return k
    return None


def _colour_first(counts: Sequence[int], allowed: Sequence[int]) -> list[int]:
    """``allowed`` with the kinds of the hand's one suit (or honors) first, if it has one."""
    groups = {k // 9 if k < 27 else 3 for k, n in enumerate(counts) if n}
    if len(groups) != 1:
        return list(allowed)
    (g,) = groups
    return sorted(allowed, key=lambda k: (k // 9 if k < 27 else 3) != g)


def wild_caps(
    counts: Sequence[int], melds: Sequence[Meld], visible: Sequence[int] | None = None
) -> list[int]:
    """How many 百搭 may stand for each kind when no fifth copy is allowed
    (``baida_tiles.wildcard_fifth_copy`` false, §13.B.3): four less the natural copies held
    (concealed ``counts`` and ``melds``) and ``visible`` outside the hand."""
    caps = [COPIES - c for c in counts]
    for m in melds:
        for k in m.tiles:
            caps[k] -= 1
    if visible is not None:
        for k, n in enumerate(visible):
            caps[k] -= n
    return caps


def _within(wild: Sequence[int], caps: Sequence[int]) -> list[int] | None:
    """The room left per kind once ``wild`` is substituted, or None when some kind would go
    past its cap."""
    room = list(caps)
    for k in wild:
        room[k] -= 1
        if room[k] < 0:
            return None
    return room


def _groups(
    c: list[int], k: int, pair: bool, jokers: int, wide: bool = False
) -> Iterator[tuple[list[HandSet], int | None, list[int]]]:
    """Every split of the naturals ``c`` (from kind ``k`` on) into sets and, with ``pair``, the
    pair, each group completed by 百搭 (at most ``jokers``): yields (sets, pair kind or None
    when the pair is still to be made of 百搭, kinds the 百搭 used stand for). A chow of 百搭
    and the lowest natural ``k`` is tried in one window (they all cost the same); with
    ``wide`` in every window holding ``k`` (百搭 below it), since which kinds the 百搭 stand
    for matters when fifth copies are not allowed."""
    while k < 34 and c[k] == 0:
        k += 1
    if k == 34:
        yield [], None, []
        return
    n = c[k]
    for a in range(min(n, 3), 0, -1):  # a pong of k: a naturals, 3 - a 百搭
        if 3 - a > jokers:
            continue
        c[k] -= a
        for sets, p, wild in _groups(c, k, pair, jokers - (3 - a), wide):
            yield [HandSet(SetKind.PONG, k), *sets], p, [k] * (3 - a) + wild
        c[k] += a
    if pair:
        for a in range(min(n, 2), 0, -1):  # the pair of k
            if 2 - a > jokers:
                continue
            c[k] -= a
            for sets, _p, wild in _groups(c, k, False, jokers - (2 - a), wide):
                yield sets, k, [k] * (2 - a) + wild
            c[k] += a
    if k < 27 and jokers:  # a chow holding k; lower ranks of the window are 百搭
        base = k - k % 9
        r = k - base
        starts = [x for x in (r - 2, r - 1, r) if 0 <= x <= 6] if wide else [min(r, 6)]
        c[k] -= 1
        for s in starts:
            window = [base + s, base + s + 1, base + s + 2]
            others = [x for x in window if x != k]
            for use0 in (True, False):
                if use0 and c[others[0]] == 0:
                    continue
                for use1 in (True, False):
                    if use1 and c[others[1]] == 0:
                        continue
                    need = 2 - use0 - use1
                    if need > jokers or need == 0:
                        continue  # need 0 is the natural chow, taken below
                    c[others[0]] -= use0
                    c[others[1]] -= use1
                    wild = [x for x, used in zip(others, (use0, use1), strict=True) if not used]
                    for sets, p, rest in _groups(c, k, pair, jokers - need, wide):
                        yield [HandSet(SetKind.CHOW, window[0]), *sets], p, wild + rest
                    c[others[0]] += use0
                    c[others[1]] += use1
        c[k] += 1
    if k < 27 and (k - k % 9) + 6 >= k and c[k + 1] and c[k + 2]:  # the natural chow
        for d in (0, 1, 2):
            c[k + d] -= 1
        for sets, p, wild in _groups(c, k, pair, jokers, wide):
            yield [HandSet(SetKind.CHOW, k), *sets], p, wild
        for d in (0, 1, 2):
            c[k + d] += 1


def readings(
    counts: Sequence[int],
    jokers: int,
    melds: Sequence[Meld] = (),
    *,
    allowed: Sequence[int] = tuple(range(34)),
    seven_pairs: bool = True,
    caps: Sequence[int] | None = None,
) -> Iterator[Reading]:
    """Every distinct arrangement of the concealed natural ``counts`` plus ``jokers`` 百搭 (win
    tile included; 14 − 3 × melds tiles) and the declared ``melds`` as a winning hand: each
    standard decomposition with the 百搭 substitutions it needs, then (no melds, and with
    ``seven_pairs``) the 七对 readings — seven different kinds if possible, and 龙七对 if a kind
    can make two pairs. 百搭 that form a group on their own stand for one representative kind of
    ``allowed`` (the kinds a 百搭 may be: playing kinds that are no bonus tile), chosen to keep
    the hand's colour: a pong (worth at least a chow), or the pair.

    With ``caps`` (:func:`wild_caps`: no fifth copies) only readings in which no kind has more
    百搭 than its cap are yielded, and every placement of a chow's 百搭 is tried, since the
    kinds they stand for then matter."""
    if standard_cost(counts) <= jokers:
        declared = tuple(meld_set(m) for m in melds)
        seen: set[Decomposition] = set()
        filler = _filler_kind(counts, allowed)
        assert filler is not None  # with no room to respect every allowed kind qualifies
        for sets, pair, wild in _groups(list(counts), 0, True, jokers, caps is not None):
            left = jokers - len(wild)
            if left % 3 != (0 if pair is not None else 2):
                continue
            room = None if caps is None else _within(wild, caps)
            if caps is not None and room is None:
                continue
            extra: list[HandSet] = []
            wild = list(wild)
            if pair is None:
                pair = filler if room is None else _filler_kind(counts, allowed, room, 2)
                if pair is None:
                    continue
                wild += [pair, pair]
                left -= 2
                if room is not None:
                    room[pair] -= 2
            pongs = [filler] * (left // 3)
            if room is not None and pongs:  # four 百搭 at most: one such pong
                fits = _filler_kind(counts, allowed, room, left)
                if fits is None:
                    continue
                pongs = [fits]
            for kind in pongs:  # pongs of three 百搭
                extra.append(HandSet(SetKind.PONG, kind))
                wild += [kind] * 3
            d = Decomposition(pair, declared + tuple(sorted(sets + extra)))
            if d not in seen:
                seen.add(d)
                yield Reading(d, (), tuple(sorted(wild)))
    if seven_pairs and not melds:
        yield from _seven_pairs_readings(counts, jokers, allowed, caps)


def _seven_pairs_readings(
    counts: Sequence[int], jokers: int, allowed: Sequence[int], caps: Sequence[int] | None
) -> Iterator[Reading]:
    plain, dragon = seven_pairs_kinds(counts, jokers)
    if not (plain or dragon):
        return
    pairs: list[int] = []
    wild: list[int] = []
    for k, c in enumerate(counts):
        pairs.extend([k] * (c // 2))
        if c & 1:
            pairs.append(k)
            wild.append(k)
    room = [INF] * len(counts) if caps is None else _within(wild, caps)
    if room is None:
        return  # a single can only be paired by a 百搭 standing for a fifth copy
    left = jokers - len(wild)
    # kinds the hand holds none of, that two 百搭 may stand for, the hand's suit first
    fresh = [k for k in _colour_first(counts, allowed) if not counts[k] and room[k] >= 2]
    if plain:
        extra = fresh[: left // 2]
        if len(extra) == left // 2:
            yield Reading(None, tuple(sorted(pairs + extra)), tuple(sorted(wild + extra * 2)))
    if dragon:
        if left >= 2:  # two 百搭 double a pair (the first that may), the rest pair apart
            if caps is None:
                extra = [pairs[0] if pairs else allowed[0]] * (left // 2)
            else:
                natural = not plain  # a natural three or four already makes the 龙
                first = [] if natural else [k for k in pairs if room[k] >= 2][:1]
                if not (natural or first) and left >= 4:  # four 百搭: one fresh kind twice
                    first = [k for k in fresh if room[k] >= 4][:1] * 2
                rest = [k for k in fresh if k not in first]
                extra = first + rest[: left // 2 - len(first)]
                if len(extra) != left // 2 or not (natural or first):
                    return
            yield Reading(None, tuple(sorted(pairs + extra)), tuple(sorted(wild + extra * 2)))
        elif not plain:  # a natural three or four already makes the 龙
            yield Reading(None, tuple(sorted(pairs)), tuple(sorted(wild)))


def completing_kinds(
    counts: Sequence[int], jokers: int, seven_pairs: bool, kinds: Sequence[int]
) -> list[int]:
    """The kinds among ``kinds`` whose addition to the 13-tile natural ``counts`` (with
    ``jokers`` 百搭) makes a standard shape — or, with ``seven_pairs``, seven pairs of either
    kind. One table look-up per candidate: only the candidate's suit is judged again, the other
    components' costs are kept (and the cheapest two pair deltas, so replacing one is O(1))."""
    b = bytearray(counts)
    sets: list[int] = []
    deltas: list[int] = []
    for base in _SUIT_BASES:
        s_, p_ = _suit_costs(bytes(b[base : base + 9]))
        sets.append(s_)
        deltas.append(p_ - s_)
    for c in b[27:34]:
        sets.append(_HONOR_SETS[c])
        deltas.append(_HONOR_DELTA[c])
    total = sum(sets)
    order = sorted(range(len(deltas)), key=deltas.__getitem__)
    first, second = order[0], order[1]
    singles = sum(c & 1 for c in b)
    out: list[int] = []
    for k in kinds:
        if k < 27:
            comp = k // 9
            base = 9 * comp
            b[k] += 1
            s_, p_ = _suit_costs(bytes(b[base : base + 9]))
            b[k] -= 1
            d_ = p_ - s_
        else:
            comp = 3 + k - 27
            c = b[k] + 1
            if c > 4:
                continue
            s_, d_ = _HONOR_SETS[c], _HONOR_DELTA[c]
        other = deltas[second] if comp == first else deltas[first]
        extra = min(2, d_, other)
        standard = total - sets[comp] + s_ + extra <= jokers
        pairs = seven_pairs and singles + (-1 if b[k] & 1 else 1) <= jokers
        if standard or pairs:
            out.append(k)
    return out
