"""Win situations scoring needs (RULES §6): 大吊车, 门清, 杠开, 天胡 / 地胡."""

from __future__ import annotations

from services.rules.domain import claim_options, own_turn_options
from shared.table import WinKind
from tests.unit.rules.builders import seat, table, tile

FOUR_MELDS = [("pong", "111s", 2), ("pong", "333s", 2), ("pong", "555s", 2)]


def claim_win(snap, s):
    return {o.seat: o for o in claim_options(snap)}[s].win


def test_big_hanging_on_a_discard():
    snap = table(
        {3: seat("9s", [*FOUR_MELDS, ("exposed_kong", "7777s", 1)], ready=True)},
        ("discard", 0, "9s"),
    )
    win = claim_win(snap, 3)
    assert win.big_hanging and not win.concealed_hand and win.kind is WinKind.DISCARD
    assert win.hand.label == "full_flush_pongs"


def test_big_hanging_with_a_concealed_kong_follows_the_option():
    melds = [*FOUR_MELDS, ("concealed_kong", "7777s", None)]
    snap = table({3: seat("9s", melds, ready=True)}, ("discard", 0, "9s"))
    assert claim_win(snap, 3).big_hanging  # scoring.big_hanging_concealed_kong default
    strict = snap._replace(
        ruleset=snap.ruleset.with_overrides({"scoring.big_hanging_concealed_kong": False})
    )
    assert not claim_win(strict, 3).big_hanging


def test_concealed_hand_and_no_big_hanging_with_tiles_in_hand():
    snap = table({1: seat("1112345678999m", ready=True)}, ("discard", 0, "5m"))
    win = claim_win(snap, 1)
    assert win.concealed_hand and not win.big_hanging and not win.replacement


def test_heavenly_win_for_the_classic_dealer_without_declaring():
    snap = table(
        {0: seat("11122233344455m")},
        ("deal", 0, None),
        ruleset="shanghai-classic",
        first_go_around=True,
    )
    (win,) = own_turn_options(snap, 0).wins
    # no tile was drawn: the right-most tile stands for the winning tile (settled as 13 + 1)
    assert win.heavenly and not win.earthly and win.win_tile == tile("5m")
    qiaoma = table({0: seat("11122233344455m")}, ("deal", 0, None), first_go_around=True)
    assert own_turn_options(qiaoma, 0).wins == ()  # 敲麻: no 天胡, and not declared


def test_earthly_win_for_a_classic_non_dealer_in_the_first_go_around():
    hand = {1: seat("1112223334445m")}
    snap = table(hand, ("discard", 0, "5m"), ruleset="shanghai-classic", first_go_around=True)
    win = claim_win(snap, 1)
    assert win is not None and win.earthly
    later = table(hand, ("discard", 0, "5m"), ruleset="shanghai-classic")
    assert claim_win(later, 1) is None  # no 敲 and the first go-around is over
