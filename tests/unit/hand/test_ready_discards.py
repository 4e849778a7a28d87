"""Property: the quick filter of discards that may leave a wait never drops a discard that
does (checked against the naive reference of :mod:`.brute`), so ``ready_discards`` built on it
is exactly the brute-force list."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.rules.domain import ready_discards
from shared.hand.waits import discards_that_may_wait
from shared.tiles import to_counts
from tests.unit.hand.brute import expected_hand
from tests.unit.hand.strategies import complete_hands, uniform_hands
from tests.unit.hand.test_properties import NO_DRAGONS, PROPS, QIAOMA, held


def brute_ready_discards(concealed, melds, dragons) -> list[int]:
    h = held(concealed, melds)
    out = []
    for d in sorted(set(concealed)):
        rest = list(concealed)
        rest.remove(d)
        after = [*h]
        after[d] -= 1
        if any(
            after[k] < 4 and expected_hand([*rest, k], melds, dragons) is not None
            for k in range(34)
        ):
            out.append(d)
    return out


@PROPS
@given(st.one_of(complete_hands(14), uniform_hands(14)), st.sampled_from([QIAOMA, NO_DRAGONS]))
def test_ready_discards_are_exactly_the_discards_leaving_a_wait(hand, ruleset):
    concealed, melds = hand
    counts = to_counts(concealed)
    want = brute_ready_discards(concealed, melds, ruleset.hands.honors_include_dragons)
    assert set(want) <= set(discards_that_may_wait(counts, melds))
    assert list(ready_discards(counts, melds, ruleset)) == want
