"""shared.tiles: kinds, the canonical set and mpsz notation (RULES.md §1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import tiles as T

kinds = st.integers(0, T.NUM_TILE_KINDS - 1)


def test_canonical_set_is_the_144_tiles_in_rules_order():
    tiles = T.canonical_set()
    assert len(tiles) == T.WALL_SIZE == 144
    assert tiles[:4] == [0, 0, 0, 0]
    assert tiles[-8:] == list(range(34, 42))
    assert tiles == sorted(tiles)
    assert T.format_tiles(tiles[:36:4]) == "123456789m"


@pytest.mark.parametrize(
    ("extras", "wildcards", "size", "tail"),
    [
        (True, True, 152, "12345678f1234a1111j"),
        (True, False, 148, "12345678f1234a"),
        (False, True, 148, "12345678f1111j"),
        (False, False, 144, "12345678f"),
    ],
)
def test_baida_sets_append_the_extras_then_the_wildcards(extras, wildcards, size, tail):
    tiles = T.canonical_set(extras, wildcards)
    assert len(tiles) == size
    assert tiles == sorted(tiles)
    assert T.format_tiles(tiles[136:]) == tail


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("123m55z1f", [0, 1, 2, 31, 31, 34]),
        ("9p", [17]),
        ("19s", [18, 26]),
        ("1234567z", list(range(27, 34))),
        ("12345678f", list(range(34, 42))),
        ("1234a1j", [42, 43, 44, 45, 46]),
        ("11j5z", [46, 46, 31]),
        (" 1m 2p ", [0, 10]),
        ("", []),
    ],
)
def test_parse(text, expected):
    assert T.parse(text) == expected


@given(st.lists(kinds, max_size=20))
def test_format_then_parse_round_trips_in_canonical_order(tiles):
    assert T.parse(T.format_tiles(tiles)) == sorted(tiles)


@given(st.lists(kinds, max_size=20))
def test_unsorted_format_keeps_the_order(tiles):
    assert T.parse(T.format_tiles(tiles, sort=False)) == tiles


@pytest.mark.parametrize(
    ("text", "bad", "pos"),
    [
        ("123x", "'x'", 3),
        ("12m3q", "'q'", 4),
        ("8z", "'8'", 0),
        ("0m", "'0'", 0),
        ("19f", "'9'", 1),
        ("1m東", "'東'", 2),
    ],
)
def test_parse_errors_name_the_bad_character_and_position(text, bad, pos):
    with pytest.raises(T.NotationError) as err:
        T.parse(text)
    msg = str(err.value)
    assert bad in msg and f"position {pos}" in msg


def test_parse_errors_for_missing_digits_or_suit():
    with pytest.raises(T.NotationError, match="'m' at position 0 has no digits"):
        T.parse("m")
    with pytest.raises(T.NotationError, match=r"position 2 .* no suit letter"):
        T.parse("1m23")


def test_parse_counts_rejects_flowers():
    assert T.parse_counts("11m")[0] == 2
    with pytest.raises(T.NotationError, match="3f where only natural hand tiles"):
        T.parse_counts("11m3f")
    with pytest.raises(T.NotationError, match="1j where only natural hand tiles"):
        T.parse_counts("11m1j")
    with pytest.raises(T.NotationError, match="bad character '5' at position 0"):
        T.parse("5a")
    with pytest.raises(T.NotationError, match="no tile 2j"):
        T.parse("2j")


@given(st.lists(st.integers(0, T.NUM_KINDS - 1), max_size=14))
def test_counts_round_trip(tiles):
    counts = T.to_counts(tiles)
    assert len(counts) == 34
    assert T.from_counts(counts) == sorted(tiles)


def test_to_counts_ignores_flowers():
    assert sum(T.to_counts(T.parse("1m1f2f"))) == 1


def test_wildcards_are_counted_beside_the_array():
    tiles = T.parse("12m3a1j1j")
    assert sum(T.to_counts(tiles)) == 2 and len(T.to_counts(tiles)) == T.NUM_KINDS
    assert T.count_wildcards(tiles) == 2
    assert T.format_tiles(T.from_counts(T.to_counts(tiles), 2)) == "12m11j"


@given(kinds)
def test_kind_suit_rank_round_trip(k):
    assert T.kind(T.suit_of(k), T.rank_of(k)) == k
    assert T.format_tile(k) == f"{T.rank_of(k)}{T.SUIT_LETTERS[T.suit_of(k)]}"


def test_classification():
    assert T.is_suited(0) and not T.is_suited(27)
    assert all(T.is_wind(k) for k in T.WINDS)
    assert all(T.is_dragon(k) for k in T.DRAGONS)
    assert T.is_honor(T.EAST) and T.is_honor(T.RED) and not T.is_honor(34)
    assert T.is_flower(34) and T.is_flower(41) and not T.is_flower(42)
    assert T.is_extra(42) and T.is_extra(45) and not T.is_extra(46) and not T.is_extra(41)
    assert T.is_bonus(34) and T.is_bonus(45) and not T.is_bonus(46) and not T.is_bonus(33)
    assert T.is_wildcard(T.WILDCARD) and T.format_tile(T.WILDCARD) == "1j"
    assert T.is_playing(33) and not T.is_playing(34) and not T.is_playing(46)
    assert T.copies_of(0) == 4 and T.copies_of(35) == 1 and T.copies_of(43) == 1
    assert T.copies_of(T.WILDCARD) == 4
    assert T.name_zh(0) == "一万" and T.name_zh(T.RED) == "中" and T.name_zh(38) == "梅"
    assert T.name_zh(42) == "老鼠" and T.name_zh(45) == "聚宝盆" and T.name_zh(46) == "百搭"
    assert T.is_valid_kind(46) and not T.is_valid_kind(47)
    assert not T.is_valid_kind(-1) and not T.is_valid_kind("1")


def test_bad_kind_and_rank_errors():
    with pytest.raises(ValueError, match="rank 8 out of range for suit z"):
        T.kind(T.HONOR, 8)
    with pytest.raises(ValueError, match="not a tile kind: 47"):
        T.format_tiles([47])
