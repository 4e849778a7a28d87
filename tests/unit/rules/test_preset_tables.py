"""The rules of shanghai-old and shanghai-baida at the table (RULES-presets §13.1, §13.A.3,
§13.B.3-4): 百搭 held, drawn, discarded but never claimed or melded; baida wins by self-draw
only (no 冲, no 抢杠); old wins on any standard shape with no 敲; neither has 八花齐."""

from __future__ import annotations

import pytest

from services.rules.domain import (
    action_refusal,
    claim_options,
    is_ready,
    own_turn_options,
    validate_action,
)
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument
from shared.hand import HandType
from shared.ruleset import resolve_ruleset
from shared.table import (
    Chow,
    ConcealedKong,
    Discard,
    Pong,
    SeatState,
    Win,
    WinKind,
    check_snapshot,
)
from shared.tile_set import tile_set_of
from tests.unit.rules.builders import seat, table

BAIDA = resolve_ruleset("shanghai-baida")


def wild_seat(text: str, **kw) -> SeatState:
    tiles = T.parse(text)
    base = seat(T.format_tiles(k for k in tiles if k != T.WILDCARD), **kw)
    return base._replace(wildcards=T.count_wildcards(tiles))


def test_a_drawn_wildcard_completes_a_self_draw_and_may_be_discarded():
    snap = table({0: wild_seat("123m456p789s2224z1j")}, ("draw", 0, "1j"), ruleset=BAIDA)
    options = own_turn_options(snap, 0)
    assert [w.hand for w in options.wins] == [HandType.PING_HU]
    assert options.wins[0].kind is WinKind.SELF_DRAW and options.wins[0].win_tile == T.WILDCARD
    assert T.WILDCARD in options.discards
    assert validate_action(snap, 0, Win()) is None
    assert validate_action(snap, 0, Discard(T.WILDCARD)) is None
    assert not options.ready_discards  # no 敲


def test_wildcard_discard_off_keeps_1j_in_hand():
    ruleset = resolve_ruleset("shanghai-baida", {"baida_tiles.wildcard_discard": "false"})
    snap = table({0: wild_seat("123m456p789s2234z1j")}, ("draw", 0, "4z"), ruleset=ruleset)
    assert T.WILDCARD not in own_turn_options(snap, 0).discards
    assert "may not be discarded" in action_refusal(snap, 0, Discard(T.WILDCARD))


def test_baida_never_wins_on_a_discard_but_pongs_it():
    # seat 1 waits on 4z (pair 4z + 1j… ) and holds a pair of 4z: the discard is pong only
    waiting = wild_seat("123m456p789s144z1j")
    snap = table({1: waiting}, ("discard", 0, "4z"), ruleset=BAIDA, avoid="4z")
    by_seat = {o.seat: o for o in claim_options(snap)}
    assert by_seat[1].win is None and by_seat[1].pong
    assert "does not complete" in action_refusal(snap, 1, Win())


def test_a_discarded_wildcard_is_never_claimed():
    holder = wild_seat("123m456p789s1j1j44z")  # two 百搭: a pong of 1j would need them
    snap = table({1: holder}, ("discard", 0, "1j"), ruleset=BAIDA)
    assert all(not o.any for o in claim_options(snap))
    assert "can never be claimed" in action_refusal(snap, 1, Pong())


def test_a_wildcard_is_never_melded():
    snap = table({0: wild_seat("123m456p789s2224z1j")}, ("draw", 0, "1j"), ruleset=BAIDA)
    with pytest.raises(InvalidArgument, match="never melded"):
        validate_action(snap, 0, ConcealedKong(T.WILDCARD))
    assert own_turn_options(snap, 0).concealed_kongs == ()


def test_baida_hands_may_not_hold_dragons_and_others_may_not_hold_1j():
    with pytest.raises(InvalidArgument, match="dragons are bonus tiles"):
        table({1: seat("123m456p789s5556z")}, ("discard", 0, "1m"), ruleset=BAIDA)
    qiaoma = table({0: seat("123m456p789s22245z")}, ("draw", 0, "5z"))
    wild = qiaoma.with_seat(0, wild_seat("123m456p789s2224z1j"))
    with pytest.raises(InvalidArgument, match="no 百搭"):
        check_snapshot(wild)


def test_old_wins_a_mixed_hand_on_a_discard_without_declaring():
    old = resolve_ruleset("shanghai-old")
    snap = table({1: seat("123m456p789s1122z")}, ("discard", 0, "2z"), ruleset=old, avoid="12z")
    by_seat = {o.seat: o for o in claim_options(snap)}
    assert by_seat[1].win is not None and by_seat[1].win.hand is HandType.STANDARD
    assert by_seat[1].win.kind is WinKind.DISCARD
    assert is_ready(snap.seats[1], old)  # waits on 1z and 2z


def test_neither_preset_has_eight_flowers():
    for name in ("shanghai-old", "shanghai-baida"):
        ruleset = resolve_ruleset(name)
        snap = table(
            {0: seat("123m456p789s22344z", flowers="12345678f")}, ("draw", 0, "4z"), ruleset=ruleset
        )
        options = own_turn_options(snap, 0)
        assert all(w.kind is not WinKind.EIGHT_FLOWERS for w in options.wins)
        with pytest.raises(FailedPrecondition, match="八花齐"):
            validate_action(snap, 0, Win(eight_flowers=True))


FLIPPED = resolve_ruleset("shanghai-baida", {"baida_tiles.wildcards": "flipped"})
FIVE_MAN = T.parse("5m")[0]


def flipped(seats, last, wild=FIVE_MAN):
    snap = table(seats, last, ruleset=FLIPPED, avoid="5m")
    snap = snap._replace(wild_kind=wild)
    check_snapshot(snap)
    return snap


def test_flipped_wild_tiles_complete_a_self_draw():
    # 5m is wild this hand: 123m456p789s + 22z + 4z and a drawn 5m (百搭) pairs the 4z
    snap = flipped({0: seat("123m456p789s2224z5m")}, ("draw", 0, "5m"))
    options = own_turn_options(snap, 0)
    assert [w.hand for w in options.wins] == [HandType.PING_HU]
    assert FIVE_MAN in options.discards


def test_flipped_wild_tiles_are_never_claimed_chowed_or_konged():
    snap = flipped({1: seat("123m456p789s55m44z")}, ("discard", 0, "5m"))
    assert all(not o.any for o in claim_options(snap))
    assert "can never be claimed" in action_refusal(snap, 1, Pong())
    chow = flipped({1: seat("34m456p789s1122z3z")}, ("discard", 0, "6m"))
    assert "never chowed" in action_refusal(chow, 1, Chow(T.parse("4m")[0]))
    kong = flipped({0: seat("5555m456p789s2224z")}, ("draw", 0, "4z"))
    assert kong.seats[0].concealed[FIVE_MAN] == 4
    assert own_turn_options(kong, 0).concealed_kongs == ()
    assert "never konged" in action_refusal(kong, 0, ConcealedKong(FIVE_MAN))


def test_a_wild_kind_needs_the_flipped_ruleset_and_no_meld_of_it():
    snap = table({0: seat("123m456p789s2224z5m")}, ("draw", 0, "5m"), ruleset=BAIDA)
    with pytest.raises(InvalidArgument, match="no flipped 百搭"):
        check_snapshot(snap._replace(wild_kind=FIVE_MAN))
    melded = table(
        {0: seat("123m456p789s24z", [("pong", "555m", 1)])}, ("draw", 0, "4z"), ruleset=FLIPPED
    )
    with pytest.raises(InvalidArgument, match="in a meld"):
        check_snapshot(melded._replace(wild_kind=FIVE_MAN))


def test_the_wild_kind_and_wildcards_travel_in_the_snapshot_proto():
    from services.rules import convert as R

    snap = flipped({0: seat("123m456p789s2224z5m")}, ("draw", 0, "5m"))
    back = R.snapshot_from_proto(R.snapshot_to_proto(snap))
    assert back.wild_kind == FIVE_MAN and back.seats == snap.seats
    dedicated = table({0: wild_seat("123m456p789s2224z1j")}, ("draw", 0, "1j"), ruleset=BAIDA)
    back = R.snapshot_from_proto(R.snapshot_to_proto(dedicated))
    assert back.wild_kind is None and back.seats[0].wildcards == 1


def test_evaluate_and_waits_with_a_flipped_wild_kind():
    from services.rules.domain import evaluate_hand, hand_waits

    counts = T.parse_counts("123m456p789s2224z5m")  # 5m wild: pairs the 4z
    assert evaluate_hand(counts, (), FLIPPED, wild=FIVE_MAN).hand is HandType.PING_HU
    assert evaluate_hand(counts, (), FLIPPED).hand is None  # read naturally: no win
    waits = hand_waits(T.parse_counts("123m456p789s2224z"), (), FLIPPED, wild=FIVE_MAN)
    assert waits == T.parse("5m4z")  # 4z naturally; a drawn 5m is a 百搭
    with pytest.raises(InvalidArgument, match="no flipped 百搭"):
        hand_waits(T.parse_counts("123m456p789s2224z"), (), BAIDA, wild=FIVE_MAN)


CAPPED = resolve_ruleset("shanghai-baida", {"baida_tiles.wildcard_fifth_copy": "false"})
FLIPPED_CAPPED = resolve_ruleset(
    "shanghai-baida",
    {"baida_tiles.wildcards": "flipped", "baida_tiles.wildcard_fifth_copy": "false"},
)
# 111m 234p 567p 12s 99s and a drawn 百搭, which can only be the 3s of 123s
NEEDS_3S = "111m234p567p12s99s"
OTHER = "123m456m789m1234z"


def wins_of(others: dict[int, SeatState], ruleset=CAPPED) -> list[HandType]:
    """Seat 0's wins on its drawn 百搭 beside the ``others`` (discards and melds)."""
    snap = table(
        {0: wild_seat(NEEDS_3S + "1j"), **others}, ("draw", 0, "1j"), ruleset=ruleset, avoid="3s"
    )
    return [w.hand for w in own_turn_options(snap, 0).wins]


def test_no_fifth_copy_counts_the_discards_on_the_table():
    three = {1: seat(OTHER, discards="33s"), 3: seat("123p456p789p11z22z", discards="3s")}
    assert wins_of(three) == [HandType.PING_HU]  # three seen: the 百搭 is the fourth 3s
    four = {1: seat(OTHER, discards="33s"), 3: seat("123p456p789p11z22z", discards="33s")}
    assert wins_of(four) == []  # all four seen: a 百搭 3s would be a fifth
    assert wins_of(four, ruleset=BAIDA) == [HandType.PING_HU]  # fifth copies allowed (default)


def test_no_fifth_copy_counts_other_seats_melds_but_not_their_concealed_kongs():
    def melded(kind: str, tiles: str, discards: str = "") -> dict[int, SeatState]:
        return {
            2: seat(
                "123p456p789p1z",
                [(kind, tiles, 3 if kind != "concealed_kong" else None)],
                discards=discards,
            )
        }

    assert wins_of(melded("pong", "333s")) == [HandType.PING_HU]
    assert wins_of(melded("pong", "333s", discards="3s")) == []
    assert wins_of(melded("exposed_kong", "3333s")) == []
    # a concealed kong stays face down (RULES §4): seat 0 cannot see those 3s
    assert wins_of(melded("concealed_kong", "3333s")) == [HandType.PING_HU]


def flipped_win(indicator: str, drawn: str, discards: str) -> list[HandType]:
    ts = tile_set_of(FLIPPED_CAPPED)
    snap = table(
        {0: seat(NEEDS_3S + drawn), 1: seat(OTHER, discards=discards)},
        ("draw", 0, drawn),
        ruleset=FLIPPED_CAPPED,
        avoid="3s" + indicator + drawn,
    )._replace(wild_kind=ts.wild_kind_for(T.parse(indicator)[0]))
    check_snapshot(snap)
    return [w.hand for w in own_turn_options(snap, 0).wins]


def test_no_fifth_copy_counts_the_flipped_indicator():
    # indicator 4z: 1z is wild, and the drawn 1z is the 3s of 123s
    assert flipped_win("4z", "1z", discards="333s") == [HandType.PING_HU]
    # indicator 3s (4s wild): the indicator is a 3s everybody sees
    assert flipped_win("3s", "4s", discards="33s") == [HandType.PING_HU]
    assert flipped_win("3s", "4s", discards="333s") == []
