"""Decomposition into sets and a pair, and the table-driven standard shape."""

from __future__ import annotations

from shared.hand import is_all_pongs_shape, is_standard_shape
from shared.hand.decomposition import SetKind, decompositions
from shared.melds import Meld
from shared.tiles import parse, parse_counts


def splits(text, melds=()):
    return {
        (d.pair, tuple((s.kind, s.first, s.concealed) for s in d.sets))
        for d in decompositions(parse_counts(text), [Meld.of(*m) for m in melds])
    }


def test_triple_runs_split_both_ways():
    one, two, three, four = parse("1234m")
    found = splits("11122233344m")
    assert found == {
        (four, ((SetKind.PONG, one, True), (SetKind.PONG, two, True), (SetKind.PONG, three, True))),
        (four, ((SetKind.CHOW, one, True),) * 3),
        (one, ((SetKind.CHOW, one, True), (SetKind.CHOW, two, True), (SetKind.CHOW, two, True))),
    }


def test_pairs_that_are_double_chows():
    found = decompositions(parse_counts("11223344556677m"))
    assert sorted(d.pair for d in found) == parse("147m")
    assert all(s.kind is SetKind.CHOW for d in found for s in d.sets)


def test_melds_come_first_and_keep_their_kind():
    (d,) = decompositions(
        parse_counts("23455m"),
        [
            Meld.of("pong", "777z", 1),
            Meld.of("concealed_kong", "1111p"),
            Meld.of("chow", "789s", 3),
        ],
    )
    assert [(s.kind, s.concealed) for s in d.sets[:3]] == [
        (SetKind.PONG, False),
        (SetKind.KONG, True),
        (SetKind.CHOW, False),
    ]
    assert d.pair == parse("5m")[0]
    assert str(d.sets[1]) == "1111p"


def test_no_split_for_all_honors_out_of_shape():
    assert decompositions(parse_counts("11223344556677z")) == []
    assert decompositions(parse_counts("12345671234567z")) == []


def test_standard_and_pong_shapes():
    assert is_standard_shape(parse_counts("123m456p789s11122z"))
    assert not is_standard_shape(parse_counts("1133557799m1133p"))
    assert not is_standard_shape(parse_counts("1111m"))
    assert is_all_pongs_shape(parse_counts("111m222p333s44455z"))
    assert not is_all_pongs_shape(parse_counts("1111m222p333s4455z"))
