"""Builders of table snapshots for the rules tests and benchmarks: from mpsz text, or random
tables (near-complete hands, 敲 flags, 漏胡 marks, melds) from a seeded ``random.Random``."""

from __future__ import annotations

import random
from collections.abc import Sequence

from shared.hand import waits
from shared.hand.input import held_counts
from shared.melds import Meld, MeldKind
from shared.ruleset import Ruleset, load_ruleset
from shared.table import LastAction, LastActionKind, SeatState, TableSnapshot, check_snapshot
from shared.tiles import NUM_KINDS, parse, parse_counts


def tile(text: str) -> int:
    (k,) = parse(text)
    return k


def seat(
    concealed: str,
    melds: Sequence[Meld | tuple] = (),
    *,
    ready: bool = False,
    missed: str = "",
    flowers: str = "",
    discards: str = "",
) -> SeatState:
    ms = tuple(m if isinstance(m, Meld) else Meld.of(*m) for m in melds)
    return SeatState(
        concealed=tuple(parse_counts(concealed)),
        melds=ms,
        flowers=tuple(parse(flowers)),
        discards=tuple(parse(discards)),
        declared_ready=ready,
        missed_wins=frozenset(parse(missed)),
    )


def table(
    seats: dict[int, SeatState],
    last: tuple[str, int, str | None],
    *,
    ruleset: Ruleset | str = "shanghai-qiaoma",
    dealer: int = 0,
    wall: int = 50,
    first_go_around: bool = False,
    avoid: str = "",
) -> TableSnapshot:
    """A checked snapshot. ``seats`` holds the seats under test; every other seat gets a
    13-tile filler hand of suited tiles left over, avoiding the last tile, its neighbours and
    the kinds in ``avoid``, so a filler can never win, pong, kong or chow it.
    ``last`` is (kind label, seat, tile)."""
    rs = load_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    kind, by, t = last
    left = [4] * NUM_KINDS
    for st in seats.values():
        for k, n in enumerate(held_counts(st.concealed, st.melds)):
            left[k] -= n
    banned = set(parse(avoid))
    if t is not None:
        k0 = tile(t)
        banned.update(k for k in range(k0 - 2, k0 + 3) if 0 <= k < NUM_KINDS)
        if kind == "discard" and k0 < NUM_KINDS:  # a discarded 1j takes no natural copy
            left[k0] -= 1
    order = [k for k in range(27) if k not in banned]
    all_seats = []
    for s in range(4):
        if s in seats:
            all_seats.append(seats[s])
            continue
        counts = [0] * NUM_KINDS
        need = 13
        for k in order:
            take = min(left[k], need)
            counts[k] += take
            left[k] -= take
            need -= take
            if not need:
                break
        assert not need, "not enough tiles left for a filler hand"
        all_seats.append(SeatState(concealed=tuple(counts)))
    lk = LastActionKind[kind.upper()]
    snap = TableSnapshot(
        ruleset=rs,
        seats=tuple(all_seats),  # type: ignore[arg-type]
        dealer=dealer,
        turn=by,
        wall_remaining=wall,
        last=LastAction(lk, by, None if t is None else tile(t)),
        first_go_around=first_go_around,
    )
    check_snapshot(snap)
    return snap


# --- random tables (property tests, benchmarks) ---------------------------------------------
RANDOM_RULESETS = [
    load_ruleset("shanghai-qiaoma"),
    load_ruleset("shanghai-qiaoma").with_overrides({"ready.require_declare_ready": False}),
    load_ruleset("shanghai-classic"),
]


def take(pool: list[int], k: int) -> bool:
    if pool[k]:
        pool[k] -= 1
        return True
    return False


def near_hand(rnd: random.Random, pool: list[int], size: int) -> tuple[list[int], list[Meld]]:
    """A hand of ``size`` tiles (14 or 13, melds counting 3): sets of one suit (sometimes with
    honors, sometimes mixed) with a pair, some sets laid down, one tile off at random."""
    suit = rnd.randrange(3) * 9
    kinds = rnd.choice(
        [list(range(suit, suit + 9)), [*range(suit, suit + 9), *range(27, 34)], list(range(34))]
    )
    counts = [0] * 34
    melds: list[Meld] = []
    tiles_left = size
    for _ in range(40):
        if tiles_left < 3:
            break
        k = rnd.choice(kinds)
        run = k < 27 and k % 9 <= 6 and rnd.random() < 0.5
        need = (k, k + 1, k + 2) if run else (k, k, k)
        if all(pool[t] >= need.count(t) for t in set(need)):
            for t in need:
                pool[t] -= 1
            if rnd.random() < 0.3 and len(melds) < 3:
                kind = MeldKind.CHOW if run else MeldKind.PONG
                melds.append(Meld(kind, tuple(need), rnd.randrange(4)))
            else:
                for t in need:
                    counts[t] += 1
            tiles_left -= 3
    while tiles_left:
        k = rnd.choice(kinds) if rnd.random() < 0.8 else rnd.randrange(34)
        if take(pool, k):
            counts[k] += 1
            tiles_left -= 1
    return counts, melds


def random_table(rnd: random.Random, claim: bool) -> TableSnapshot:
    ruleset = rnd.choice(RANDOM_RULESETS)
    pool = [4] * 34
    actor = rnd.randrange(4)
    seats = []
    for s in range(4):
        size = 14 if (s == actor and not claim) else 13
        counts, melds = near_hand(rnd, pool, size)
        ready = False
        if size == 13 and rnd.random() < 0.5:
            ready = bool(waits(counts, melds, ruleset))
        missed: frozenset[int] = frozenset()
        if ready and rnd.random() < 0.3:
            missed = frozenset(rnd.sample(waits(counts, melds, ruleset), 1))
        flowers = tuple(range(34, 42)) if rnd.random() < 0.05 and s == actor else ()
        seats.append(
            SeatState(
                concealed=tuple(counts),
                melds=tuple(melds),
                declared_ready=ready,
                missed_wins=missed,
                flowers=flowers,
            )
        )
    if claim:
        options = [k for k in range(34) if pool[k]]
        tile = rnd.choice(options)
        last = LastAction(LastActionKind.DISCARD, actor, tile)
    else:
        me = seats[actor]
        drawn = rnd.choice([k for k in range(34) if me.concealed[k]])
        kind = rnd.choice([LastActionKind.DRAW, LastActionKind.REPLACEMENT_DRAW])
        last = LastAction(kind, actor, drawn)
        before = list(me.concealed)
        before[drawn] -= 1
        if rnd.random() < 0.5 and waits(before, me.melds, ruleset):
            seats[actor] = me._replace(declared_ready=True)  # 敲 before this draw: locked
    snap = TableSnapshot(
        ruleset=ruleset,
        seats=tuple(seats),  # type: ignore[arg-type]
        dealer=rnd.randrange(4),
        turn=actor,
        wall_remaining=rnd.choice([0, 1, 30]),
        last=last,
        first_go_around=rnd.random() < 0.2,
    )
    check_snapshot(snap)
    return snap
