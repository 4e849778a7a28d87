"""An independent, deliberately naive reference for the hand tests: splits by plain recursion
over sorted tile lists (no count tables), and the hand types of RULES §6 read straight from
their definitions."""

from __future__ import annotations

from functools import cache

from shared.hand import HandType
from shared.melds import MeldKind


def _is_run(a: int, b: int, c: int) -> bool:
    return a < 27 and a // 9 == c // 9 and b == a + 1 and c == a + 2


Split = tuple[tuple[str, int], ...]  # sorted (kind 'P' pong / 'C' chow, lowest tile)


@cache
def _splits(tiles: tuple[int, ...]) -> frozenset[Split]:
    """Every way to cut a sorted tile tuple into triples, as sorted set lists."""
    if not tiles:
        return frozenset({()})
    first, rest = tiles[0], list(tiles[1:])
    out = set()
    if rest[:2] == [first, first]:
        for s in _splits(tuple(rest[2:])):
            out.add(tuple(sorted((("P", first), *s))))
    if first + 1 in rest and first + 2 in rest and _is_run(first, first + 1, first + 2):
        r = list(rest)
        r.remove(first + 1)
        r.remove(first + 2)
        for s in _splits(tuple(r)):
            out.add(tuple(sorted((("C", first), *s))))
    return frozenset(out)


def shapes(concealed: list[int]) -> set[tuple[int, Split]]:
    """Every distinct split of a 3n+2 tile list into sets and one pair: (pair, sets)."""
    tiles = sorted(concealed)
    out = set()
    for p in sorted(set(tiles)):
        if tiles.count(p) >= 2:
            rest = list(tiles)
            rest.remove(p)
            rest.remove(p)
            out.update((p, s) for s in _splits(tuple(rest)))
    return out


def expected_hand(concealed: list[int], melds, honors_include_dragons: bool = True):
    """The hand type RULES §6 gives, from the definitions."""
    every = list(concealed) + [k for m in melds for k in m.tiles]
    honor_max = 34 if honors_include_dragons else 31
    honors = [k for k in every if k >= 27]
    suits = {k // 9 for k in every if k < 27}
    other_honors = any(k >= honor_max for k in honors)
    splits = shapes(concealed)
    no_chow_meld = all(m.kind is not MeldKind.CHOW for m in melds)
    pongs = no_chow_meld and any(all(kind == "P" for kind, _ in s) for _, s in splits)
    if not suits and not other_honors:
        return HandType.ALL_HONOR_PONGS if pongs else HandType.ALL_HONORS
    if len(suits) == 1 and not other_honors:
        if pongs:
            return HandType.HALF_FLUSH_PONGS if honors else HandType.FULL_FLUSH_PONGS
        if splits:
            return HandType.HALF_FLUSH if honors else HandType.FULL_FLUSH
        return None
    return HandType.PONG_PONG if pongs else None
