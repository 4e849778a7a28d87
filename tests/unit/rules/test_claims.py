"""Claim options for every other seat in one call, and claim resolution (RULES §4)."""

from __future__ import annotations

import pytest

from services.rules.domain import claim_options, resolve_claims, validate_action
from shared.errors import FailedPrecondition, InvalidArgument
from shared.table import Chow, ConcealedKong, ExposedKong, Pass, Pong, Win, WinKind
from tests.unit.rules.builders import seat, table, tile


def by_seat(snap):
    return {o.seat: o for o in claim_options(snap)}


@pytest.fixture
def discard_5m():
    """Seat 0 discards 5m. Seat 1 (下家) can chow three ways, seat 2 can pong, seat 3 (the
    discarder's 上家) holds 46m but may not chow."""
    return table(
        {
            0: seat("129m112233p4499s"),
            1: seat("34667m123p456p78s"),
            2: seat("55m11122233344z"),
            3: seat("46m789p112233s55z"),
        },
        ("discard", 0, "5m"),
    )


def test_options_cover_the_three_other_seats_in_turn_order(discard_5m):
    assert [o.seat for o in claim_options(discard_5m)] == [1, 2, 3]


def test_chow_only_for_the_discarders_next_seat_with_every_shape(discard_5m):
    opts = by_seat(discard_5m)
    assert opts[1].chows == (tile("3m"), tile("4m"), tile("5m"))
    assert opts[3].chows == ()
    with pytest.raises(FailedPrecondition, match="only seat 1, the discarder's 下家, may chow"):
        validate_action(discard_5m, 3, Chow(tile("4m")))
    validate_action(discard_5m, 1, Chow(tile("4m")))


def test_chow_shape_must_hold_the_discard_and_the_other_two(discard_5m):
    with pytest.raises(FailedPrecondition, match="no run starting at 1m holds 5m"):
        validate_action(discard_5m, 1, Chow(tile("1m")))
    with pytest.raises(FailedPrecondition, match="no run starting at 8m"):
        validate_action(discard_5m, 1, Chow(tile("8m")))


def test_pong_for_any_seat_holding_two(discard_5m):
    opts = by_seat(discard_5m)
    assert opts[2].pong and not opts[2].exposed_kong
    assert not opts[1].pong and not opts[3].pong
    with pytest.raises(FailedPrecondition, match="holds 0 of 5m; a pong needs 2"):
        validate_action(discard_5m, 3, Pong())


def test_discarder_cannot_claim_its_own_discard(discard_5m):
    with pytest.raises(FailedPrecondition, match="cannot claim its own discard"):
        validate_action(discard_5m, 0, Pong())


def test_pong_beats_chow(discard_5m):
    r = resolve_claims(discard_5m, {1: Chow(tile("4m")), 2: Pong(), 3: Pass()})
    assert (r.taker, r.action, r.winners) == (2, Pong(), ())


def test_chow_taken_when_nobody_pongs(discard_5m):
    r = resolve_claims(discard_5m, {1: Chow(tile("3m"))})
    assert (r.taker, r.action) == (1, Chow(tile("3m")))


def test_everybody_passes(discard_5m):
    r = resolve_claims(discard_5m, {})
    assert r.taker is None and r.action is None and r.winners == () and r.tile == tile("5m")


def test_illegal_claim_is_refused_in_resolution(discard_5m):
    with pytest.raises(FailedPrecondition, match="a pong needs 2"):
        resolve_claims(discard_5m, {1: Pong()})
    with pytest.raises(InvalidArgument, match="seat 7 out of range"):
        resolve_claims(discard_5m, {7: Pass()})


def test_exposed_kong_with_three_held():
    snap = table({1: seat("555m111222333z4z"), 2: seat("1234m123p456p789s")}, ("discard", 0, "5m"))
    opts = by_seat(snap)
    assert opts[1].exposed_kong and opts[1].pong
    assert opts[2].chows == ()  # seat 2 is not seat 0's 下家
    r = resolve_claims(snap, {1: ExposedKong()})
    assert (r.taker, r.action) == (1, ExposedKong())


def test_no_kong_when_no_tile_is_left_for_the_replacement():
    snap = table({1: seat("555m111222333z4z")}, ("discard", 0, "5m"), wall=0)
    assert not by_seat(snap)[1].exposed_kong
    assert by_seat(snap)[1].pong


@pytest.fixture
def two_waiting_on_5z():
    return table(
        {
            1: seat("111222333444m5z", ready=True),
            2: seat("111222333444p5z", ready=True),
            3: seat("1122s3344s5566s7z"),
        },
        ("discard", 0, "5z"),
    )


def test_every_win_stands(two_waiting_on_5z):
    opts = by_seat(two_waiting_on_5z)
    assert opts[1].win.kind is WinKind.DISCARD and opts[2].win is not None
    r = resolve_claims(two_waiting_on_5z, {1: Win(), 2: Win(), 3: Pass()})
    assert r.winners == (1, 2) and r.taker is None
    assert r.win_options[1].win_tile == tile("5z")


def test_win_beats_pong_and_a_passed_win_is_marked(two_waiting_on_5z):
    r = resolve_claims(two_waiting_on_5z, {2: Win(), 1: Pass()})
    assert r.winners == (2,)
    assert r.missed_wins == (1,)


def test_unready_seat_may_not_win(two_waiting_on_5z):
    snap = table(
        {1: seat("111222333444m5z"), 2: seat("111222333444p5z", ready=True)},
        ("discard", 0, "5z"),
    )
    assert by_seat(snap)[1].win is None
    with pytest.raises(FailedPrecondition, match="has not declared ready"):
        validate_action(snap, 1, Win())


def test_added_kong_can_be_robbed_and_nothing_else():
    snap = table(
        {
            0: seat("123p456p789p1z", [("added_kong", "5555m", 2)]),
            1: seat("1112344667899m", ready=True),
        },
        ("added_kong", 0, "5m"),
    )
    opts = by_seat(snap)
    assert opts[1].win.kind is WinKind.ROB_KONG
    assert not any(o.pong or o.chows or o.exposed_kong for o in opts.values())
    with pytest.raises(FailedPrecondition, match="only be robbed by a win"):
        validate_action(snap, 2, Pong())
    r = resolve_claims(snap, {1: Win()})
    assert r.winners == (1,) and r.win_options[1].kind is WinKind.ROB_KONG


def test_concealed_kong_is_never_robbed():
    # After a concealed kong the seat draws its replacement: there is nothing to claim.
    snap = table(
        {
            0: seat("123p456p789p1z2z", [("concealed_kong", "5555m", None)]),
            1: seat("1112344667899m", ready=True),
        },
        ("replacement_draw", 0, "2z"),
    )
    with pytest.raises(FailedPrecondition, match="nothing to claim"):
        claim_options(snap)
    with pytest.raises(FailedPrecondition, match="no discard to claim"):
        validate_action(snap, 1, Pong())
    with pytest.raises(FailedPrecondition, match="it is seat 0's turn, not seat 1's"):
        validate_action(snap, 1, Win())


def test_kong_from_a_discard_is_never_robbed():
    snap = table(
        {
            0: seat("123p456p789p12z", [("exposed_kong", "5555m", 3)]),
            1: seat("1112344667899m", ready=True),
        },
        ("replacement_draw", 0, "2z"),
    )
    with pytest.raises(FailedPrecondition, match="nothing to claim"):
        claim_options(snap)


def test_own_turn_actions_are_refused_while_a_discard_is_claimed(discard_5m):
    with pytest.raises(FailedPrecondition, match="is being claimed"):
        validate_action(discard_5m, 1, ConcealedKong(tile("1m")))
