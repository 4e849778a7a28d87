"""infra.convert.common: proto <-> domain for tiles, seats, melds, hand types, win kinds, dice
and ruleset references."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mahjong.common.v1 import common_pb2

from infra.convert import common as C
from shared import tiles as T
from shared.errors import InvalidArgument
from shared.hand.hand_type import HandType
from shared.melds import Meld


@given(st.integers(0, T.NUM_TILE_KINDS - 1))
def test_tile_round_trip(kind):
    assert C.tile_from_proto(C.tile_to_proto(kind)) == kind


def test_tile_values_match_the_proto_enum_names():
    for kind in range(T.NUM_TILE_KINDS):
        name = "TILE_" + T.format_tile(kind).upper()
        assert common_pb2.Tile.Value(name) == C.tile_to_proto(kind)


@pytest.mark.parametrize("value", [0, 48, -1, 1000])
def test_bad_tile_value_is_invalid_argument_naming_the_field(value):
    with pytest.raises(InvalidArgument) as err:
        C.tile_from_proto(value, "discard.tile")
    assert "discard.tile" in err.value.message
    assert err.value.details["field"] == "discard.tile"


def test_tile_to_proto_rejects_non_kinds():
    with pytest.raises(ValueError):
        C.tile_to_proto(47)


def test_tiles_from_proto_names_the_index():
    assert C.tiles_from_proto([1, 2, 42, 43, 47]) == [0, 1, 41, 42, 46]
    with pytest.raises(InvalidArgument, match=r"hand\[2\]"):
        C.tiles_from_proto([1, 2, 0], "hand")


def test_optional_tile():
    assert C.tile_from_proto_optional(0) is None
    assert C.tile_from_proto_optional(5) == 4


def test_seats():
    for seat in range(4):
        assert C.seat_from_proto(C.seat_to_proto(seat)) == seat
    assert C.seat_to_proto(None) == common_pb2.SEAT_UNSPECIFIED
    assert C.seat_to_proto(0) == common_pb2.SEAT_0
    assert C.seat_from_proto_optional(0) is None
    with pytest.raises(InvalidArgument, match="dealer is not set"):
        C.seat_from_proto(0, "dealer")
    with pytest.raises(InvalidArgument, match="out of range"):
        C.seat_from_proto(5)
    with pytest.raises(ValueError, match="seat 4 out of range"):
        C.seat_to_proto(4)


@pytest.mark.parametrize(
    ("kind", "tiles", "from_seat"),
    [
        ("chow", "345p", 3),
        ("pong", "777s", 0),
        ("exposed_kong", "5555z", 2),
        ("added_kong", "1111m", 1),
        ("concealed_kong", "9999p", None),
    ],
)
def test_meld_round_trip(kind, tiles, from_seat):
    meld = Meld.of(kind, tiles, from_seat)
    claimed = None if from_seat is None else meld.tiles[0]
    pb = C.meld_to_proto(meld, claimed)
    assert pb.kind == int(meld.kind)
    assert C.meld_from_proto(pb) == meld
    assert C.claimed_tile_from_proto(pb) == claimed


def test_concealed_kong_hidden_for_other_seats():
    meld = Meld.of("concealed_kong", "9999p")
    pb = C.meld_to_proto(meld, hide_concealed=True)
    assert list(pb.tiles) == []
    assert list(C.meld_to_proto(meld).tiles) == [18] * 4


def _pb(kind, tiles, from_seat=None, claimed=None):
    return common_pb2.Meld(
        kind=kind,
        tiles=C.tiles_to_proto(T.parse(tiles)),
        from_seat=C.seat_to_proto(from_seat),
        claimed_tile=0 if claimed is None else C.tile_to_proto(T.parse(claimed)[0]),
    )


@pytest.mark.parametrize(
    ("pb", "words"),
    [
        (_pb(common_pb2.MELD_KIND_CHOW, "135m", 0), "not a run"),
        (_pb(common_pb2.MELD_KIND_CHOW, "123z", 0), "honors cannot chow"),
        (_pb(common_pb2.MELD_KIND_PONG, "778s", 0), "not of identical tiles"),
        (_pb(common_pb2.MELD_KIND_PONG, "77s", 0), "needs 3 tiles"),
        (_pb(common_pb2.MELD_KIND_PONG, "777s"), "from_seat is not set"),
        (_pb(common_pb2.MELD_KIND_CONCEALED_KONG, "7777s", 1), "not claimed from anyone"),
        (_pb(common_pb2.MELD_KIND_PONG, "777s", 1, "8s"), "claimed_tile 8s is not in"),
        (_pb(common_pb2.MELD_KIND_UNSPECIFIED, "777s", 1), "kind is not set"),
        (_pb(9, "777s", 1), "no meld kind value 9"),
        (_pb(common_pb2.MELD_KIND_PONG, "111f", 1), "flower"),
    ],
)
def test_bad_melds_are_invalid_argument(pb, words):
    with pytest.raises(InvalidArgument, match=words) as err:
        C.meld_from_proto(pb, "melds[0]")
    assert err.value.message.startswith("melds[0]")


def test_melds_list_names_the_index():
    good = C.meld_to_proto(Meld.of("pong", "111m", 1))
    bad = _pb(common_pb2.MELD_KIND_PONG, "123m", 1)
    assert C.melds_from_proto([good]) == [Meld.of("pong", "111m", 1)]
    with pytest.raises(InvalidArgument, match=r"melds\[1\]"):
        C.melds_from_proto([good, bad])


def test_hand_types_match_proto_names():
    for hand in HandType:
        value = C.hand_type_to_proto(hand)
        assert common_pb2.HandType.Name(value) == "HAND_TYPE_" + hand.name
        assert C.hand_type_from_proto(value) is hand
    assert C.hand_type_to_proto(None) == common_pb2.HAND_TYPE_UNSPECIFIED
    with pytest.raises(InvalidArgument, match="not set"):
        C.hand_type_from_proto(0)
    with pytest.raises(InvalidArgument, match="no hand type value 99"):
        C.hand_type_from_proto(99)


def test_win_kinds():
    for label, value in C.WIN_KINDS.items():
        assert common_pb2.WinKind.Name(value) == "WIN_KIND_" + label.upper()
        assert C.win_kind_from_proto(C.win_kind_to_proto(label)) == label
    assert C.win_kind_to_proto(None) == common_pb2.WIN_KIND_UNSPECIFIED
    with pytest.raises(ValueError, match="unknown win kind"):
        C.win_kind_to_proto("tsumo")
    with pytest.raises(InvalidArgument):
        C.win_kind_from_proto(0)
    with pytest.raises(InvalidArgument):
        C.win_kind_from_proto(77)


def test_dice():
    assert C.dice_from_proto(C.dice_to_proto((3, 6))) == (3, 6)
    with pytest.raises(InvalidArgument, match=r"dice\.second is 7"):
        C.dice_from_proto(common_pb2.Dice(first=1, second=7))
    with pytest.raises(InvalidArgument, match=r"dice\.first is 0"):
        C.dice_from_proto(common_pb2.Dice())


def test_ruleset_from_ref_default_preset_and_overrides():
    assert C.ruleset_from_ref(None).name == "shanghai-qiaoma"
    assert C.ruleset_from_ref(common_pb2.RulesetRef()).name == "shanghai-qiaoma"
    ref = C.ruleset_to_ref("shanghai-classic", {"table.tile_swap": True, "scoring.lezi_points": 20})
    assert dict(ref.options) == {"table.tile_swap": "true", "scoring.lezi_points": "20"}
    rs = C.ruleset_from_ref(ref)
    assert rs.name == "shanghai-classic"
    assert rs.table.tile_swap is True
    assert rs.scoring.lezi_points == 20


@pytest.mark.parametrize(
    ("ref", "words"),
    [
        (common_pb2.RulesetRef(name="mystery"), "unknown ruleset 'mystery'"),
        (common_pb2.RulesetRef(name="laxihu"), "with no rules"),
        (common_pb2.RulesetRef(options={"table.nope": "1"}), "unknown ruleset option"),
        (common_pb2.RulesetRef(options={"table.tile_swap": "maybe"}), "true or false"),
        (common_pb2.RulesetRef(options={"scoring.lezi_points": "ten"}), "takes int"),
    ],
)
def test_bad_ruleset_refs_are_invalid_argument(ref, words):
    with pytest.raises(InvalidArgument, match=words) as err:
        C.ruleset_from_ref(ref, "table.ruleset")
    assert err.value.details["field"] == "table.ruleset"
