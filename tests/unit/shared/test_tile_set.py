"""shared.tile_set: which kinds a ruleset's set holds (RULES-presets §13.0, §13.B.1, §13.B.9)."""

from __future__ import annotations

import pytest

from shared import tiles as T
from shared.errors import InvalidArgument
from shared.hand.input import check_flowers, counts_and_wildcards, counts_from_tiles
from shared.ruleset import load_ruleset
from shared.tile_set import STANDARD, TileSet, tile_set_of


def test_the_default_preset_plays_the_standard_set():
    ts = tile_set_of(load_ruleset("shanghai-qiaoma"))
    assert ts is STANDARD and ts.size == 144 and not ts.has_wildcards
    assert not ts.is_bonus(T.RED) and ts.is_bonus(34) and ts.is_hand_kind(T.RED)


@pytest.mark.parametrize("text", ["1a", "4a", "1j"])
def test_the_standard_set_refuses_the_baida_tiles_naming_the_field(text):
    with pytest.raises(InvalidArgument) as err:
        STANDARD.check_tiles(T.parse(f"1m{text}"), "hand.concealed")
    assert "hand.concealed[1]" in err.value.message and text in err.value.message
    assert err.value.details["field"] == "hand.concealed[1]"


def test_hand_tiles_refuse_bonus_tiles_and_a_wildcard_where_none_is_allowed():
    with pytest.raises(InvalidArgument, match="bonus tile 2a among the hand"):
        counts_from_tiles(T.parse("1m2a"), "hand")
    with pytest.raises(InvalidArgument, match="百搭 1j among the hand"):
        counts_from_tiles(T.parse("1m1j"), "hand")
    counts, jokers = counts_and_wildcards(T.parse("1m1j1j"), "hand")
    assert sum(counts) == 1 and jokers == 2


def test_exposed_bonus_tiles_per_set():
    with pytest.raises(InvalidArgument, match="1a is not a flower"):
        check_flowers(T.parse("1f1a"))
    check_flowers(T.parse("1f1a555z"), dragons=True, extras=True)
    with pytest.raises(InvalidArgument, match="5z 5 times"):
        check_flowers(T.parse("55555z"), dragons=True)
    with pytest.raises(InvalidArgument, match="flower 1a twice"):
        check_flowers(T.parse("11a"), extras=True)


def test_next_kind_of_the_flipped_wildcard():
    ts = TileSet(name="baida", flipped_wildcard=True)
    nxt = [T.format_tile(ts.next_kind(k)) for k in T.parse("19m9p9s4z7z1z")]
    assert nxt == ["2m", "1m", "1p", "1s", "1z", "5z", "2z"]
    assert ts.wild_kind_for(0) == 1
    assert TileSet(name="baida", flipped_wildcard=True, flipped_same=True).wild_kind_for(0) == 0
