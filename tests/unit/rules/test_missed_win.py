"""漏胡 passing a win (RULES §7): blocked on that kind only, until the seat moves."""

from __future__ import annotations

import pytest

from services.rules.domain import (
    after_move,
    after_pass,
    claim_options,
    own_turn_options,
    resolve_claims,
    validate_action,
)
from shared.errors import FailedPrecondition
from shared.table import Pass, Win
from tests.unit.rules.builders import seat, table, tile

HAND = "1112345678999m"  # 九莲: waits on every character


def opts(snap, s):
    return {o.seat: o for o in claim_options(snap)}[s]


def test_passing_a_win_marks_that_kind():
    snap = table({2: seat(HAND, ready=True)}, ("discard", 0, "5m"))
    assert opts(snap, 2).win is not None
    r = resolve_claims(snap, {2: Pass()})
    assert r.missed_wins == (2,)
    marked = after_pass(snap, r.missed_wins, r.tile)
    assert marked.seats[2].missed_wins == {tile("5m")}


def test_marked_kind_cannot_win_from_anyone_until_the_seat_moves():
    snap = table({2: seat(HAND, ready=True, missed="5m")}, ("discard", 3, "5m"))
    o = opts(snap, 2)
    assert o.win is None and o.missed_win
    with pytest.raises(FailedPrecondition, match="passed a win on 5m \\(漏胡\\)"):
        validate_action(snap, 2, Win())


def test_other_kinds_still_win():
    snap = table({2: seat(HAND, ready=True, missed="5m")}, ("discard", 3, "6m"))
    o = opts(snap, 2)
    assert o.win is not None and not o.missed_win


def test_robbing_a_kong_of_the_marked_kind_is_blocked_too():
    snap = table(
        {
            0: seat("123p456p789p1z", [("added_kong", "5555s", 2)]),
            1: seat("1112344667899s", ready=True, missed="5s"),
        },
        ("added_kong", 0, "5s"),
    )
    assert opts(snap, 1).win is None and opts(snap, 1).missed_win


def test_marks_clear_when_the_seat_moves():
    # 动牌 (draw, chow, pong or kong): whoever applies the move calls after_move.
    snap = table({2: seat(HAND, ready=True, missed="5m")}, ("discard", 3, "5m"))
    moved = after_move(snap, 2)
    assert moved.seats[2].missed_wins == frozenset()
    assert opts(moved, 2).win is not None


def test_marks_do_not_block_a_self_draw():
    snap = table({2: seat(HAND + "5m", ready=True, missed="5m")}, ("draw", 2, "5m"))
    assert own_turn_options(snap, 2).wins


def test_a_seat_that_could_not_win_is_not_marked():
    snap = table({2: seat(HAND)}, ("discard", 0, "5m"))  # not ready: no win to pass
    assert resolve_claims(snap, {2: Pass()}).missed_wins == ()
