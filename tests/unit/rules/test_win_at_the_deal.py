"""a shape win on the dealer's initial 14 (天胡 in shanghai-classic, or any win at the
deal when 敲 is not required) names its winning tile like every other shape win
(``WinOption.win_tile`` is None only for 八花齐), so the hand can be settled: scoring takes the
13 other tiles plus the winning tile."""

from __future__ import annotations

from services.rules.domain import own_turn_options
from services.scoring.domain import HandContext, WinInput, WinKind, WinnerHand, settle_win
from shared.hand import HandType, classify, waits
from shared.ruleset import load_ruleset
from shared.table import WinKind as TableWinKind
from shared.tiles import from_counts
from tests.unit.rules.builders import seat, table

HAND = "111m222m333m789m55m"  # 清一色 on the initial 14


def _deal(ruleset):
    return table({0: seat(HAND)}, ("deal", 0, None), ruleset=ruleset, first_go_around=True)


def _only_shape_win(snap):
    (win,) = own_turn_options(snap, 0).wins
    return win


def test_heavenly_win_names_a_held_winning_tile():
    snap = _deal("shanghai-classic")
    win = _only_shape_win(snap)
    assert win.heavenly and win.kind is TableWinKind.SELF_DRAW
    assert win.win_tile is not None
    held = list(snap.seats[0].concealed)
    assert held[win.win_tile] > 0
    held[win.win_tile] -= 1
    assert win.win_tile in waits(held, (), snap.ruleset)
    held[win.win_tile] += 1
    assert classify(held, (), snap.ruleset) is HandType.FULL_FLUSH


def test_heavenly_win_can_be_settled_as_the_engine_reports_it():
    snap = _deal("shanghai-classic")
    win = _only_shape_win(snap)
    counts = list(snap.seats[0].concealed)
    counts[win.win_tile] -= 1  # the engine settles the 13 other tiles plus the winning tile
    w = WinInput(
        context=HandContext(load_ruleset("shanghai-classic"), stake=1, dealer=0, dice=(2, 5)),
        winners=(WinnerHand(0, tuple(from_counts(counts)), (), (), win.win_tile),),
        win=WinKind.SELF_DRAW,
        first_go_around=True,
    )
    s = settle_win(w)
    assert s.winners[0].value == 10 * 50  # 天胡 10 勒子
    assert s.payments == (1500, -500, -500, -500)


def test_a_win_at_the_deal_without_ready_names_its_tile_too():
    rs = load_ruleset("shanghai-qiaoma").with_overrides({"ready.require_declare_ready": False})
    snap = _deal(rs)._replace(first_go_around=False)
    win = _only_shape_win(snap)
    assert win.win_tile is not None and snap.seats[0].concealed[win.win_tile] > 0
