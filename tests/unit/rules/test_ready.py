"""敲 declaring ready and the lock it puts on the hand (RULES §5)."""

from __future__ import annotations

import pytest

from services.rules.domain import claim_options, own_turn_options, validate_action
from shared.errors import FailedPrecondition
from shared.table import (
    AddedKong,
    Chow,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    Pong,
    Win,
)
from tests.unit.rules.builders import seat, table, tile

NO_DECLARATION = {"ready.require_declare_ready": False}


def opts_of(snap, s):
    return {o.seat: o for o in claim_options(snap)}[s]


@pytest.fixture
def before_declaring():
    # Seat 0 drew 9s: only discarding 9s leaves a wait (5z, half flush).
    return table({0: seat("111z234567789p5z9s")}, ("draw", 0, "9s"))


def test_ready_discards_are_those_that_leave_a_wait(before_declaring):
    o = own_turn_options(before_declaring, 0)
    assert o.ready_discards == (tile("9s"),)
    assert tile("5z") in o.discards and tile("9s") in o.discards
    validate_action(before_declaring, 0, DeclareReady(tile("9s")))


def test_declaring_with_a_discard_that_leaves_no_wait_is_refused(before_declaring):
    with pytest.raises(FailedPrecondition, match="leaves seat 0 waiting on no winning tile"):
        validate_action(before_declaring, 0, DeclareReady(tile("5z")))
    with pytest.raises(FailedPrecondition, match="does not hold 9m"):
        validate_action(before_declaring, 0, DeclareReady(tile("9m")))


def test_declaring_right_after_a_pong():
    snap = table({0: seat("234567789p5z9s", [("pong", "111z", 2)])}, ("pong", 0, "1z"))
    assert own_turn_options(snap, 0).ready_discards == (tile("9s"),)


def test_no_second_declaration():
    snap = table({0: seat("111z234567789p5z9s", ready=True)}, ("draw", 0, "9s"))
    assert own_turn_options(snap, 0).ready_discards == ()
    with pytest.raises(FailedPrecondition, match="already declared ready"):
        validate_action(snap, 0, DeclareReady(tile("9s")))


def test_complete_hand_without_declaring_cannot_win():
    snap = table({0: seat("111z234567789p55z")}, ("draw", 0, "5z"))
    assert own_turn_options(snap, 0).wins == ()
    with pytest.raises(FailedPrecondition, match="has not declared ready"):
        validate_action(snap, 0, Win())


def test_without_the_declare_ready_option_no_declaration_is_needed_or_offered():
    snap = table({0: seat("111z234567789p55z")}, ("draw", 0, "5z"), ruleset="shanghai-qiaoma")
    free = snap.ruleset.with_overrides(NO_DECLARATION)
    snap = snap._replace(ruleset=free)
    o = own_turn_options(snap, 0)
    assert [w.hand.label for w in o.wins] == ["half_flush"]
    assert o.ready_discards == ()
    with pytest.raises(FailedPrecondition, match="needs no declaration"):
        validate_action(snap, 0, DeclareReady(tile("5z")))


# --- the lock ------------------------------------------------------------------------------
def test_locked_hand_discards_the_drawn_tile_only():
    snap = table({0: seat("111z234567789p5z9s", ready=True)}, ("draw", 0, "9s"))
    assert own_turn_options(snap, 0).discards == (tile("9s"),)
    validate_action(snap, 0, Discard(tile("9s")))
    with pytest.raises(FailedPrecondition, match="must discard the drawn 9s, not 2p"):
        validate_action(snap, 0, Discard(tile("2p")))


def test_locked_hand_cannot_chow_or_pong():
    snap = table({1: seat("1112344667899m", ready=True)}, ("discard", 0, "4m"))
    o = opts_of(snap, 1)
    assert not o.pong and o.chows == ()
    with pytest.raises(FailedPrecondition, match="declared ready \\(敲\\): no pong"):
        validate_action(snap, 1, Pong())
    with pytest.raises(FailedPrecondition, match="declared ready \\(敲\\): no chow"):
        validate_action(snap, 1, Chow(tile("2m")))
    unlocked = table({1: seat("1112344667899m")}, ("discard", 0, "4m"))
    assert opts_of(unlocked, 1).pong and opts_of(unlocked, 1).chows


def test_locked_concealed_kong_allowed_when_waits_stay():
    snap = table({0: seat("1111z234567789p5z", ready=True)}, ("draw", 0, "1z"))
    assert own_turn_options(snap, 0).concealed_kongs == (tile("1z"),)
    validate_action(snap, 0, ConcealedKong(tile("1z")))


def test_locked_concealed_kong_refused_when_waits_change():
    # 九莲: 1112345678999m waits on every character; a kong of 1m would ruin that.
    snap = table({0: seat("11112345678999m", ready=True)}, ("draw", 0, "1m"))
    assert own_turn_options(snap, 0).concealed_kongs == ()
    with pytest.raises(FailedPrecondition, match="would change seat 0's waits after 敲"):
        validate_action(snap, 0, ConcealedKong(tile("1m")))
    unlocked = table({0: seat("11112345678999m")}, ("draw", 0, "1m"))
    assert own_turn_options(unlocked, 0).concealed_kongs == (tile("1m"),)


def test_locked_exposed_kong_allowed_only_when_waits_stay():
    keeps = table({1: seat("111z234567789p5z", ready=True)}, ("discard", 0, "1z"))
    assert opts_of(keeps, 1).exposed_kong and not opts_of(keeps, 1).pong
    validate_action(keeps, 1, ExposedKong())
    changes = table({1: seat("1112345678999m", ready=True)}, ("discard", 0, "9m"))
    assert not opts_of(changes, 1).exposed_kong
    assert opts_of(changes, 1).win is not None  # 9m wins instead


def test_locked_added_kong_allowed_when_waits_stay():
    snap = table({0: seat("234567789p5z1z", [("pong", "111z", 2)], ready=True)}, ("draw", 0, "1z"))
    assert own_turn_options(snap, 0).added_kongs == (tile("1z"),)
    validate_action(snap, 0, AddedKong(tile("1z")))


def test_ready_seat_wins_on_a_self_draw():
    snap = table({0: seat("111z234567789p55z", ready=True)}, ("draw", 0, "5z"))
    (win,) = own_turn_options(snap, 0).wins
    assert win.hand.label == "half_flush" and win.concealed_hand
    validate_action(snap, 0, Win())
