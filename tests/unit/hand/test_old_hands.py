"""shanghai-old winning hands and waits (RULES-presets §13.A.4) against the naive reference:
any standard shape wins (平胡 included), 七对 of seven different kinds with no melds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared import tiles as T
from shared.hand import HandType
from shared.hand.preset_hands import classify_hand, hand_waits
from shared.ruleset import resolve_ruleset
from tests.unit.hand.brute import shapes
from tests.unit.hand.strategies import complete_hands, uniform_hands

OLD = resolve_ruleset("shanghai-old")
NO_SEVEN = resolve_ruleset("shanghai-old", {"old_fan.seven_pairs": "0"})


def expected_old(concealed: list[int], melds, seven: bool = True) -> HandType | None:
    pairs = {k: concealed.count(k) for k in set(concealed)}
    if seven and not melds and len(pairs) == 7 and set(pairs.values()) == {2}:
        return HandType.SEVEN_PAIRS
    return HandType.STANDARD if shapes(concealed) else None


@st.composite
def seven_pairs_hands(draw):
    kinds = draw(st.lists(st.integers(0, 33), min_size=6, max_size=7, unique=True))
    tiles = [k for k in kinds for _ in (0, 1)]
    while len(tiles) < 14:
        tiles.append(kinds[0])
    return tiles, []


@settings(max_examples=300, deadline=None)
@given(st.one_of(complete_hands(), uniform_hands(), seven_pairs_hands()))
def test_old_hands_match_the_definitions(hand):
    concealed, melds = hand
    counts = T.to_counts(concealed)
    assert classify_hand(counts, melds, OLD) == expected_old(concealed, melds)
    assert classify_hand(counts, melds, NO_SEVEN) == expected_old(concealed, melds, False)


@settings(max_examples=100, deadline=None)
@given(st.one_of(complete_hands(size=13), uniform_hands(size=13)))
def test_old_waits_are_the_kinds_that_complete(hand):
    concealed, melds = hand
    held = T.to_counts(concealed + [k for m in melds for k in m.tiles])
    expected = [
        k for k in range(34) if held[k] < 4 and expected_old([*concealed, k], melds) is not None
    ]
    assert hand_waits(T.to_counts(concealed), melds, OLD) == expected


def test_a_wildcard_is_no_tile_of_old():
    assert classify_hand(T.parse_counts("123m456p789s11z22z"), (), OLD, 1) is None
