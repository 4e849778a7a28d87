"""Property tests of hand evaluation against the naive reference in :mod:`.brute`."""

from __future__ import annotations

import json
import os
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.rules.cli import judge_line
from shared.hand import HandType, classify, is_winning_hand, waits
from shared.hand.decomposition import SetKind, decompositions
from shared.ruleset import load_ruleset
from shared.tiles import format_tiles, to_counts
from tests.unit.hand.brute import expected_hand, shapes
from tests.unit.hand.strategies import complete_hands, uniform_hands

QIAOMA = load_ruleset("shanghai-qiaoma")
NO_DRAGONS = QIAOMA.with_overrides({"hands.honors_include_dragons": False})
# MAHJONG_PROPERTY_EXAMPLES raises the example count for a deeper run than the suite's.
PROPS = settings(
    max_examples=int(os.environ.get("MAHJONG_PROPERTY_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def held(concealed, melds):
    h = to_counts(concealed)
    for m in melds:
        for k in m.tiles:
            h[k] += 1
    return h


@PROPS
@given(st.one_of(complete_hands(13), uniform_hands(13)), st.sampled_from([QIAOMA, NO_DRAGONS]))
def test_a_tile_is_a_wait_exactly_when_it_makes_an_allowed_win(hand, ruleset):
    concealed, melds = hand
    got = waits(to_counts(concealed), melds, ruleset)
    dragons = ruleset.hands.honors_include_dragons
    h = held(concealed, melds)
    want = [
        k
        for k in range(34)
        if h[k] < 4 and expected_hand([*concealed, k], melds, dragons) is not None
    ]
    assert got == want


@PROPS
@given(complete_hands(14), st.sampled_from([QIAOMA, NO_DRAGONS]))
def test_every_reported_hand_type_meets_its_definition(hand, ruleset):
    concealed, melds = hand
    got = classify(to_counts(concealed), melds, ruleset)
    assert got == expected_hand(concealed, melds, ruleset.hands.honors_include_dragons)


@PROPS
@given(st.one_of(complete_hands(14), uniform_hands(14)), st.sampled_from([QIAOMA, NO_DRAGONS]))
def test_win_check_agrees_with_the_definitions(hand, ruleset):
    # is_winning_hand rejects most hands with list scans before classifying: same answers.
    concealed, melds = hand
    want = expected_hand(concealed, melds, ruleset.hands.honors_include_dragons) is not None
    assert is_winning_hand(to_counts(concealed), melds, ruleset) == want
    assert is_winning_hand(tuple(to_counts(concealed)), melds, ruleset) == want


@PROPS
@given(st.one_of(complete_hands(13), uniform_hands(13)), st.sampled_from([QIAOMA, NO_DRAGONS]))
def test_waits_of_uniform_hands(hand, ruleset):
    test_a_tile_is_a_wait_exactly_when_it_makes_an_allowed_win.hypothesis.inner_test(hand, ruleset)


@PROPS
@given(complete_hands(14))
def test_decompositions_are_exactly_the_naive_splits(hand):
    concealed, melds = hand
    found = decompositions(to_counts(concealed), melds)
    naive = shapes(concealed)
    as_naive = {
        (
            d.pair,
            tuple(
                sorted(
                    ("C" if s.kind is SetKind.CHOW else "P", s.first) for s in d.sets[len(melds) :]
                )
            ),
        )
        for d in found
    }
    assert len(found) == len(as_naive) == len(naive)
    assert as_naive == naive
    for d in found:
        concealed_sets = d.sets[len(melds) :]
        tiles = [d.pair, d.pair] + [k for s in concealed_sets for k in s.tiles]
        assert sorted(tiles) == sorted(concealed)
        assert all(s.kind is not SetKind.KONG for s in concealed_sets)
    # A reported pong hand always has an all-pong split.
    hand_type = classify(to_counts(concealed), melds, QIAOMA)
    if hand_type in (
        HandType.PONG_PONG,
        HandType.HALF_FLUSH_PONGS,
        HandType.FULL_FLUSH_PONGS,
        HandType.ALL_HONOR_PONGS,
    ):
        assert any(d.all_pongs for d in found)


@PROPS
@given(st.one_of(complete_hands(13), complete_hands(14)), st.randoms(use_true_random=False))
def test_tile_and_meld_order_never_changes_an_answer(hand, rnd: random.Random):
    concealed, melds = hand
    line = {
        "concealed": format_tiles(concealed, sort=False),
        "melds": [m.to_json() for m in melds],
    }
    shuffled_tiles = list(concealed)
    rnd.shuffle(shuffled_tiles)
    shuffled_melds = list(melds)
    rnd.shuffle(shuffled_melds)
    other = {
        "concealed": format_tiles(shuffled_tiles, sort=False),
        "melds": [m.to_json() for m in shuffled_melds],
    }
    assert json.dumps(judge_line(line)) == json.dumps(judge_line(other))
