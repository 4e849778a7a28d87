"""Hypothesis strategies for hands: near-winning hands built from sets, and random ones."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from shared.melds import Meld, MeldKind


@st.composite
def complete_hands(draw, size: int = 14):
    """(concealed tile list, melds) of 14 tiles (a kong counting 3), usually complete, often a
    flush or all honors, with 0-4 sets laid down as melds; ``size=13`` removes one tile."""
    style = draw(st.sampled_from(["mixed", "one_suit", "half", "honors", "random_honors"]))
    suit = draw(st.integers(0, 2))
    counts = [0] * 34
    if style == "random_honors":
        kinds = list(range(27, 34))
        tiles = []
        while len(tiles) < 14:
            k = draw(st.sampled_from(kinds))
            if tiles.count(k) < 4:
                tiles.append(k)
        return _finish(draw, tiles, [], size)

    def kind_pool():
        if style == "mixed":
            return list(range(34))
        if style == "one_suit":
            return list(range(9 * suit, 9 * suit + 9))
        if style == "half":
            return list(range(9 * suit, 9 * suit + 9)) + list(range(27, 34))
        return list(range(27, 34))

    pool = kind_pool()
    sets: list[tuple[str, int]] = []
    for _ in range(200):
        if len(sets) == 4:
            break
        k = draw(st.sampled_from(pool))
        chow = k < 27 and k % 9 <= 6 and draw(st.booleans())
        need = [k, k + 1, k + 2] if chow else [k, k, k]
        trial = list(counts)
        for t in need:
            trial[t] += 1
        if max(trial) <= 4:
            counts = trial
            sets.append(("C" if chow else "P", k))
    assume(len(sets) == 4)
    pair_choices = [k for k in pool if counts[k] <= 2]
    assume(pair_choices)
    pair = draw(st.sampled_from(pair_choices))
    counts[pair] += 2
    n_melds = draw(st.integers(0, 4))
    melds = []
    concealed = [pair, pair]
    for i, (kind, k) in enumerate(sets):
        tiles = (k, k + 1, k + 2) if kind == "C" else (k, k, k)
        if i < n_melds:
            if kind == "C":
                melds.append(Meld(MeldKind.CHOW, tiles, 0))
            else:
                mk = draw(st.sampled_from([MeldKind.PONG, MeldKind.EXPOSED_KONG]))
                if mk is MeldKind.EXPOSED_KONG and counts[k] == 3:
                    counts[k] += 1
                    melds.append(Meld(mk, (k,) * 4, 0))
                else:
                    melds.append(Meld(MeldKind.PONG, tiles, 0))
        else:
            concealed.extend(tiles)
    # Sometimes swap one concealed tile for a random one, to test near misses.
    if draw(st.booleans()):
        i = draw(st.integers(0, len(concealed) - 1))
        held = _held(concealed, melds)
        new = draw(st.sampled_from([k for k in range(34) if held[k] < 4]))
        concealed[i] = new
    return _finish(draw, concealed, melds, size)


def _held(concealed, melds):
    held = [0] * 34
    for k in concealed:
        held[k] += 1
    for m in melds:
        for k in m.tiles:
            held[k] += 1
    return held


def _finish(draw, concealed, melds, size):
    if size == 13:
        i = draw(st.integers(0, len(concealed) - 1))
        concealed = concealed[:i] + concealed[i + 1 :]
    return draw(st.permutations(concealed)), melds


@st.composite
def uniform_hands(draw, size: int = 14):
    """``size`` tiles drawn uniformly from the 136 (as a list in any order), no melds."""
    tiles = draw(st.lists(st.integers(0, 135), min_size=size, max_size=size, unique=True))
    return [t // 4 for t in tiles], []
