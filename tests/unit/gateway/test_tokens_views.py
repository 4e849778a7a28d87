"""Seat tokens, what each viewer may see of an event, and action conversion."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from services.gateway.convert.actions import action_from_proto, action_to_proto
from services.gateway.domain.tokens import (
    sign_seat_token,
    sign_spectator_token,
    verify_seat_token,
)
from shared import tiles as T
from shared.errors import InvalidArgument, PermissionDenied, Unauthenticated
from shared.table import (
    AddedKong,
    Chow,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    Pass,
    Pong,
    ResumePlay,
    TileSwap,
    Win,
)
from tests.support.events import event_proto, project_json

SECRET = b"s" * 32


def test_tokens_name_one_table_and_seat():
    tok = sign_seat_token(SECRET, "t_1", 2)
    assert verify_seat_token(SECRET, tok, "t_1") == 2
    watcher = sign_spectator_token(SECRET, "t_1", "0123456789abcdef")
    assert verify_seat_token(SECRET, watcher, "t_1") is None
    with pytest.raises(PermissionDenied):
        verify_seat_token(SECRET, tok, "t_2")
    with pytest.raises(Unauthenticated):
        verify_seat_token(b"x" * 32, tok, "t_1")
    forged = tok.replace(".2.", ".3.")
    with pytest.raises(Unauthenticated):
        verify_seat_token(SECRET, forged, "t_1")
    for bad in ("", "garbage", "st1.t_1.9.abc", "a.b.c.d"):
        with pytest.raises(Unauthenticated):
            verify_seat_token(SECRET, bad, "t_1")


hands = st.lists(st.lists(st.integers(0, 41), min_size=13, max_size=14), min_size=4, max_size=4)


@settings(max_examples=40, deadline=None)
@given(
    hands=hands,
    viewer=st.sampled_from([None, 0, 1, 2, 3]),
    seat=st.integers(0, 3),
    tile=st.integers(0, 33),
)
def test_a_viewer_never_sees_another_seats_tiles(hands, viewer, seat, tile):
    dealt = {"hands": [T.format_tiles(h, sort=False) for h in hands], "tiles_left": 91}
    seen = project_json("tiles_dealt", dealt, viewer)
    for s, h in enumerate(seen["hands"]):
        assert h == (dealt["hands"][s] if s == viewer else "")
        assert seen["counts"][s] == len(hands[s])
    drawn = project_json(
        "tile_drawn",
        {"seat": seat, "tile": T.format_tile(tile), "replacement": False, "tiles_left": 3},
        viewer,
    )
    assert drawn["tile"] == (T.format_tile(tile) if viewer == seat else "")
    flowers = project_json(
        "flowers_exposed",
        {
            "seat": seat,
            "flowers": "1f",
            "replacements": T.format_tile(tile),
            "draw": "live",
            "tiles_left": 3,
        },
        viewer,
    )
    assert flowers["flowers"] == "1f"  # flowers are public
    assert flowers["replacements"] == (T.format_tile(tile) if viewer == seat else "")
    kong = project_json(
        "meld_declared",
        {"seat": seat, "meld": {"kind": "concealed_kong", "tiles": "1111m"}},
        viewer,
    )
    assert kong["meld"]["tiles"] == ("1111m" if viewer == seat else "")
    prompt = {"seat": seat, "kind": "own_turn", "options": {}, "deadline_ms": 0, "tile": ""}
    prompt["from_seat"] = None
    assert (project_json("prompt", prompt, viewer) is not None) == (viewer == seat)
    action = {"seat": seat, "action": {"type": "pass"}, "auto": False}
    assert project_json("action", action, viewer) is None


def test_projected_events_convert_to_proto():
    dealt = {"hands": ["123m", "456p", "789s", "1234z"], "tiles_left": 91}
    e = event_proto(5, 1000, "tiles_dealt", dealt, viewer=1)
    assert e.sequence == 5 and e.tiles_dealt.tiles_left == 91
    assert [len(h.tiles) for h in e.tiles_dealt.hands] == [0, 3, 0, 0]
    assert [h.count for h in e.tiles_dealt.hands] == [3, 3, 3, 4]


@pytest.mark.parametrize(
    "action",
    [
        Discard(3),
        DeclareReady(30),
        Chow(10),
        Pong(),
        ExposedKong(),
        AddedKong(5),
        ConcealedKong(27),
        Win(),
        Pass(),
    ],
)
def test_actions_round_trip(action):
    assert action_from_proto(action_to_proto(action)) == action


@pytest.mark.parametrize(
    "msg",
    [
        pb.Action(),
        pb.Action(discard=pb.Discard(tile=0)),
        pb.Action(discard=pb.Discard(tile=43)),
        pb.Action(discard=pb.Discard(tile=common_pb2.TILE_1F)),
        pb.Action(chow=pb.Chow(tiles=[1, 2])),
        pb.Action(chow=pb.Chow(tiles=[8, 9, 10])),  # 8m 9m 1p
        pb.Action(chow=pb.Chow(tiles=[28, 29, 30])),  # winds never chow
        pb.Action(kong=pb.Kong(kind=common_pb2.MELD_KIND_PONG, tile=1)),
        pb.Action(kong=pb.Kong(kind=common_pb2.MELD_KIND_ADDED_KONG)),
    ],
)
def test_malformed_actions_are_invalid_argument(msg):
    with pytest.raises(InvalidArgument):
        action_from_proto(msg)


def test_a_tile_swap_and_a_resume_are_values_too():
    got = action_from_proto(pb.Action(tile_swap=pb.TileSwap(tiles=[1, 2, 3, 4, 5])))
    assert got == TileSwap((0, 1, 2, 3, 4))
    assert action_from_proto(pb.Action(resume=pb.Resume())) == ResumePlay()
    assert action_from_proto(action_to_proto(got)) == got
