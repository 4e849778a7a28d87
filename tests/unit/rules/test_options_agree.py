"""Property: the options the rules offer are exactly the actions validation accepts, on random
tables (random deals with near-complete hands, 敲 flags, 漏胡 marks, melds). A table is built
from a seed, so a failure reports the seed that rebuilds it."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from services.rules.domain import (
    action_refusal,
    claim_options,
    own_turn_options,
    ready_discards,
)
from shared.table import (
    AddedKong,
    Chow,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    Pong,
    Win,
)
from tests.unit.rules.builders import random_table

SETTINGS = settings(max_examples=120, deadline=None)


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
