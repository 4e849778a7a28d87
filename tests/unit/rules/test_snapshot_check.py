"""Impossible table snapshots are INVALID_ARGUMENT naming the problem (shared.table)."""

from __future__ import annotations

import pytest

from shared.errors import InvalidArgument
from shared.melds import Meld, MeldKind
from shared.table import LastAction, LastActionKind, check_snapshot
from tests.unit.rules.builders import seat, table, tile


@pytest.fixture
def snap():
    return table({1: seat("1112344667899m")}, ("discard", 0, "5m"))


def with_seat(snap, s, st):
    return snap.with_seat(s, st)


def test_valid_snapshot_passes(snap):
    check_snapshot(snap)


def test_wrong_hand_size(snap):
    with pytest.raises(InvalidArgument, match=r"seat 1 has 14 concealed tiles .* expected 13"):
        check_snapshot(with_seat(snap, 1, seat("11123446678999m")))


def test_fifth_copy_across_seats(snap):
    bad = with_seat(snap, 2, seat("11m222333444z55z"))
    with pytest.raises(InvalidArgument, match="copies of 1m; there are only 4"):
        check_snapshot(bad)


def test_fifth_copy_by_the_discard(snap):
    bad = with_seat(snap, 2, seat("5555m111222333z"))
    with pytest.raises(InvalidArgument, match="discard 5m by seat 0 would be a fifth copy"):
        check_snapshot(bad)


def test_impossible_meld(snap):
    chow = Meld(MeldKind.CHOW, (tile("1m"), tile("2p"), tile("3s")), 0)
    st = snap.seats[2]._replace(melds=(chow,))
    with pytest.raises(InvalidArgument, match="chow 1m2p3s is not a run of three in one suit"):
        check_snapshot(with_seat(snap, 2, st))


def test_seat_out_of_range(snap):
    with pytest.raises(InvalidArgument, match="dealer 4 out of range 0-3"):
        check_snapshot(snap._replace(dealer=4))
    with pytest.raises(InvalidArgument, match="last action seat -1 out of range"):
        check_snapshot(snap._replace(last=LastAction(LastActionKind.DISCARD, -1, tile("5m"))))


def test_flowers_must_be_flowers_and_unique(snap):
    with pytest.raises(InvalidArgument, match="1m is not a flower"):
        check_snapshot(with_seat(snap, 1, snap.seats[1]._replace(flowers=(0,))))
    two = snap.seats[1]._replace(flowers=(tile("1f"),))
    dup = with_seat(with_seat(snap, 1, two), 2, snap.seats[2]._replace(flowers=(tile("1f"),)))
    with pytest.raises(InvalidArgument, match="flower 1f twice"):
        check_snapshot(dup)


def test_drawn_tile_must_be_held():
    s = table({1: seat("1112344667899m5m")}, ("draw", 1, "5m"))
    bad = s._replace(last=LastAction(LastActionKind.DRAW, 1, tile("1p")))
    with pytest.raises(InvalidArgument, match="drew 1p but does not hold it"):
        check_snapshot(bad)


def test_added_kong_must_show(snap):
    bad = snap._replace(last=LastAction(LastActionKind.ADDED_KONG, 0, tile("5m")))
    with pytest.raises(InvalidArgument, match="shows no such added kong"):
        check_snapshot(bad)


def test_turn_must_match_the_acting_seat():
    s = table({1: seat("1112344667899m5m")}, ("draw", 1, "5m"))
    with pytest.raises(InvalidArgument, match="but turn is seat 2"):
        check_snapshot(s._replace(turn=2))


def test_claimed_tile_must_be_waiting_for_its_claim(snap):
    with pytest.raises(InvalidArgument, match="by seat 0 but turn is seat 2"):
        check_snapshot(snap._replace(turn=2))


def test_the_deal_leaves_the_dealer_to_act():
    s = table({0: seat("11122233344455m")}, ("deal", 0, None))
    bad = s._replace(dealer=1)
    with pytest.raises(InvalidArgument, match="the deal leaves dealer 1 to act, not seat 0"):
        check_snapshot(bad)


def test_a_pong_must_show():
    s = table({1: seat("1111m234p777z1s", [("pong", "999s", 0)])}, ("pong", 1, "9s"))
    bad = s._replace(last=LastAction(LastActionKind.PONG, 1, tile("1s")))
    with pytest.raises(InvalidArgument, match="seat 1 ponged 1s but shows no such pong"):
        check_snapshot(bad)
