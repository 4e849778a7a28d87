"""Tournament seating: Swiss by chips, with no two players meeting again while avoidable.

``seat_round`` takes the entrants in standing order (most chips first; for the first round, the
draw order) and the pairs who have already met, and returns tables of four. Tables are filled
greedily from the top of the standings, each seat going to the highest-placed player who has met
nobody at the table yet; then swaps between tables remove any repeat meeting that is left (and
keep players near their standing where there is a choice). Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

TABLE_SIZE = 4


def pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def meetings(tables: Iterable[Sequence[str]]) -> set[tuple[str, str]]:
    """Every pair of players seated together at some table."""
    return {pair(a, b) for t in tables for a, b in combinations(t, 2)}


def repeats(tables: Sequence[Sequence[str]], met: set[tuple[str, str]]) -> int:
    """How many pairs at these tables have met before."""
    return sum(pair(a, b) in met for t in tables for a, b in combinations(t, 2))


def _conflicts(table: Sequence[str], met: set[tuple[str, str]]) -> int:
    return sum(pair(a, b) in met for a, b in combinations(table, 2))


def _greedy(order: Sequence[str], met: set[tuple[str, str]]) -> list[list[str]]:
    remaining = list(order)
    tables = []
    while remaining:
        table = [remaining.pop(0)]
        while len(table) < TABLE_SIZE:
            best = min(
                range(len(remaining)),
                key=lambda i: (sum(pair(remaining[i], p) in met for p in table), i),
            )
            table.append(remaining.pop(best))
        tables.append(table)
    return tables


def _improve(tables: list[list[str]], met: set[tuple[str, str]], rank: dict[str, int]) -> None:
    """Swap players between tables while a swap lowers the repeat count (nearest tables first)."""

    def spread(t: Sequence[str], i: int) -> int:
        return sum(abs(rank[p] // TABLE_SIZE - i) for p in t)

    improved = True
    rounds = 0
    while improved and rounds < 50:
        improved = False
        rounds += 1
        n = len(tables)
        for gap in range(1, n):
            for a in range(n - gap):
                b = a + gap
                ta, tb = tables[a], tables[b]
                base = _conflicts(ta, met) + _conflicts(tb, met)
                if base == 0:
                    continue
                best = None
                for i in range(TABLE_SIZE):
                    for j in range(TABLE_SIZE):
                        na = [*ta[:i], tb[j], *ta[i + 1 :]]
                        nb = [*tb[:j], ta[i], *tb[j + 1 :]]
                        cost = (
                            _conflicts(na, met) + _conflicts(nb, met),
                            spread(na, a) + spread(nb, b),
                        )
                        if cost[0] < base and (best is None or cost < best[0]):
                            best = (cost, na, nb)
                if best:
                    tables[a], tables[b] = best[1], best[2]
                    improved = True


def _each_has_partners(remaining: Sequence[str], met: set[tuple[str, str]]) -> bool:
    """Forward check: every unseated player still has three others it has not met."""
    need = TABLE_SIZE - 1
    for p in remaining:
        free = 0
        for q in remaining:
            if q != p and pair(p, q) not in met:
                free += 1
                if free >= need:
                    break
        if free < need:
            return False
    return True


def _search(order: Sequence[str], met: set[tuple[str, str]], budget: int) -> list[list[str]] | None:
    """Depth-first: tables with no repeat meeting, each seat to the highest-placed player that
    fits (so the result stays as Swiss as possible); None when none is found within ``budget``
    steps."""
    steps = 0

    def fill(remaining: list[str], tables: list[list[str]]) -> list[list[str]] | None:
        nonlocal steps
        if not remaining:
            return tables
        table = tables[-1] if tables and len(tables[-1]) < TABLE_SIZE else None
        if table is None:
            if not _each_has_partners(remaining, met):
                return None
            return fill(remaining[1:], [*tables, [remaining[0]]])
        for i, p in enumerate(remaining):
            steps += 1
            if steps > budget:
                return None
            if any(pair(p, q) in met for q in table):
                continue
            found = fill(remaining[:i] + remaining[i + 1 :], [*tables[:-1], [*table, p]])
            if found is not None:
                return found
        return None

    return fill(list(order), [])


def seat_round(
    order: Sequence[str], met: set[tuple[str, str]], budget: int = 400_000
) -> list[tuple[str, ...]]:
    """Tables of four for one round. ``order``: players by standing (best first); its length
    must be a multiple of four. ``met``: pairs (sorted) who have already shared a table.

    A seating without repeat meetings is searched first (bounded by ``budget`` steps); when none
    is found, the greedy seating is improved by swaps to as few repeats as they reach."""
    if len(order) % TABLE_SIZE:
        raise ValueError(f"{len(order)} players do not fill tables of {TABLE_SIZE}")
    if len(set(order)) != len(order):
        raise ValueError("a player is listed twice")
    rank = {p: i for i, p in enumerate(order)}
    tables = _search(order, met, budget) if met else None
    if tables is None:
        tables = _greedy(order, met)
        if repeats(tables, met):
            _improve(tables, met, rank)
    tables.sort(key=lambda t: min(rank[p] for p in t))
    return [tuple(sorted(t, key=rank.__getitem__)) for t in tables]
