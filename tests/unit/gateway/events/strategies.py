"""Hypothesis strategies: a generated instance of every event kind, with random tiles and
seats, for the contract tests of the codec, the view rules and the proto conversion."""

from __future__ import annotations

from hypothesis import strategies as st

from services.gateway.domain.events import kinds as K
from shared import tiles as T
from shared.hand.hand_type import HandType
from shared.melds import MeldKind
from shared.table import (
    AddedKong,
    Chow,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    Pass,
    Pong,
    TileSwap,
    Win,
    WinKind,
)

seats = st.integers(0, 3)
opt_seats = st.none() | seats
plain = st.integers(0, T.NUM_KINDS - 1)  # a playing tile
flower = st.integers(T.FLOWER_BASE, T.NUM_TILE_KINDS - 1)
tiles = st.lists(plain, max_size=14).map(tuple)
flowers = st.lists(flower, max_size=4).map(tuple)
opt_tile = st.none() | plain
small = st.integers(0, 200)
text = st.text("abcdefghij0123456789_", max_size=12)
heads = {"hand_id": text, "hand_number": st.integers(0, 50)}
prompt_kinds = st.sampled_from([K.OWN_TURN, K.CLAIM, K.ROB_KONG, K.SWAP])
stacks = st.none() | st.lists(st.integers(-50, 50), min_size=4, max_size=4).map(tuple)
payments = st.lists(st.integers(-50, 50), min_size=4, max_size=4).map(tuple)

melds = st.builds(
    K.MeldFact,
    kind=st.sampled_from(list(MeldKind)),
    tiles=st.lists(plain, min_size=3, max_size=4).map(tuple),
    from_seat=opt_seats,
    claimed=opt_tile,
)


@st.composite
def prompts(draw):
    """A prompt whose options are those its kind carries (as the engine builds them)."""
    kind = draw(prompt_kinds)
    if kind == K.OWN_TURN:
        eight = draw(st.booleans())
        win = eight or draw(st.booleans())
        options = K.PromptOptions(
            discards=draw(tiles),
            ready_discards=draw(tiles),
            concealed_kongs=draw(tiles),
            added_kongs=draw(tiles),
            win=win,
            win_eight_flowers=eight,
            win_shape=draw(st.booleans()) if eight else win,
        )
    elif kind == K.SWAP:
        options = K.PromptOptions(swap_count=draw(st.integers(1, 5)), pass_=True)
    else:
        win = draw(st.booleans())
        options = K.PromptOptions(
            win=win,
            win_shape=win,
            pong=draw(st.booleans()),
            exposed_kong=draw(st.booleans()),
            chows=draw(st.lists(st.integers(0, 6), max_size=3).map(tuple)),
            pass_=True,
        )
    return K.Prompt(
        seat=draw(seats),
        kind=kind,
        options=options,
        deadline_ms=draw(st.integers(0, 10**13)),
        tile=draw(opt_tile),
        from_seat=draw(opt_seats),
        hand_id=draw(text),
        hand_number=draw(st.integers(0, 50)),
    )


HAND_LABELS = st.sampled_from([h.label for h in HandType])
WIN_LABELS = st.sampled_from([w.label for w in WinKind])
actions = st.one_of(
    st.builds(Discard, plain),
    st.builds(DeclareReady, plain),
    st.builds(Chow, st.integers(0, 6)),
    st.builds(Pong),
    st.builds(ExposedKong),
    st.builds(AddedKong, plain),
    st.builds(ConcealedKong, plain),
    st.builds(Win, st.booleans()),
    st.builds(Pass),
    st.builds(TileSwap, tiles),
)
revealed = st.builds(
    K.RevealedHand,
    seat=seats,
    concealed=tiles,
    melds=st.lists(melds, max_size=2).map(tuple),
    flowers=flowers,
)

EVENTS = {
    K.TableStarted: st.builds(
        K.TableStarted,
        ruleset=text,
        overrides=st.dictionaries(text, text, max_size=2),
        stake=small,
        seats=st.lists(
            st.builds(K.SeatAssignment, text, text, st.booleans()), min_size=4, max_size=4
        ).map(tuple),
        max_hands=small,
        max_rounds=small,
        tag=text,
        seat_deadline_ms=st.integers(0, 10**13),
        first_dealer=opt_seats,
        end_by_ms=st.integers(0, 10**13),
        **heads,
    ),
    K.HandStarted: st.builds(
        K.HandStarted,
        dealer=seats,
        dice=st.tuples(st.integers(1, 6), st.integers(1, 6)),
        commitment=text,
        kaibao=st.booleans(),
        huangfan=small,
        huangfan_dice=st.none() | st.integers(0, 2),
        garden_stacks=stacks,
        doubled_seats=st.lists(seats, max_size=4, unique=True).map(lambda x: tuple(sorted(x))),
        **heads,
    ),
    K.TilesDealt: st.builds(
        K.TilesDealt,
        hands=st.lists(tiles, min_size=4, max_size=4).map(tuple),
        tiles_left=small,
        **heads,
    ),
    K.FlowersExposed: st.builds(
        K.FlowersExposed,
        seat=seats,
        flowers=flowers,
        replacements=tiles,
        draw=st.sampled_from(["deal", "live", "replacement", "swap"]),
        tiles_left=small,
        **heads,
    ),
    K.TileDrawn: st.builds(
        K.TileDrawn, seat=seats, tile=plain, replacement=st.booleans(), tiles_left=small, **heads
    ),
    K.TileDiscarded: st.builds(
        K.TileDiscarded,
        seat=seats,
        tile=plain,
        declared_ready=st.booleans(),
        auto=st.booleans(),
        drawn_tile=st.booleans(),
        **heads,
    ),
    K.MeldDeclared: st.builds(K.MeldDeclared, seat=seats, meld=melds, **heads),
    K.ReadyDeclared: st.builds(K.ReadyDeclared, seat=seats, **heads),
    K.Prompt: prompts(),
    K.ActionTaken: st.builds(
        K.ActionTaken,
        seat=seats,
        action=actions,
        auto=st.booleans(),
        request_id=text,
        **heads,
    ),
    K.WinDeclared: st.builds(
        K.WinDeclared,
        seat=seats,
        win_kind=WIN_LABELS,
        tile=opt_tile,
        from_seat=opt_seats,
        hand=HAND_LABELS,
        **heads,
    ),
    K.HandResult: st.builds(
        K.HandResult,
        outcome=st.sampled_from(["win", "draw", "escape"]),
        winners=st.lists(
            st.builds(K.WinnerLine, seats, HAND_LABELS, small, small, WIN_LABELS, opt_tile),
            max_size=3,
        ).map(tuple),
        payments=payments,
        house=small,
        breakdown=st.lists(
            st.builds(K.BreakdownLine, opt_seats, text, text, st.integers(-9, 9)), max_size=3
        ).map(tuple),
        revealed=st.lists(revealed, max_size=4).map(tuple),
        next_dealer=seats,
        next_huangfan=small,
        from_seat=opt_seats,
        robbed_tile=opt_tile,
        escaped_seat=opt_seats,
        garden_stacks=stacks,
        escape_reason=st.sampled_from(("", "left", "disconnected")),
        **heads,
    ),
    K.SeedRevealed: st.builds(K.SeedRevealed, seed=text, commitment=text, **heads),
    K.HandDrawn: st.builds(K.HandDrawn, tiles_left=small, **heads),
    K.TableFinished: st.builds(
        K.TableFinished,
        hands_played=small,
        chips=payments,
        reason=st.sampled_from(["max_hands", "max_rounds", "players_left"]),
        rounds_played=small,
        garden_stacks=stacks,
        **heads,
    ),
    K.SeatChanged: st.builds(
        K.SeatChanged,
        seat=seats,
        player_id=text,
        bot=st.booleans(),
        reason=st.sampled_from(["joined", "left", "auto_play_on", "auto_play_off"]),
        auto_play=st.booleans(),
        left=st.booleans(),
        deadline_ms=st.integers(0, 10**13),
        private=st.booleans(),
        deadline_private=st.booleans(),
        **heads,
    ),
    K.TilesSwapped: st.builds(K.TilesSwapped, seat=seats, buried=tiles, taken=tiles, **heads),
    K.TimedOut: st.builds(K.TimedOut, seat=seats, kind=prompt_kinds, in_a_row=small, **heads),
    K.TableHalted: st.builds(K.TableHalted, reason=text, message=text, error=text, **heads),
    K.WildFlipped: st.builds(
        K.WildFlipped, indicator=plain, wild=plain, set_aside=flowers, tiles_left=small, **heads
    ),
    K.DoubleCardPlayed: st.builds(
        K.DoubleCardPlayed, seat=seats, doubled_hand=st.integers(1, 10_000), **heads
    ),
    K.SeatBankrupt: st.builds(
        K.SeatBankrupt,
        seat=seats,
        player_id=text,
        bot_id=text,
        after_hand=st.integers(1, 10_000),
        **heads,
    ),
    K.NextHandReady: st.builds(
        K.NextHandReady, seat=seats, after_hand=st.integers(1, 10_000), **heads
    ),
    K.WindowPadding: st.builds(K.WindowPadding, **heads),
}

any_event = st.one_of(*EVENTS.values())
