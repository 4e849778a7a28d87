"""Distance to a winning hand per plan (向听数 shanten), on 34-count arrays.

The distance of a hand is how many tile exchanges it still needs: a hand of ``3n + 1`` tiles
that waits (听牌) is at 0, a complete ``3n + 2`` hand at −1. It is the classic
``8 − 2 × sets − partials − pair`` count restricted to what a plan allows:

* :func:`pongs_distance` 碰碰胡: sets are pongs only, partials are pairs;
* :func:`flush_distance` 清/混一色 in one suit: sets and partials from that suit (runs too) and
  honor pongs and pairs; tiles of the other suits are dead weight;
* :func:`honors_distance` 风一色 / 乱风向: any arrangement of honors, so only the number of
  non-honor tiles counts;
* :func:`standard_distance` any standard shape, chows of every suit and honor pongs (the 平胡
  of shanghai-old and shanghai-baida, RULES-presets §13.A.4, §13.B.5);
* :func:`pairs_distance` 七对: pairs of different kinds (a four is one pair), no melds.

A suit's decompositions are enumerated once per distinct nine-count shape and cached, so a
distance is a cache look-up plus a scan of the honors.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from shared.melds import Meld, MeldKind

INFEASIBLE = 99  # the plan cannot be reached any more (a meld breaks it)

HONOR_KINDS = tuple(range(27, 34))
WIND_KINDS = tuple(range(27, 31))


def _pareto(options: set[tuple[int, int, int]]) -> tuple[tuple[int, int, int], ...]:
    keep = [
        o
        for o in options
        if not any(p != o and p[0] >= o[0] and p[1] >= o[1] and p[2] >= o[2] for p in options)
    ]
    return tuple(sorted(keep, reverse=True))


@functools.lru_cache(maxsize=1 << 16)
def suit_partials(counts: tuple[int, ...]) -> tuple[tuple[int, int, int], ...]:
    """Every useful way to read one suit's nine counts as ``(sets, partials, pair)``, pair 0/1.

    Sets are pongs and runs; partials are pairs, adjacent (45) and gapped (46) runs. Only
    readings not dominated in all three numbers are kept.
    """
    i = 0
    while i < 9 and counts[i] == 0:
        i += 1
    if i == 9:
        return ((0, 0, 0),)
    c = list(counts)
    out: set[tuple[int, int, int]] = set()

    def take(delta: Sequence[tuple[int, int]], dm: int, dt: int, dp: int) -> None:
        for pos, n in delta:
            c[pos] -= n
        for m, t, p in suit_partials(tuple(c)):
            if p + dp <= 1:
                out.add((m + dm, t + dt, p + dp))
        for pos, n in delta:
            c[pos] += n

    if c[i] >= 3:
        take(((i, 3),), 1, 0, 0)
    if i <= 6 and c[i + 1] and c[i + 2]:
        take(((i, 1), (i + 1, 1), (i + 2, 1)), 1, 0, 0)
    if c[i] >= 2:
        take(((i, 2),), 0, 0, 1)
        take(((i, 2),), 0, 1, 0)
    if i <= 7 and c[i + 1]:
        take(((i, 1), (i + 1, 1)), 0, 1, 0)
    if i <= 6 and c[i + 2]:
        take(((i, 1), (i + 2, 1)), 0, 1, 0)
    take(((i, 1),), 0, 0, 0)  # leave this copy on its own
    return _pareto(out)


def _formula(sets: int, partials: int, pair: int) -> int:
    if sets > 4:
        sets = 4
    partials = min(partials, 4 - sets)
    return 8 - 2 * sets - partials - pair


def pongs_distance(
    counts: Sequence[int], melds: Sequence[Meld], unseen: Sequence[int] | None = None
) -> int:
    """碰碰胡 distance: pongs and one pair. A pair whose last copies are all seen can still be
    the pair but can no longer grow into a pong (needs ``unseen``)."""
    if any(m.kind is MeldKind.CHOW for m in melds):
        return INFEASIBLE
    sets = len(melds)
    live_pairs = dead_pairs = 0
    for k in range(34):
        n = counts[k]
        if n >= 3:
            sets += 1
        elif n == 2:
            if unseen is None or unseen[k]:
                live_pairs += 1
            else:
                dead_pairs += 1
    if dead_pairs:
        return _formula(sets, live_pairs, 1)
    if live_pairs:
        return _formula(sets, live_pairs - 1, 1)
    return _formula(sets, 0, 0)


def flush_meld_fits(meld: Meld, suit: int, honors: Sequence[int]) -> bool:
    k = meld.tiles[0] if meld.tiles else 27  # a hidden kong is someone else's
    return k // 9 == suit if k < 27 else k in honors


def flush_distance(
    counts: Sequence[int], melds: Sequence[Meld], suit: int, honors: Sequence[int] = HONOR_KINDS
) -> int:
    """清/混一色 distance in ``suit`` (0 万, 1 筒, 2 条) with ``honors`` allowed alongside."""
    for m in melds:
        if not flush_meld_fits(m, suit, honors):
            return INFEASIBLE
    base = 9 * suit
    honor_sets, honor_pairs = _honor_groups(counts, honors)
    fixed = len(melds) + honor_sets
    readings = [(fixed + m, t, p) for m, t, p in suit_partials(tuple(counts[base : base + 9]))]
    return _best_formula(readings, honor_pairs)


def _honor_groups(counts: Sequence[int], honors: Sequence[int]) -> tuple[int, int]:
    """(pongs, pairs) among the ``honors``."""
    sets = pairs = 0
    for k in honors:
        n = counts[k]
        if n >= 3:
            sets += 1
        elif n == 2:
            pairs += 1
    return sets, pairs


def _best_formula(readings, honor_pairs: int) -> int:
    """The lowest distance of the suits' ``(sets, partials, pair)`` readings with
    ``honor_pairs`` honor pairs beside them (one of which is the pair if the suits have none)."""
    best = INFEASIBLE
    for m, t, p in readings:
        if p:
            d = _formula(m, t + honor_pairs, 1)
        elif honor_pairs:
            d = _formula(m, t + honor_pairs - 1, 1)
        else:
            d = _formula(m, t, 0)
        if d < best:
            best = d
    return best


def honors_distance(
    counts: Sequence[int], melds: Sequence[Meld], honors: Sequence[int] = HONOR_KINDS
) -> int:
    """风一色 / 乱风向 distance: every tile must be an honor, in any arrangement."""
    for m in melds:
        if m.tiles and m.tiles[0] not in honors:
            return INFEASIBLE
    total = sum(counts)
    inside = sum(counts[k] for k in honors)
    return total - inside - (1 if total % 3 == 2 else 0)


def standard_distance(counts: Sequence[int], melds: Sequence[Meld]) -> int:
    """Any standard shape: every suit read as sets and partials (the best combination of the
    suits' readings), honors as pongs and pairs, at most one pair."""
    honor_sets, honor_pairs = _honor_groups(counts, HONOR_KINDS)
    # (sets, partials, pair) of the three suits together, dominated readings dropped
    combined: set[tuple[int, int, int]] = {(len(melds) + honor_sets, 0, 0)}
    for base in (0, 9, 18):
        options = suit_partials(tuple(counts[base : base + 9]))
        combined = set(
            _pareto(
                {
                    (m + sm, t + st, p + sp)
                    for m, t, p in combined
                    for sm, st, sp in options
                    if p + sp <= 1
                }
            )
        )
    return _best_formula(combined, honor_pairs)


def pairs_distance(counts: Sequence[int], melds: Sequence[Meld]) -> int:
    """七对 distance: six minus the pairs of different kinds held (a four counts once)."""
    if melds:
        return INFEASIBLE
    return 6 - sum(1 for n in counts if n >= 2)
