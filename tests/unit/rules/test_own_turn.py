"""Own-turn options (RULES §4): discards, kongs only after a draw, wins, 八花齐."""

from __future__ import annotations

import pytest

from services.rules.domain import own_turn_options, validate_action
from shared.errors import FailedPrecondition, InvalidArgument
from shared.hand import HandType
from shared.table import AddedKong, ConcealedKong, Discard, Pong, Win, WinKind
from tests.unit.rules.builders import seat, table, tile


def test_options_after_a_draw():
    snap = table({1: seat("1111m234p777z1s", [("pong", "999s", 0)])}, ("draw", 1, "1s"), wall=20)
    o = own_turn_options(snap, 1)
    assert o.seat == 1
    assert o.discards == tuple(sorted(tile(t) for t in ("1m", "2p", "3p", "4p", "1s", "7z")))
    assert o.concealed_kongs == (tile("1m"),)
    assert o.added_kongs == ()
    assert o.wins == ()


def test_added_kong_needs_the_pong_and_the_fourth_tile():
    snap = table({1: seat("234p56s12777z1m", [("pong", "999m", 0)])}, ("draw", 1, "1m"))
    assert own_turn_options(snap, 1).added_kongs == ()
    with pytest.raises(FailedPrecondition, match="no pong of 1m"):
        validate_action(snap, 1, AddedKong(tile("1m")))
    snap = table({1: seat("234p56s12777z9m", [("pong", "999m", 0)])}, ("draw", 1, "9m"))
    assert own_turn_options(snap, 1).added_kongs == (tile("9m"),)


def test_after_a_pong_only_discards():
    snap = table({1: seat("1111m234p777z1s", [("pong", "999s", 0)])}, ("pong", 1, "9s"))
    o = own_turn_options(snap, 1)
    assert o.concealed_kongs == () and o.added_kongs == () and o.wins == ()
    assert tile("1m") in o.discards
    with pytest.raises(FailedPrecondition, match="may only discard after a pong"):
        validate_action(snap, 1, ConcealedKong(tile("1m")))


def test_no_kong_when_the_wall_is_empty():
    snap = table({1: seat("1111m234p777z1s", [("pong", "999s", 0)])}, ("draw", 1, "1s"), wall=0)
    assert own_turn_options(snap, 1).concealed_kongs == ()


def test_reserved_tiles_count_as_empty():
    snap = table({1: seat("1111m234p777z1s", [("pong", "999s", 0)])}, ("draw", 1, "1s"), wall=4)
    reserved = snap._replace(ruleset=snap.ruleset.with_overrides({"table.reserved_tiles": 4}))
    assert own_turn_options(snap, 1).concealed_kongs == (tile("1m"),)
    assert own_turn_options(reserved, 1).concealed_kongs == ()


def test_not_your_turn():
    snap = table({1: seat("1111m234p777z1s", [("pong", "999s", 0)])}, ("draw", 1, "1s"))
    with pytest.raises(FailedPrecondition, match="it is seat 1's turn, not seat 2's"):
        own_turn_options(snap, 2)
    with pytest.raises(InvalidArgument, match="seat 4 out of range 0-3"):
        own_turn_options(snap, 4)
    with pytest.raises(FailedPrecondition, match="no discard to claim"):
        validate_action(snap, 1, Pong())


def test_discard_of_a_tile_not_held():
    snap = table({1: seat("1111m234p777z1s", [("pong", "999s", 0)])}, ("draw", 1, "1s"))
    with pytest.raises(FailedPrecondition, match="does not hold 9p"):
        validate_action(snap, 1, Discard(tile("9p")))
    with pytest.raises(InvalidArgument, match="discard needs a hand tile, got 1f"):
        validate_action(snap, 1, Discard(tile("1f")))


def test_replacement_draw_win_is_kong_open():
    snap = table(
        {0: seat("234567789p5z5z", [("concealed_kong", "1111z", None)], ready=True)},
        ("replacement_draw", 0, "5z"),
    )
    (win,) = own_turn_options(snap, 0).wins
    assert win.kind is WinKind.SELF_DRAW and win.replacement and win.concealed_hand
    assert win.hand is HandType.HALF_FLUSH


def test_eight_flowers_wins_at_once_without_declaring():
    snap = table(
        {0: seat("123m456p789s11z22z3z", flowers="12345678f")}, ("replacement_draw", 0, "3z")
    )
    (win,) = own_turn_options(snap, 0).wins
    assert win.hand is HandType.EIGHT_FLOWERS and win.kind is WinKind.EIGHT_FLOWERS
    validate_action(snap, 0, Win(eight_flowers=True))
    with pytest.raises(FailedPrecondition, match="not an allowed winning hand"):
        validate_action(snap, 0, Win())


def test_seven_flowers_are_not_enough():
    snap = table(
        {0: seat("123m456p789s11z22z3z", flowers="1234567f")}, ("replacement_draw", 0, "3z")
    )
    assert own_turn_options(snap, 0).wins == ()
    with pytest.raises(FailedPrecondition, match="needs all eight flowers"):
        validate_action(snap, 0, Win(eight_flowers=True))
