"""services.wall.domain.wall: the physical wall of RULES.md §3 — opening, deal, live and replacement
draws, exhaustion, reserved tiles and the tile swap mechanics."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.wall.domain.shuffle import shuffle_and_dice
from services.wall.domain.wall import (
    DEALT_TILES,
    Wall,
    WallExhausted,
    break_stack,
    deal_order,
    opened_seat,
)
from shared import tiles as T

IDENTITY = list(range(144))  # position p holds "tile" p: draws reveal positions


def position_wall(start: int, reserved: int = 0) -> Wall:
    """A wall whose tile at position p is the canonical tile p, plus a map back to positions:
    draws then tell exactly which position they took."""
    return Wall(T.canonical_set(), start, reserved)


def draw_positions(wall: Wall, kind: str, n: int) -> list[int]:
    fn = wall.draw_live if kind == "live" else wall.draw_replacement
    return [fn()[1] for _ in range(n)]


def test_rules_example_seven_opens_the_dealers_opposite():
    for dealer in range(4):
        assert opened_seat(dealer, (3, 4)) == (dealer + 2) % 4
        assert opened_seat(dealer, (1, 1)) == (dealer + 1) % 4  # 2: the 下家
        assert opened_seat(dealer, (6, 6)) == (dealer + 3) % 4  # 12: the 上家
        assert opened_seat(dealer, (2, 3)) == dealer  # 5: the dealer's own wall


@pytest.mark.parametrize(
    ("dealer", "dice", "stack"),
    [(0, (3, 4), 36 + 7), (0, (1, 1), 18 + 2), (3, (6, 6), 36 + 12), (2, (2, 3), 36 + 5)],
)
def test_break_stack_skips_sum_stacks_of_the_opened_wall(dealer, dice, stack):
    assert break_stack(dealer, dice) == stack


def test_live_draws_go_forward_top_then_bottom():
    wall = position_wall(start=70)
    assert draw_positions(wall, "live", 6) == [140, 141, 142, 143, 0, 1]  # wraps the ring


def test_replacements_come_from_the_tail_top_then_bottom_then_the_stack_before():
    wall = position_wall(start=10)
    assert draw_positions(wall, "replacement", 5) == [18, 19, 16, 17, 14]
    wall = position_wall(start=0)
    assert draw_positions(wall, "replacement", 3) == [142, 143, 140]  # stack 71 first


@pytest.mark.parametrize("live_first", [True, False])
def test_where_the_ends_meet_the_standing_tile_is_taken(live_first):
    wall = position_wall(start=0)
    if live_first:
        draw_positions(wall, "live", 143)  # through the top of stack 71
        assert wall.draw_replacement()[1] == 143  # its bottom is what remains
    else:
        draw_positions(wall, "replacement", 143)  # down to the top of stack 0
        assert wall.draw_live()[1] == 1
    assert wall.remaining == 0
    with pytest.raises(WallExhausted, match="exhausted"):
        wall.draw_live()
    with pytest.raises(WallExhausted):
        wall.draw_replacement()


def test_deal_order_is_three_rounds_of_four_then_one_each_then_the_dealers_extra():
    assert deal_order(2) == [(2, 4), (3, 4), (0, 4), (1, 4)] * 3 + [
        (2, 1),
        (3, 1),
        (0, 1),
        (1, 1),
        (2, 1),
    ]
    assert sum(n for _, n in deal_order(0)) == DEALT_TILES == 53


@pytest.mark.parametrize("dealer", range(4))
def test_deal_sizes_and_physical_order(dealer):
    wall = position_wall(start=5)
    hands = wall.deal(dealer)
    assert [len(h) for h in hands] == [14 if s == dealer else 13 for s in range(4)]
    order = wall.live_order()
    # dealer takes stacks 5 and 6, the next seat stacks 7 and 8, ...
    assert [T.canonical_set()[p] for p in order[:4]] == hands[dealer][:4]
    nxt = (dealer + 1) % 4
    assert [T.canonical_set()[p] for p in order[4:8]] == hands[nxt][:4]
    # the dealer's last two tiles are the 49th and 53rd taken
    assert hands[dealer][12:] == [T.canonical_set()[order[48]], T.canonical_set()[order[52]]]
    assert wall.remaining == 144 - 53 and wall.live_drawn == 53


@settings(max_examples=20, deadline=None)
@given(st.binary(min_size=32, max_size=32), st.integers(0, 3), st.integers(0, 3))
def test_a_whole_wall_accounts_for_all_144_tiles(seed, dealer, every):
    """Deal, then live and replacement draws in any mix until the wall is empty: every tile
    is handed out exactly once."""
    tiles, dice = shuffle_and_dice(seed)
    wall = Wall.build(tiles, dealer, dice)
    out = [k for hand in wall.deal(dealer) for k in hand]
    i = 0
    while wall.remaining:
        i += 1
        out.append(
            wall.draw_replacement()[0] if every and i % (every + 1) == 0 else wall.draw_live()[0]
        )
    assert sorted(out) == T.canonical_set()
    assert wall.live_drawn + wall.replacements_drawn == 144
    assert not any(not t for t in wall.taken)


def test_reserved_tiles_stay_in_the_wall():
    wall = position_wall(start=0, reserved=14)
    draw_positions(wall, "live", 100)
    draw_positions(wall, "replacement", 30)
    assert (wall.remaining, wall.drawable) == (14, 0)
    with pytest.raises(WallExhausted, match="14 standing, 14 reserved"):
        wall.draw_live()
    with pytest.raises(WallExhausted):
        wall.draw_replacement()
    assert wall.remaining == 14  # the failed draws took nothing


def test_cannot_deal_twice_or_after_a_draw():
    wall = position_wall(start=0)
    wall.draw_live()
    with pytest.raises(Exception, match="before the deal"):
        wall.deal(0)


def test_swap_exchanges_tiles_at_chosen_standing_positions():
    wall = position_wall(start=0)
    wall.deal(0)  # positions 0-52 are gone
    picks = iter([0, 0, 5])
    taken = wall.swap([0, 1, 2], lambda n: next(picks))
    # first pick: index 0 of the standing positions → 53; second: index 0 of the rest → 54;
    # third: index 5 of the rest (55, 56, ...) → 60
    assert taken == [T.canonical_set()[p] for p in (53, 54, 60)]
    assert [wall.tiles[p] for p in (53, 54, 60)] == [0, 1, 2]
    assert wall.remaining == 91  # a swap does not change the size of the wall


def test_swap_needs_enough_standing_tiles():
    wall = position_wall(start=0)
    draw_positions(wall, "live", 142)
    with pytest.raises(WallExhausted, match="cannot swap 5 tiles: 2 standing"):
        wall.swap([0] * 5, lambda n: 0)


def test_wall_rejects_impossible_shapes():
    with pytest.raises(ValueError, match="exactly the 144 tiles"):
        Wall.build([0] * 144, 0, (1, 1))
    with pytest.raises(ValueError, match="even number of positions"):
        Wall([0] * 143, 0)
    with pytest.raises(ValueError, match="each holding a tile kind"):
        Wall([47] * 144, 0)
    with pytest.raises(ValueError, match="break stack 72"):
        Wall(T.canonical_set(), 72)
    with pytest.raises(ValueError, match="reserved"):
        Wall(T.canonical_set(), 0, 144)


@pytest.mark.parametrize(
    ("extras", "wildcards", "walls"),
    [
        (True, True, [19, 19, 19, 19]),
        (True, False, [18, 19, 18, 19]),
        (False, False, [18, 18, 18, 18]),
    ],
)
def test_seat_walls_of_every_set_are_floor_divisions_of_the_ring(extras, wildcards, walls):
    """RULES-presets §13.B.2: seat w's wall is stacks ⌊w·S/4⌋ … ⌊(w+1)·S/4⌋ − 1."""
    from services.wall.domain.wall import seat_wall_start

    full = T.canonical_set(extras, wildcards)
    stacks = len(full) // 2
    sizes = [seat_wall_start(w + 1, stacks) - seat_wall_start(w, stacks) for w in range(4)]
    assert sizes == walls
    wall = Wall.build(full, 0, (3, 4), tile_set=full)  # s = 7: the wall of seat 2
    assert wall.stacks == stacks and wall.start == seat_wall_start(2, stacks) + 7
    live = [wall.draw_live()[1] for _ in range(3)]
    assert live == [2 * wall.start, 2 * wall.start + 1, 2 * wall.start + 2]
    assert wall.draw_replacement()[1] == 2 * (wall.start - 1)
    while wall.drawable:
        wall.draw_live()
    assert wall.remaining == 0 and all(wall.taken)


def test_a_152_tile_wall_refuses_the_144_set():
    with pytest.raises(ValueError, match="exactly the 152 tiles"):
        Wall.build(T.canonical_set(), 0, (1, 1), tile_set=T.canonical_set(True, True))
