import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.matchmaking.domain.tournaments.seating import meetings, repeats, seat_round


@settings(max_examples=15, deadline=None)
@given(st.data(), st.sampled_from([16, 20, 32]))
def test_no_two_players_meet_again_while_avoidable(data, n):
    players = [f"p{i:02d}" for i in range(n)]
    met: set = set()
    for _ in range(3):
        chips = data.draw(st.lists(st.integers(-500, 500), min_size=n, max_size=n))
        order = [p for _, p in sorted(zip(chips, players, strict=True), key=lambda cp: -cp[0])]
        tables = seat_round(order, met)
        assert sorted(p for t in tables for p in t) == players
        assert repeats(tables, met) == 0
        met |= meetings(tables)


def test_first_round_seats_by_order_and_later_rounds_are_swiss():
    players = [f"p{i:02d}" for i in range(16)]
    first = seat_round(players, set())
    assert first == [tuple(players[i : i + 4]) for i in range(0, 16, 4)]
    met = meetings(first)
    # Standings after round one: the four table winners lead; they share the top table.
    order = [players[i] for i in (0, 4, 8, 12)]
    order += [p for p in players if p not in order]
    second = seat_round(order, met)
    assert second[0] == ("p00", "p04", "p08", "p12")
    assert repeats(second, met) == 0


def test_unavoidable_repeats_are_kept_small():
    players = [f"p{i}" for i in range(8)]
    met = meetings(seat_round(players, set()))
    second = seat_round(players, met)
    # Two tables of four from two earlier tables: two from each at a table is best (4 pairs).
    assert repeats(second, met) == 4


@pytest.mark.parametrize("order", [["a", "b", "c"], ["a", "a", "b", "c"]])
def test_bad_player_lists_are_refused(order):
    with pytest.raises(ValueError):
        seat_round(order, set())
