"""Tournament seating: Swiss by chips, with no two players meeting again while avoidable.

``seat_round`` takes the entrants in standing order (most chips first; for the first round, the
draw order) and the pairs who have already met, and returns tables of four: tables sorted by
their best player's standing, each table's players by standing. Pure and deterministic (the
iteration order of ``met`` plays no part); nothing recursive; every search is bounded.

The algorithm, for ``n`` entrants and ``M`` met pairs (``K``, ``D``, ``B``, ``W`` are the
constants ``WINDOW``, ``SWAP_REACH``, ``BLOCK_TABLES``, ``WIDE_TABLES``):

1. **Lookups, not a graph.** "Has p met q" is one lookup of the sorted pair in ``met``: building
   per-player neighbour sets first would cost O(|M|), at 100,000 entrants after five rounds
   (750,000 pairs) about 1.3 s, ten times the whole seating. Callers that keep neighbour sets
   between rounds can pass them to :func:`seat_round_neighbours` instead.
2. **Greedy from the top.** The unseated players are a linked list in standing order. Each table
   opens with the highest-placed unseated player; each further seat goes to the highest-placed
   of the next ``K`` unseated players who has met nobody at the table (nearly always the next
   one). Only when all ``K`` have met someone there does the seat go to the one with the fewest
   such meetings (highest-placed first), and the table is noted as having a repeat.
3. **Swap repair.** For each table with a repeat (a worklist: a swap may spoil the other table),
   the swap of one of its players with one of a table at most ``D`` away (any table in a field
   of at most ``WHOLE_TABLES`` tables) that removes the most repeats from the two tables, the
   nearest tables first, then the two players closest in standing; until the table is clean or
   no swap helps. Each swap removes at least one repeat.
4. **Exact search.** Each table still with a repeat is re-seated with its nearest tables, ``B``
   of them (20 players), then ``W`` (64 players) if that did not clear it; a field of at most
   ``WHOLE_TABLES`` tables (64 players) is re-seated whole instead. The search (:func:`_exact`)
   is depth-first over bitmasks with an explicit stack: each table opens with the best-placed
   free player and takes the others in standing order, so the first seating found is the most
   Swiss one; it prunes with lower bounds on the repeats left (a free player with fewer than
   three free players it has not met must meet the difference again; a group who have all met
   one another, more of them than tables left, must share tables) and remembers the bound for
   each set of free players it has settled. It first looks for a repeat-free seating (quick to
   find or rule out: a few thousand steps at 20 players) and only then for fewer repeats than
   there are. The ``budget`` (steps, also spent by step 3) bounds it; a block that is not the
   whole field gets at most ``BLOCK_STEPS`` per ``B`` tables.

Cost: O(n·s) for steps 1-2, with s the players looked at per seat (1-2 in a real tournament, at
most ``K``), plus O(budget) for steps 3-4, which only tables with a repeat reach. Round six of
100,000 entrants takes about 0.15 s of CPU (``python -m tests.bench seating``). The most the
default budget costs, when repeats cannot be avoided and the search looks for fewer until it
runs out (a field of 20-64 after many rounds, say), is about 0.2-0.4 s.

What it guarantees:

* every entrant is seated exactly once, at tables of four, and the leader heads the first table;
* players stay near their standing: table ``k`` (0-based) opens with the highest-placed player
  left, and a player leaves their standing table only to avoid a repeat (moved up by the greedy
  about ``K / 4`` tables at most, by a swap at most ``D``, by a block as far as it spans);
* with at most 64 entrants the whole field is searched: the result has no repeat whenever a
  repeat-free seating exists, unless ``budget`` runs out first. With at most 16 entrants the
  search ended within the default budget for each of 2,000 random histories tried (at most
  ~175,000 of its 400,000 steps), so in practice the result has the fewest repeats possible.

What it does not guarantee: beyond 64 entrants the repair is local, so a repeat-free seating
that needs players moved further than one block spans is missed; and where repeats are
unavoidable their number is kept low, not proven minimal (with 17-64 entrants the proof can
take millions of steps: the fewest found within ``budget`` is used). With a Swiss history
(each player has met a few dozen of thousands) the greedy nearly always finds a repeat-free
pick at once; a contrived history (everyone near each other in the standings has met) can
defeat the repair.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from itertools import combinations

TABLE_SIZE = 4
WINDOW = 64  # K: unseated players the greedy looks at per seat
SWAP_REACH = 8  # D: tables either side a repair swap reaches
BLOCK_TABLES = 5  # B: tables re-seated together by the exact search, first
WIDE_TABLES = 16  # then this many, where the smaller blocks did not help
WHOLE_TABLES = 16  # a field of at most this many tables is searched whole
BLOCK_STEPS = 25_000  # exact-search steps per BLOCK_TABLES tables of a block (not the field)

_NOBODY: frozenset[str] = frozenset()

Knows = Callable[[str, str], bool]  # knows(a, b): have players a and b met


def pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def meetings(tables: Iterable[Sequence[str]]) -> set[tuple[str, str]]:
    """Every pair of players seated together at some table."""
    return {pair(a, b) for t in tables for a, b in combinations(t, 2)}


def repeats(tables: Sequence[Sequence[str]], met: set[tuple[str, str]]) -> int:
    """How many pairs at these tables have met before."""
    return sum(pair(a, b) in met for t in tables for a, b in combinations(t, 2))


def neighbour_sets(met: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    """Each player's set of the players they have met (both ways), from the met pairs."""
    out: dict[str, set[str]] = {}
    get = out.get
    for a, b in met:
        s = get(a)
        if s is None:
            out[a] = {b}
        else:
            s.add(b)
        s = get(b)
        if s is None:
            out[b] = {a}
        else:
            s.add(a)
    return out


def seat_round(
    order: Sequence[str], met: Set[tuple[str, str]], budget: int = 400_000
) -> list[tuple[str, ...]]:
    """Tables of four for one round. ``order``: players by standing (best first); its length
    must be a multiple of four. ``met``: pairs (sorted) who have already shared a table.
    ``budget``: steps allowed to the repairs, steps 3-4 of the module docstring.

    Tables come sorted by their best player's standing, each table's players by standing."""
    if not met:
        return _seat(order, None, budget)

    def knows(a: str, b: str) -> bool:
        return ((a, b) if a < b else (b, a)) in met

    return _seat(order, knows, budget)


def seat_round_neighbours(
    order: Sequence[str], neighbours: Mapping[str, Set[str]], budget: int = 400_000
) -> list[tuple[str, ...]]:
    """:func:`seat_round` with the history as each player's set of the players they have met
    (:func:`neighbour_sets`; symmetric: q in neighbours[p] exactly when p in neighbours[q])."""
    if not neighbours:
        return _seat(order, None, budget)
    get = neighbours.get

    def knows(a: str, b: str) -> bool:
        return b in get(a, _NOBODY)

    return _seat(order, knows, budget)


def _seat(order: Sequence[str], knows: Knows | None, budget: int) -> list[tuple[str, ...]]:
    """Steps 2-4 of the module docstring, with ``knows(a, b)``: have a and b met (None: nobody
    has met anybody)."""
    names = list(order)
    n = len(names)
    if n % TABLE_SIZE:
        raise ValueError(f"{n} players do not fill tables of {TABLE_SIZE}")
    if len(set(names)) != n:
        raise ValueError("a player is listed twice")
    if knows is None:
        return [tuple(names[i : i + TABLE_SIZE]) for i in range(0, n, TABLE_SIZE)]
    tables, bad = _greedy(names, knows)
    if bad:
        bad, used = _repair(tables, bad, names, knows, budget)
        if bad and used < budget:
            _reseat_blocks(tables, bad, names, knows, budget - used)
        for t in tables:
            t.sort()
        tables.sort(key=lambda t: t[0])
    return [tuple(names[i] for i in t) for t in tables]


def _greedy(names: list[str], knows: Knows) -> tuple[list[list[int]], list[int]]:
    """Step 2: tables of ranks in standing order, and the indices of tables left with a
    repeat."""
    n = len(names)
    nxt = list(range(1, n + 1))  # the unseated players as a doubly linked list of ranks
    prv = list(range(-1, n - 1))
    head = 0
    tables: list[list[int]] = []
    bad: list[int] = []
    at: list[str] = []  # the names at the table being filled
    for _ in range(n // TABLE_SIZE):
        first = head
        head = nxt[first]
        if head < n:
            prv[head] = -1
        seats = [first]
        at.clear()
        at.append(names[first])
        clean = True
        for _ in range(TABLE_SIZE - 1):
            c, k, pick = head, 0, -1
            while c < n and k < WINDOW:
                name = names[c]
                for q in at:
                    if knows(name, q):
                        break
                else:
                    pick = c
                    break
                c = nxt[c]
                k += 1
            if pick < 0:  # everyone in the window has met someone here: fewest meetings
                clean = False
                c, k, least = head, 0, TABLE_SIZE
                while c < n and k < WINDOW:
                    name = names[c]
                    hits = sum(knows(name, q) for q in at)
                    if hits < least:
                        pick, least = c, hits
                    c = nxt[c]
                    k += 1
            before, after = prv[pick], nxt[pick]
            if before < 0:
                head = after
            else:
                nxt[before] = after
            if after < n:
                prv[after] = before
            seats.append(pick)
            at.append(names[pick])
        if not clean:
            bad.append(len(tables))
        tables.append(seats)
    return tables, bad


def _hits(r: int, others: Iterable[int], names: list[str], knows: Knows) -> int:
    """How many of ``others`` (ranks) player ``r`` has met."""
    name = names[r]
    return sum(knows(name, names[o]) for o in others)


def _cost(t: Sequence[int], names: list[str], knows: Knows) -> int:
    """Repeat meetings at one table (of ranks)."""
    return sum(_hits(t[i], t[:i], names, knows) for i in range(1, len(t)))


def _repair(
    tables: list[list[int]], bad: list[int], names: list[str], knows: Knows, budget: int
) -> tuple[list[int], int]:
    """Step 3: swaps with nearby tables (a step per swap looked at, ``budget`` steps at most);
    returns the indices of the tables still with a repeat and the steps used."""
    work = list(bad)
    heapq.heapify(work)
    queued = set(work)
    stuck: set[int] = set()
    last = len(tables) - 1
    reach = last if last < WHOLE_TABLES else SWAP_REACH  # a small field: any two tables
    steps = 0
    while work and steps < budget:
        t = heapq.heappop(work)
        queued.discard(t)
        T = tables[t]
        cost_t = _cost(T, names, knows)
        while cost_t:
            best = None  # (-gain, rank gap, u, i, j)
            for d in range(1, reach + 1):
                for u in (t - d, t + d):
                    if u < 0 or u > last:
                        continue
                    U = tables[u]
                    cost_u = _cost(U, names, knows)
                    steps += TABLE_SIZE * TABLE_SIZE
                    for i, x in enumerate(T):
                        rest_t = T[:i] + T[i + 1 :]
                        keep_t = cost_t - _hits(x, rest_t, names, knows)
                        for j, y in enumerate(U):
                            rest_u = U[:j] + U[j + 1 :]
                            new = (
                                keep_t
                                + _hits(y, rest_t, names, knows)
                                + cost_u
                                - _hits(y, rest_u, names, knows)
                                + _hits(x, rest_u, names, knows)
                            )
                            gain = cost_t + cost_u - new
                            if gain > 0:
                                key = (-gain, abs(x - y), u, i, j)
                                if best is None or key < best:
                                    best = key
                if best is not None:
                    break  # the nearest tables with a helpful swap
            if best is None:
                stuck.add(t)
                break
            _, _, u, i, j = best
            U = tables[u]
            T[i], U[j] = U[j], T[i]
            cost_t = _cost(T, names, knows)
            stuck.discard(u)
            if u not in queued and _cost(U, names, knows):
                heapq.heappush(work, u)
                queued.add(u)
        else:
            stuck.discard(t)
    stuck.update(work)  # out of steps
    return sorted(t for t in stuck if _cost(tables[t], names, knows)), steps


def _reseat_blocks(
    tables: list[list[int]], bad: list[int], names: list[str], knows: Knows, budget: int
) -> None:
    """Step 4: tables still with a repeat are re-seated with their nearest tables by the exact
    search, when that lowers the block's repeats: blocks of ``BLOCK_TABLES`` tables, then of
    ``WIDE_TABLES``; a field of at most ``WHOLE_TABLES`` tables is searched whole at once.
    ``budget`` steps in all; a block that is not the whole field gets at most
    ``BLOCK_STEPS`` per ``BLOCK_TABLES`` tables."""
    count = len(tables)
    widths = (count,) if count <= WHOLE_TABLES else (BLOCK_TABLES, WIDE_TABLES)
    left = budget
    for width in widths:
        cap = budget if width == count else BLOCK_STEPS * width // BLOCK_TABLES
        tried = set()
        for t in bad:
            if left <= 0:
                return
            start = max(0, min(t - width // 2, count - width))
            if start in tried or not _cost(tables[t], names, knows):
                continue  # searched already, or fixed by an earlier block
            tried.add(start)
            block = range(start, start + width)
            now = sum(_cost(tables[b], names, knows) for b in block)
            players = sorted(r for b in block for r in tables[b])
            who = [names[r] for r in players]
            conf = [0] * len(who)
            for i, a in enumerate(who):
                for j in range(i):
                    if knows(a, who[j]):
                        conf[i] |= 1 << j
                        conf[j] |= 1 << i
            seats, used = _exact(conf, 1, min(left, cap))  # repeat-free: quick to settle
            left -= used
            if seats is None and now > 1 and used < cap and left > 0:  # none: the fewest
                seats, more = _exact(conf, now, min(left, cap - used))
                left -= more
            if seats is not None:
                for k, b in enumerate(block):
                    tables[b] = [players[i] for i in seats[k * TABLE_SIZE : (k + 1) * TABLE_SIZE]]


def _exact(conf: list[int], bound: int, budget: int) -> tuple[list[int] | None, int]:
    """Seat players 0..m-1 (standing order; ``conf[i]``: bitmask of those ``i`` has met) at
    tables of four with fewer than ``bound`` repeats: the fewest possible if the search ends
    within ``budget`` steps, else the fewest found. Depth-first over seats with an explicit
    stack; each table opens with the best-placed free player and takes the others in standing
    order, so of the seatings with the least cost the first found is the most Swiss. Returns
    (the players seat by seat, or None if nothing below ``bound`` was found; steps used)."""
    m = len(conf)
    choice = [0] * m
    free_at = [0] * (m + 1)  # free players (bitmask) before seat s is filled
    table_at = [0] * (m + 1)  # the players already at seat s's table
    cost_at = [0] * (m + 1)  # repeats so far
    cursor = [0] * (m + 1)  # next candidate at seat s (an opening seat: 1 once tried)
    free_at[0] = (1 << m) - 1
    floor: dict[int, int] = {}  # free players at an opening seat: fewest repeats among them
    found = None
    steps = 0
    s = 0
    while s >= 0:
        if s == m:
            bound = cost_at[m]
            found = choice[:]
            if bound == 0:
                break
            s -= 1
            continue
        free = free_at[s]
        cost = cost_at[s]
        if s % TABLE_SIZE == 0:  # open a table with the best-placed free player
            if cursor[s]:  # all of this seat's seatings cheaper than ``bound`` tried
                if floor.get(free, 0) < bound - cost:
                    floor[free] = bound - cost
                s -= 1
                continue
            cursor[s] = 1
            steps += 1
            if steps > budget:
                break
            least = floor.get(free)
            if least is None:
                least, work = _least_repeats(free, conf, (m - s) // TABLE_SIZE)
                floor[free] = least
                steps += work
            if cost + least >= bound:
                s -= 1
                continue
            low = free & -free
            choice[s] = low.bit_length() - 1
            free_at[s + 1] = free ^ low
            table_at[s + 1] = low
            cost_at[s + 1] = cost
            cursor[s + 1] = choice[s] + 1
            s += 1
            continue
        table = table_at[s]
        still = TABLE_SIZE - 1 - s % TABLE_SIZE  # seats after this one at the table
        rest = free >> cursor[s] << cursor[s]
        placed = False
        while rest:
            low = rest & -rest
            rest ^= low
            if rest.bit_count() < still:
                break  # too few players below this one to fill the table
            steps += 1
            if steps > budget:
                break
            j = low.bit_length() - 1
            c = cost + (conf[j] & table).bit_count()
            if c < bound:
                cursor[s] = j + 1
                choice[s] = j
                free_at[s + 1] = free ^ low
                table_at[s + 1] = table | low
                cost_at[s + 1] = c
                cursor[s + 1] = j + 1 if still else 0
                s += 1
                placed = True
                break
        if steps > budget:
            break
        if not placed:
            s -= 1
    return found, min(steps, budget)


def _least_repeats(free: int, conf: list[int], tables: int) -> tuple[int, int]:
    """A lower bound on the repeats of any seating of the ``free`` players (bitmask) at
    ``tables`` tables, and the work it took (in steps): the larger of

    * half the players' shortfalls: a player with fewer than 3 free players it has not met
      meets at least the difference again (each repeat counts for two players);
    * a clique's: players who have all met one another (found greedily from the player who has
      met the most) spread as evenly as can be over the tables still meet within each table.
    """
    need = TABLE_SIZE - 1
    count = free.bit_count()
    short = 0
    top, top_met = -1, -1
    rest = free
    while rest:
        low = rest & -rest
        rest ^= low
        j = low.bit_length() - 1
        met = (free & conf[j]).bit_count()
        if count - 1 - met < need:
            short += need - (count - 1 - met)
        if met > top_met:
            top, top_met = j, met
    least = (short + 1) // 2
    work = count // TABLE_SIZE
    if top_met < tables:
        return least, work  # no clique of more than ``tables`` players
    size, common = 1, conf[top] & free
    while common:
        pick, most = -1, -1
        rest = common
        while rest:
            low = rest & -rest
            rest ^= low
            u = low.bit_length() - 1
            inside = (conf[u] & common).bit_count()
            if inside > most:
                pick, most = u, inside
        work += common.bit_count() // TABLE_SIZE + 1
        size += 1
        common &= conf[pick]
    if size > tables:
        q, r = divmod(size, tables)
        least = max(least, r * (q + 1) * q // 2 + (tables - r) * q * (q - 1) // 2)
    return least, work
