"""Decisions of the planning bot and the random bot on hand-made views and options."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from services.gateway.bots import PlanningBot, RandomBot, SeatView, legal_actions, make_bot
from services.gateway.bots.view import unseen_counts
from shared.hand.hand_type import HandType
from shared.melds import Meld, MeldKind
from shared.ruleset import load_ruleset
from shared.table import (
    AddedKong,
    Chow,
    ClaimOptions,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    LastAction,
    LastActionKind,
    OwnTurnOptions,
    Pass,
    Pong,
    SeatState,
    TableSnapshot,
    Win,
    WinKind,
    WinOption,
)
from shared.tiles import format_tile, parse, parse_counts


def tile(text: str) -> int:
    return parse(text)[0]


def view_of(ruleset, hand: str, melds=(), **kw) -> SeatView:
    return SeatView(seat=0, ruleset=ruleset, concealed=tuple(parse_counts(hand)), melds=melds, **kw)


def turn(view: SeatView, **kw) -> OwnTurnOptions:
    kinds = tuple(k for k, n in enumerate(view.concealed) if n)
    return OwnTurnOptions(seat=view.seat, discards=kw.pop("discards", kinds), **kw)


BOT = PlanningBot()


# --- own turn ---------------------------------------------------------------------------------
def test_wins_whenever_offered(qiaoma):
    v = view_of(qiaoma, "123456789m11122z")
    win = WinOption(HandType.HALF_FLUSH, WinKind.SELF_DRAW, tile("2z"))
    assert BOT.own_turn(v, turn(v, wins=(win,))) == Win()


def test_prefers_the_more_valuable_of_two_wins(qiaoma):
    v = view_of(qiaoma, "123456789m11122z", flowers=tuple(range(34, 42)))
    shape = WinOption(HandType.HALF_FLUSH, WinKind.SELF_DRAW, tile("2z"))
    eight = WinOption(HandType.EIGHT_FLOWERS, WinKind.EIGHT_FLOWERS)
    assert BOT.own_turn(v, turn(v, wins=(shape, eight))) == Win(eight_flowers=True)


def test_discards_away_from_the_plan(qiaoma):
    # a 万 flush with one stray 5p and one stray 9s: a stray goes, never a 万
    v = view_of(qiaoma, "1234567899m5p11z9s")
    action = BOT.own_turn(v, turn(v))
    assert isinstance(action, Discard)
    assert action.tile in (tile("5p"), tile("9s"))


def test_discards_away_from_a_pongs_plan(qiaoma):
    v = view_of(qiaoma, "111m222p333s44z55z6z")
    assert BOT.own_turn(v, turn(v)) == Discard(tile("6z"))


def test_only_offered_discards_are_made(qiaoma):
    v = view_of(qiaoma, "1234567899m5p11z9s")
    action = BOT.own_turn(v, turn(v, discards=(tile("1m"), tile("9m"))))
    assert action in (Discard(tile("1m")), Discard(tile("9m")))


def test_declares_ready_as_soon_as_it_waits(qiaoma):
    v = view_of(qiaoma, "123456789m11z22z5p")
    opts = turn(v, ready_discards=(tile("5p"),))
    assert BOT.own_turn(v, opts) == DeclareReady(tile("5p"))


def test_ready_discard_with_the_most_live_waits(qiaoma):
    # discarding 9m waits on 1z/2z (shanpon); discarding 1z waits 9m... pick the one with more
    # live tiles: make 1z and 2z all seen so only the other discard keeps live waits.
    v = view_of(
        qiaoma,
        "12345678m999m11z2z",
        discards=((tile("1z"), tile("1z")), (tile("2z"),) * 2, (), ()),
    )
    opts = turn(v, ready_discards=(tile("2z"), tile("9m")))
    action = BOT.own_turn(v, opts)
    assert isinstance(action, DeclareReady)
    assert action.discard == tile("2z")


def test_no_ready_on_dead_waits(qiaoma):
    # discarding 5p waits only on 1z (pair wait, 111z already... ) — all copies seen
    v = view_of(
        qiaoma,
        "123456789m222z1z5p",
        discards=((tile("1z"),) * 3, (), (), ()),
    )
    opts = turn(v, ready_discards=(tile("5p"),))
    assert not isinstance(BOT.own_turn(v, opts), DeclareReady)


def test_after_ready_it_discards_the_drawn_tile_or_takes_the_offered_kong(qiaoma):
    v = view_of(qiaoma, "123456789m1z222z7p", declared_ready=True)
    assert BOT.own_turn(v, turn(v, discards=(tile("7p"),))) == Discard(tile("7p"))
    opts = turn(v, discards=(tile("7p"),), concealed_kongs=(tile("2z"),))
    assert BOT.own_turn(v, opts) == ConcealedKong(tile("2z"))


def test_kongs_that_fit_the_plan(qiaoma):
    v = view_of(qiaoma, "1111m222p333s55z6z7p")
    opts = turn(v, concealed_kongs=(tile("1m"),))
    assert BOT.own_turn(v, opts) == ConcealedKong(tile("1m"))
    pong = Meld.of("pong", "555z", 2)
    v = view_of(qiaoma, "12345678m11z5z9p", melds=(pong,))
    opts = turn(v, added_kongs=(tile("5z"),))
    assert BOT.own_turn(v, opts) == AddedKong(tile("5z"))


def test_no_kong_that_breaks_the_hand(qiaoma):
    # 111122223333m is four runs of 123m in a 万 flush; a kong of 1m would break them up
    v = view_of(qiaoma, "111122223333m5z7p")
    opts = turn(v, concealed_kongs=(tile("1m"), tile("2m"), tile("3m")))
    assert isinstance(BOT.own_turn(v, opts), Discard)


# --- claims -----------------------------------------------------------------------------------
def test_claims_a_win(qiaoma):
    v = view_of(qiaoma, "123456789m1112z")
    opts = ClaimOptions(seat=0, win=WinOption(HandType.HALF_FLUSH, WinKind.DISCARD, tile("2z")))
    assert BOT.claim(v, opts, tile("2z")) == Win()


def test_pongs_what_fits_a_pongs_plan(qiaoma):
    v = view_of(qiaoma, "111m22p33s44z55z66z")
    assert BOT.claim(v, ClaimOptions(seat=0, pong=True), tile("4z")) == Pong()


def test_no_pong_off_the_flush(qiaoma):
    v = view_of(qiaoma, "1234567m1199p11z")
    # 9p pong breaks the 万 flush plan; 1z pong fits it
    assert BOT.claim(v, ClaimOptions(seat=0, pong=True), tile("9p")) == Pass()
    assert BOT.claim(v, ClaimOptions(seat=0, pong=True), tile("1z")) == Pong()


def test_chows_into_the_flush_suit_only_when_it_helps(qiaoma):
    v = view_of(qiaoma, "12456789m11z5p9s")
    assert BOT.claim(v, ClaimOptions(seat=0, chows=(tile("1m"),)), tile("3m")) == Chow(tile("1m"))
    v = view_of(qiaoma, "123m456p789s1z2z3z4z")
    assert BOT.claim(v, ClaimOptions(seat=0, chows=(tile("7s"),)), tile("9s")) == Pass()


def test_exposed_kong_on_a_concealed_triplet_that_fits(qiaoma):
    v = view_of(qiaoma, "111m222p333s4z5z6z7z")
    opts = ClaimOptions(seat=0, pong=True, exposed_kong=True)
    assert BOT.claim(v, opts, tile("1m")) in (ExposedKong(), Pong())


def test_passes_with_nothing_to_claim(qiaoma):
    v = view_of(qiaoma, "123456789m1112z")
    assert BOT.claim(v, ClaimOptions(seat=0), tile("5p")) == Pass()


def test_ready_seat_claims_only_offered_kongs(qiaoma):
    v = view_of(qiaoma, "123456789m111z2z", declared_ready=True)
    assert BOT.claim(v, ClaimOptions(seat=0, exposed_kong=True), tile("1z")) == ExposedKong()
    assert BOT.claim(v, ClaimOptions(seat=0, pong=True), tile("1z")) == Pass()


# --- 换牌 -------------------------------------------------------------------------------------
def test_tile_swap_buries_what_the_plan_needs_least(qiaoma):
    v = view_of(qiaoma, "12345678m11z5p9s3p")
    buried = BOT.tile_swap(v, 3)
    assert sorted(format_tile(k) for k in buried) == ["3p", "5p", "9s"]


# --- views ------------------------------------------------------------------------------------
def test_view_from_snapshot_hides_other_concealed_kongs(qiaoma):
    hidden = Meld.of("concealed_kong", "5555m")
    seats = tuple(
        SeatState(
            concealed=tuple(parse_counts("123p")),
            melds=(hidden,) if i == 1 else (),
            discards=(tile("9s"),),
        )
        for i in range(4)
    )
    snap = TableSnapshot(
        ruleset=qiaoma,
        seats=seats,
        wall_remaining=50,
        last=LastAction(LastActionKind.DISCARD, 1, tile("9s")),
    )
    view = SeatView.from_snapshot(snap, 0)
    assert view.melds_by_seat[1][0].kind is MeldKind.CONCEALED_KONG
    assert view.melds_by_seat[1][0].tiles == ()
    assert view.tiles_left == 50
    unseen = unseen_counts(view)
    assert unseen[tile("5m")] == 4  # the hidden kong is not known to seat 0
    assert unseen[tile("9s")] == 0  # four 9s discarded
    assert unseen[tile("1p")] == 3
    own = SeatView.from_snapshot(snap, 1)
    assert own.melds[0] == hidden


# --- random bot -------------------------------------------------------------------------------
def test_random_bot_is_seeded_and_uniform(qiaoma):
    v = view_of(qiaoma, "123456789m11z22z5p")
    opts = turn(v, ready_discards=(tile("5p"),))
    a = [RandomBot(7).own_turn(v, opts) for _ in range(3)]
    assert a[0] == a[1] == a[2]
    bot = RandomBot(1)
    seen = Counter(bot.own_turn(v, opts) for _ in range(2000))
    assert set(seen) == set(legal_actions(opts))
    assert min(seen.values()) > 2000 / len(seen) * 0.6


def test_legal_actions_of_a_claim():
    opts = ClaimOptions(seat=1, pong=True, exposed_kong=True, chows=(2, 3))
    assert legal_actions(opts) == [Pass(), Pong(), ExposedKong(), Chow(2), Chow(3)]


def test_make_bot_by_name():
    assert isinstance(make_bot("planner"), PlanningBot)
    assert isinstance(make_bot("random", 3), RandomBot)


# --- property: every decision is legal ----------------------------------------------------------
hands14 = st.lists(st.integers(0, 33), min_size=14, max_size=14).filter(
    lambda ts: max(Counter(ts).values()) <= 4
)


@settings(max_examples=60, deadline=None)
@given(hands14, st.randoms(use_true_random=False))
def test_planning_bot_always_picks_an_offered_action(tiles, rnd):
    qiaoma = load_ruleset("shanghai-qiaoma")
    counts = [0] * 34
    for k in tiles:
        counts[k] += 1
    v = SeatView(seat=0, ruleset=qiaoma, concealed=tuple(counts))
    held = [k for k in range(34) if counts[k]]
    discards = tuple(rnd.sample(held, rnd.randint(1, len(held))))
    kongs = tuple(k for k in held if counts[k] == 4)
    opts = OwnTurnOptions(seat=0, discards=discards, concealed_kongs=kongs)
    assert BOT.own_turn(v, opts) in legal_actions(opts)
    claim_tile = rnd.choice(held)
    thirteen = list(counts)
    thirteen[claim_tile] -= 1
    v13 = SeatView(seat=0, ruleset=qiaoma, concealed=tuple(thirteen))
    copt = ClaimOptions(
        seat=0, pong=thirteen[claim_tile] >= 2, exposed_kong=thirteen[claim_tile] == 3
    )
    assert BOT.claim(v13, copt, claim_tile) in legal_actions(copt)


def test_a_ready_hand_offered_several_discards_keeps_its_waits(qiaoma):
    # 敲 on 123456789m11z22z: drew 5p; should the rules offer more than the drawn tile, the bot
    # still throws the tile that keeps the 1z/2z wait
    v = view_of(qiaoma, "123456789m11z22z5p", declared_ready=True)
    opts = turn(v, discards=(tile("5p"), tile("1m")))
    assert BOT.own_turn(v, opts) == Discard(tile("5p"))
