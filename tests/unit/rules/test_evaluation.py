"""Winning hands (RULES §6) and waits through the rules domain's checked entry points."""

from __future__ import annotations

import pytest

from services.rules.domain import evaluate_hand, hand_waits
from shared import tiles as T
from shared.errors import InvalidArgument
from shared.hand import HandType
from shared.melds import Meld, MeldKind
from shared.ruleset import resolve_ruleset
from shared.tiles import format_tiles, parse, parse_counts
from tests.conftest import load_vectors

VECTORS = load_vectors("rules.jsonl") + load_vectors("presets-rules.jsonl")


def judge(concealed: str, melds=(), ruleset=None, flowers=""):
    ms = [Meld.of(*m) for m in melds]
    return evaluate_hand(parse_counts(concealed), ms, ruleset, parse(flowers))


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_rule_vectors(vector):
    ruleset = resolve_ruleset(vector.get("ruleset", ""), vector.get("options"))
    tiles = parse(vector["concealed"])
    counts, jokers = T.to_counts(tiles), T.count_wildcards(tiles)
    melds = [Meld.from_json(m) for m in vector["melds"]]
    if "waits" in vector["expect"]:
        waits = hand_waits(counts, melds, ruleset, jokers)
        assert format_tiles(waits) == vector["expect"]["waits"]
    else:
        hand = evaluate_hand(counts, melds, ruleset, jokers=jokers).hand
        assert (hand.label if hand else None) == vector["expect"]["hand"]


def test_all_honors_in_no_shape_with_melds(qiaoma):
    # 乱风向 with an exposed honor pong: the 11 concealed honors are in no shape at all.
    r = judge("12334556777z", [("pong", "222z", 1)], qiaoma)
    assert r.hand is HandType.ALL_HONORS
    assert r.decompositions == ()


def test_all_honors_with_a_suited_meld_is_no_win(qiaoma):
    r = judge("12334556777z", [("pong", "111m", 1)], qiaoma)
    assert r.hand is None


def test_all_honor_pongs_beats_all_honors(qiaoma):
    assert judge("11122233344455z", (), qiaoma).hand is HandType.ALL_HONOR_PONGS


def test_full_flush_and_pongs_reads_as_the_higher(qiaoma):
    # 111222333m is three pongs or three chows: both 清一色 and 清碰; 清碰 is higher.
    r = judge("11122233344455m", (), qiaoma)
    assert r.hand is HandType.FULL_FLUSH_PONGS
    assert len(r.decompositions) >= 2
    assert any(not d.all_pongs for d in r.decompositions)


def test_half_flush_pongs_beats_half_flush(qiaoma):
    # 111222333m reads as pongs or chows; with honors that is 混碰 (higher than 混一色).
    assert judge("111222333m44455z", (), qiaoma).hand is HandType.HALF_FLUSH_PONGS
    assert judge("123234345m44455z", (), qiaoma).hand is HandType.HALF_FLUSH


def test_seven_pairs_that_are_double_chows_win_as_full_flush(qiaoma):
    r = judge("11223344556677m", (), qiaoma)
    assert r.hand is HandType.FULL_FLUSH
    assert r.decompositions


def test_seven_pairs_are_no_win(qiaoma):
    assert judge("1133557799m1133p", (), qiaoma).hand is None


def test_plain_mixed_hand_is_never_a_win(qiaoma):
    assert judge("123m456p789s11122z", (), qiaoma).hand is None


def test_mixed_suits_all_pongs_is_pong_pong(qiaoma):
    assert judge("111m222p333s44455z", (), qiaoma).hand is HandType.PONG_PONG


def test_half_flush_with_melds(qiaoma):
    r = judge("234p55z", [("chow", "123p", 0), ("pong", "777z", 2), ("pong", "999p", 3)], qiaoma)
    assert r.hand is HandType.HALF_FLUSH


def test_dragons_not_honors_option(qiaoma):
    no_dragons = qiaoma.with_overrides({"hands.honors_include_dragons": False})
    # One suit plus dragons: 混一色 by default, nothing when dragons are not 风.
    hand = "123456789p22255z"
    assert judge(hand, (), qiaoma).hand is HandType.HALF_FLUSH
    assert judge(hand, (), no_dragons).hand is None
    winds_only = "123456789p11122z"
    assert judge(winds_only, (), no_dragons).hand is HandType.HALF_FLUSH


def test_eight_flowers_reported_beside_the_hand(qiaoma):
    r = judge("123m456p789s11122z", (), qiaoma, flowers="12345678f")
    assert r.hand is None and r.eight_flowers


@pytest.mark.parametrize(
    ("concealed", "melds", "message"),
    [
        ("11111m23456789p", (), "5 copies of 1m"),
        ("1111m234567p", [("pong", "111m", 1)], "7 copies of 1m"),
        ("123m456p", (), "6 tiles in all"),
        ("123m456p789s111222z", (), "15 tiles in all"),
        ("1234567m", [("pong", "111z", 1), ("chow", "1m2p3s", 2)], "not a run of three"),
        ("1234567m", [("pong", "111z", 1), ("chow", "123z", 2)], "honors cannot chow"),
        ("1234567m", [("pong", "112z", 1), ("pong", "333z", 2)], "not of identical tiles"),
    ],
)
def test_bad_hands_are_invalid_arguments(qiaoma, concealed, melds, message):
    # Melds built without validation, as a request could carry them.
    ms = [Meld(MeldKind.from_label(k), tuple(sorted(parse(t))), f) for k, t, f in melds]
    with pytest.raises(InvalidArgument, match=message):
        evaluate_hand(parse_counts(concealed), ms, qiaoma)


def test_flower_among_hand_tiles_is_invalid():
    from shared.hand.input import counts_from_tiles

    with pytest.raises(InvalidArgument, match="flower 3f among"):
        counts_from_tiles(parse("123m3f"))


def test_waits_need_13_tiles(qiaoma):
    with pytest.raises(InvalidArgument, match="expected 13"):
        hand_waits(parse_counts("11122233344455m"), [], qiaoma)
