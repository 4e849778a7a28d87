"""Plan choice and per-plan distances of the planning bot (services/gateway/bots)."""

from __future__ import annotations

import pytest

from services.gateway.bots.distance import (
    INFEASIBLE,
    WIND_KINDS,
    flush_distance,
    honors_distance,
    pongs_distance,
    suit_partials,
)
from services.gateway.bots.plan import (
    FLUSHES,
    HONORS,
    PONGS,
    PlanKind,
    allowed_honors,
    choose_plan,
    useful_tiles,
)
from shared.melds import Meld
from shared.tiles import parse, parse_counts


def fresh_unseen(counts):
    return [4 - c for c in counts]


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("111222333m44455p", -1),  # complete all pongs
        ("111222333m4445p", 0),  # waits on 5p (pair) — 13 tiles
        ("111m22p33s44m55p66s7z", 2),
        ("123456789m1234p", 8),
    ],
)
def test_pongs_distance(hand, expected):
    c = parse_counts(hand)
    assert pongs_distance(c, ()) == expected


def test_pongs_distance_counts_dead_pairs_only_as_the_pair():
    c = parse_counts("111m222p333s44z55z6z")
    live = fresh_unseen(c)
    assert pongs_distance(c, (), live) == 0
    dead = list(live)
    dead[parse("4z")[0]] = 0
    dead[parse("5z")[0]] = 0
    # two pairs that can never become pongs: only one of them is useful (as the pair)
    assert pongs_distance(c, (), dead) == pongs_distance(c, (), live) + 1


def test_pongs_impossible_after_a_chow():
    c = parse_counts("111222m3334p")
    assert pongs_distance(c, (Meld.of("chow", "456p", 0),)) == INFEASIBLE


@pytest.mark.parametrize(
    ("hand", "suit", "expected"),
    [
        ("123456789m11122z", 0, -1),  # 混一色 complete
        ("12345678m111z22z", 0, 0),  # waits on 9m / 6m... in 万
        ("123456789m123p5z", 0, 2),  # 123p is dead weight for a 万 flush
        ("123456789m123p5z", 1, 6),
    ],
)
def test_flush_distance(hand, suit, expected):
    assert flush_distance(parse_counts(hand), (), suit) == expected


def test_flush_impossible_with_a_meld_of_another_suit():
    c = parse_counts("1234567m11z")
    assert flush_distance(c, (Meld.of("pong", "222p", 1),), 0) == INFEASIBLE
    assert flush_distance(c, (Meld.of("pong", "777z", 1),), 0) < INFEASIBLE


def test_flush_without_dragons_counts_them_as_dead_weight():
    c = parse_counts("12345678m11z555z")
    assert flush_distance(c, (), 0) == 0
    assert flush_distance(c, (), 0, WIND_KINDS) > 0


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("11223344556677z", -1),  # 14 honors in any arrangement win (乱风向)
        ("1234567z123456z", 0),  # 13 scattered honors wait on every honor
        ("1234567z12345z9s", 1),
    ],
)
def test_honors_distance(hand, expected):
    assert honors_distance(parse_counts(hand), ()) == expected


def test_honors_distance_counts_non_honor_tiles():
    assert honors_distance(parse_counts("123456z1234z1m5p9s"), ()) == 3
    assert honors_distance(parse_counts("1234z"), (Meld.of("pong", "111m", 2),)) == INFEASIBLE


def test_suit_partials_reads_runs_pongs_pairs_and_partials():
    reads = suit_partials((1, 1, 1, 0, 0, 0, 0, 0, 0))
    assert (1, 0, 0) in reads
    reads = suit_partials((3, 1, 1, 0, 0, 0, 0, 0, 0))  # 11123: 111+23 or 123+11
    assert (1, 0, 1) in reads and (1, 1, 0) in reads
    assert suit_partials((0,) * 9) == ((0, 0, 0),)


@pytest.mark.parametrize(
    ("hand", "kind", "suit"),
    [
        ("1234567899m15p2z", PlanKind.FLUSH, 0),
        ("11m22p33s44m55p66s7z", PlanKind.PONGS, -1),
        ("1234567z1m5p9s335z", PlanKind.HONORS, -1),
        ("2345678p11z1m5s99p", PlanKind.FLUSH, 1),
    ],
)
def test_choose_plan_from_tiles(qiaoma, hand, kind, suit):
    c = parse_counts(hand)
    choice = choose_plan(c, (), fresh_unseen(c), qiaoma)
    assert choice is not None
    assert choice.plan.kind is kind
    if suit >= 0:
        assert choice.plan.suit == suit


def test_choose_plan_respects_melds(qiaoma):
    c = parse_counts("1234567m55z9p")
    # a pong of 9p rules out a 万 flush: pongs is the only plan left with these tiles
    choice = choose_plan(c, (Meld.of("pong", "999p", 1),), fresh_unseen(c), qiaoma)
    assert choice.plan not in (FLUSHES[0], HONORS)
    choice = choose_plan(c, (Meld.of("pong", "999m", 1),), fresh_unseen(c), qiaoma)
    assert choice.plan == FLUSHES[0]


def test_fourteen_tiles_are_judged_by_their_best_discard(qiaoma):
    c13 = parse_counts("123456789m11z22z")
    c14 = parse_counts("123456789m11z22z5p")
    a = choose_plan(c13, (), fresh_unseen(c13), qiaoma)
    b = choose_plan(c14, (), fresh_unseen(c14), qiaoma)
    assert a.plan == b.plan == FLUSHES[0]
    assert a.distance == b.distance == 0


def test_useful_tiles_of_a_waiting_hand_are_its_live_waits(qiaoma):
    c = parse_counts("111222333m4445p")
    unseen = fresh_unseen(c)
    assert useful_tiles(PONGS, c, (), unseen, allowed_honors(qiaoma)) == 3  # three 5p left
    unseen[parse("5p")[0]] = 0
    assert useful_tiles(PONGS, c, (), unseen, allowed_honors(qiaoma)) == 0
