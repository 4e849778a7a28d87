"""Property: the options the rules offer are exactly the actions validation accepts, on random
tables (random deals with near-complete hands, 敲 flags, 漏胡 marks, melds). A table is built
from a seed, so a failure reports the seed that rebuilds it."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from services.rules.domain import (
    action_refusal,
    claim_options,
    own_turn_options,
    ready_discards,
)
from shared.hand import waits
from shared.melds import Meld, MeldKind
from shared.ruleset import load_ruleset
from shared.table import (
    AddedKong,
    Chow,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    LastAction,
    LastActionKind,
    Pong,
    SeatState,
    TableSnapshot,
    Win,
    check_snapshot,
)

RULESETS = [
    load_ruleset("shanghai-qiaoma"),
    load_ruleset("shanghai-qiaoma").with_overrides({"ready.require_declare_ready": False}),
    load_ruleset("shanghai-classic"),
]
SETTINGS = settings(max_examples=120, deadline=None)


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
    ruleset = rnd.choice(RULESETS)
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
            seats[actor] = replace(me, declared_ready=True)  # 敲 before this draw: locked
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


@SETTINGS
@given(st.integers(0, 2**32))
def test_own_turn_options_are_exactly_the_legal_actions(seed):
    snap = random_table(random.Random(seed), claim=False)
    seat = snap.turn
    o = own_turn_options(snap, seat)

    def legal(action):
        return action_refusal(snap, seat, action) is None

    kinds = range(34)
    assert {k for k in kinds if legal(Discard(k))} == set(o.discards)
    assert {k for k in kinds if legal(DeclareReady(k))} == set(o.ready_discards)
    assert {k for k in kinds if legal(ConcealedKong(k))} == set(o.concealed_kongs)
    assert {k for k in kinds if legal(AddedKong(k))} == set(o.added_kongs)
    assert legal(Win()) == any(w.kind.value != 4 for w in o.wins)
    assert legal(Win(eight_flowers=True)) == any(w.kind.value == 4 for w in o.wins)
    st_ = snap.seats[seat]
    if not st_.declared_ready and snap.ruleset.ready.require_declare_ready:
        assert set(o.ready_discards) == set(ready_discards(st_.concealed, st_.melds, snap.ruleset))
    for w in o.wins:
        if w.kind.value != 4:
            assert w.hand is not None


@SETTINGS
@given(st.integers(0, 2**32))
def test_claim_options_are_exactly_the_legal_claims(seed):
    snap = random_table(random.Random(seed), claim=True)
    for o in claim_options(snap):

        def legal(action, seat=o.seat):
            return action_refusal(snap, seat, action) is None

        assert legal(Win()) == (o.win is not None)
        assert legal(Pong()) == o.pong
        assert legal(ExposedKong()) == o.exposed_kong
        assert {low for low in range(27) if legal(Chow(low))} == set(o.chows)
        if o.win is not None:
            assert o.win.win_tile == snap.last.tile and not o.missed_win
