"""Options of the seat to act on its own turn (RULES §4-5): discard, 敲 with a discard, 暗杠
concealed kong, 上杠 added kong, 胡 win by self-draw (杠开 included) or 八花齐.

Each rule is a ``*_refusal`` function returning None when the action is legal and otherwise the
reason; :func:`own_turn_options` lists what they allow and :mod:`.validation` reports what they
refuse, so options and validation can never disagree (``tests/unit/rules/test_options_agree``).

The options are computed on every own turn, so they never format a reason they do not need: a
rule is asked only about the kinds that pass its first, cheap condition (a kong needs four held,
a win passes :func:`shared.hand.is_winning_hand`'s scans, a 敲 discard
:func:`shared.hand.waits.discards_that_may_wait`), and the discards, whose rule is two counts,
are read off the hand by :func:`allowed_discards`. Messages are written only when validation
refuses.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

from services.rules.domain.eight_flowers import has_eight_flowers
from services.rules.domain.readiness import (
    declaration_required,
    is_locked,
    locked_kong_refusal,
    ready_discards,
)
from services.rules.domain.win_situation import win_option, win_refusal
from shared.errors import FailedPrecondition
from shared.hand import HandType
from shared.hand.preset_hands import QIAOMA, classify_hand, hand_waits, is_winning, model_of
from shared.melds import Meld, MeldKind
from shared.table import (
    NUM_SEATS,
    LastActionKind,
    OwnTurnOptions,
    TableSnapshot,
    WinKind,
    WinOption,
    check_seat,
    is_wild_tile,
    visible_tiles,
    wild_hand,
)
from shared.tile_set import tile_set_of
from shared.tiles import NUM_FLOWERS, NUM_KINDS, WILDCARD, format_tile

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_HAND_EIGHT_FLOWERS: Final = HandType.EIGHT_FLOWERS
_LAST_CHOW: Final = LastActionKind.CHOW
_LAST_DEAL: Final = LastActionKind.DEAL
_LAST_DRAW: Final = LastActionKind.DRAW
_LAST_PONG: Final = LastActionKind.PONG
_LAST_REPLACEMENT_DRAW: Final = LastActionKind.REPLACEMENT_DRAW
_MELD_ADDED_KONG: Final = MeldKind.ADDED_KONG
_MELD_CONCEALED_KONG: Final = MeldKind.CONCEALED_KONG
_MELD_PONG: Final = MeldKind.PONG
_WIN_EIGHT_FLOWERS: Final = WinKind.EIGHT_FLOWERS
_WIN_SELF_DRAW: Final = WinKind.SELF_DRAW

_DRAWN: Final = (_LAST_DEAL, _LAST_DRAW, _LAST_REPLACEMENT_DRAW)
_OWN_TURN: Final = (*_DRAWN, _LAST_CHOW, _LAST_PONG)
# OwnTurnOptions (a named tuple) by tuple.__new__ directly: its own __new__ is Python code.
_new_options: Final = functools.partial(tuple.__new__, OwnTurnOptions)


def turn_refusal(snap: TableSnapshot, seat: int) -> str | None:
    """Why it is not ``seat``'s own turn (None: it is)."""
    last = snap.last
    if last.kind not in _OWN_TURN:
        return (
            f"seat {seat} cannot act on its own turn: {format_tile(last.tile or 0)} "
            f"({last.kind.label} by seat {last.seat}) is being claimed"
        )
    if last.seat != seat:
        return f"it is seat {last.seat}'s turn, not seat {seat}'s"
    return None


def _turn_began_with_draw(snap: TableSnapshot) -> bool:
    """A turn that began with a draw (or the dealer's first turn) allows kongs and self-draw
    wins; after a chow or pong the seat only discards (RULES §4)."""
    return snap.last.kind in _DRAWN


def drawn_tile(snap: TableSnapshot) -> int | None:
    """The tile drawn this turn, if the turn began with a draw."""
    if snap.last.kind in (_LAST_DRAW, _LAST_REPLACEMENT_DRAW):
        return snap.last.tile
    return None


def _waiting_before_draw(snap: TableSnapshot, seat: int) -> list[int]:
    """The natural counts before this turn's draw (a drawn 百搭 leaves them as they are)."""
    counts = list(snap.seats[seat].concealed)
    tile = drawn_tile(snap)
    if tile is not None and tile != WILDCARD:
        counts[tile] -= 1
    return counts


def discard_refusal(snap: TableSnapshot, seat: int, tile: int) -> str | None:
    st = snap.seats[seat]
    if not st.holds(tile):
        return f"seat {seat} does not hold {format_tile(tile)}"
    if is_wild_tile(snap, tile) and not tile_set_of(snap.ruleset).wildcard_discard:
        return "a 百搭 may not be discarded here (baida_tiles.wildcard_discard is false)"
    drawn = drawn_tile(snap)
    if is_locked(st, snap.ruleset) and drawn is not None and tile != drawn:
        return (
            f"seat {seat} has declared ready (敲) and must discard the drawn "
            f"{format_tile(drawn)}, not {format_tile(tile)}"
        )
    return None


def allowed_discards(snap: TableSnapshot, seat: int) -> tuple[int, ...]:
    """The kinds :func:`discard_refusal` allows, without asking it kind by kind: every kind
    held, or after 敲 (with a drawn tile) the drawn tile only."""
    st = snap.seats[seat]
    drawn = drawn_tile(snap)
    if drawn is not None and is_locked(st, snap.ruleset):
        return (drawn,) if st.holds(drawn) else ()
    kinds = _held_kinds(st.concealed)
    if not st.wildcards and snap.wild_kind is None:
        return kinds
    if not tile_set_of(snap.ruleset).wildcard_discard:
        return tuple(k for k in kinds if k != snap.wild_kind)
    return (*kinds, WILDCARD) if st.wildcards else kinds


def _held_kinds(counts: tuple[int, ...]) -> tuple[int, ...]:
    """The kinds with a count, in order: a native loop, compiled, several times cheaper than
    ``tuple(compress(range(NUM_KINDS), counts))``."""
    held = []
    for k in range(NUM_KINDS):
        if counts[k]:
            held.append(k)
    return tuple(held)


def _holds_four(counts: tuple[int, ...]) -> bool:
    """``4 in counts``, compiled to a native loop (``in`` compares object by object)."""
    return any(n == 4 for n in counts)


def declare_ready_refusal(snap: TableSnapshot, seat: int, tile: int) -> str | None:
    """敲 with the discard of ``tile``: legal only if it leaves a non-empty wait."""
    st = snap.seats[seat]
    if not declaration_required(snap.ruleset):
        return "this ruleset needs no declaration (ready.require_declare_ready is false)"
    if st.declared_ready:
        return f"seat {seat} has already declared ready (敲)"
    refusal = discard_refusal(snap, seat, tile)
    if refusal:
        return refusal
    counts = list(st.concealed)
    counts[tile] -= 1
    if not hand_waits(counts, st.melds, snap.ruleset):
        return f"discarding {format_tile(tile)} leaves seat {seat} waiting on no winning tile"
    return None


def _kong_common_refusal(snap: TableSnapshot, seat: int) -> str | None:
    if not _turn_began_with_draw(snap):
        return f"seat {seat} may only discard after a {snap.last.kind.label}"
    if snap.drawable <= 0:
        return "no tile is left for the replacement draw a kong needs"
    return None


def concealed_kong_refusal(snap: TableSnapshot, seat: int, tile: int) -> str | None:
    """暗杠: four of ``tile`` held; after 敲 only if the waits stay the same."""
    refusal = _kong_common_refusal(snap, seat)
    if refusal:
        return refusal
    st = snap.seats[seat]
    if tile == snap.wild_kind:
        return f"{format_tile(tile)} is 百搭 this hand: a 百搭 is never konged"
    if st.concealed[tile] != 4:
        return f"seat {seat} holds {st.concealed[tile]} of {format_tile(tile)}, not 4"
    after = list(st.concealed)
    after[tile] = 0
    melds = (*st.melds, Meld(_MELD_CONCEALED_KONG, (tile,) * 4))
    before = _waiting_before_draw(snap, seat)
    return locked_kong_refusal(seat, st, snap.ruleset, tile, before, after, melds)


def added_kong_refusal(snap: TableSnapshot, seat: int, tile: int) -> str | None:
    """上杠: add a held ``tile`` to an own pong; after 敲 only if the waits stay the same."""
    refusal = _kong_common_refusal(snap, seat)
    if refusal:
        return refusal
    st = snap.seats[seat]
    pong = next((m for m in st.melds if m.kind is _MELD_PONG and m.tiles[0] == tile), None)
    if pong is None:
        return f"seat {seat} has no pong of {format_tile(tile)} to add to"
    if not st.concealed[tile]:
        return f"seat {seat} does not hold a fourth {format_tile(tile)}"
    after = list(st.concealed)
    after[tile] -= 1
    melds = tuple(
        Meld(_MELD_ADDED_KONG, (tile,) * 4, m.from_seat) if m is pong else m for m in st.melds
    )
    before = _waiting_before_draw(snap, seat)
    return locked_kong_refusal(seat, st, snap.ruleset, tile, before, after, melds)


def self_draw_win(snap: TableSnapshot, seat: int) -> tuple[WinOption | None, str | None]:
    """The shape win on the seat's own turn, and why it may not be declared (if so)."""
    if not _turn_began_with_draw(snap):
        return None, f"seat {seat} did not draw this turn"
    option = _self_draw_option(snap, seat)
    if option is None:
        return None, f"seat {seat}'s hand is not an allowed winning hand"
    return option, win_refusal(snap, seat, option)


def _self_draw_option(snap: TableSnapshot, seat: int) -> WinOption | None:
    """The self-draw win the hand makes (whether or not it may be declared), or None; for a
    turn that began with a draw."""
    st = snap.seats[seat]
    ruleset = snap.ruleset
    if snap.wild_kind is None:  # wild_hand(), inlined for the usual hand: no flipped 百搭
        counts: Sequence[int] = st.concealed
        jokers = st.wildcards
    else:
        counts, jokers = wild_hand(snap, st)
    visible = visible_tiles(snap, seat) if jokers else None  # no fifth copies: what is seen
    if not is_winning(counts, st.melds, ruleset, jokers, visible):  # quick scans reject most
        return None
    hand = classify_hand(counts, st.melds, ruleset, jokers, visible)
    if hand is None:
        return None
    tile = drawn_tile(snap)
    waiting = _waiting_before_draw(snap, seat)
    if tile is None:
        # The dealer's initial 14 (天胡) has no drawn tile: its right-most tile stands for the
        # winning tile, so the win is reported and settled like any other (13 tiles + 1).
        if jokers:
            tile = WILDCARD if st.wildcards else snap.wild_kind
        else:
            tile = max(k for k in range(NUM_KINDS) if st.concealed[k])
            waiting[tile] -= 1
    return win_option(snap, seat, hand, _WIN_SELF_DRAW, tile, waiting)


def eight_flowers_win(snap: TableSnapshot, seat: int) -> WinOption | None:
    """八花齐 on the seat's own turn (after the draw that brought the eighth flower); the
    shanghai-old and -baida games have no 八花齐 (RULES-presets §13.1)."""
    if not _turn_began_with_draw(snap) or not has_eight_flowers(snap.seats[seat]):
        return None
    if model_of(snap.ruleset) != QIAOMA:
        return None
    return WinOption(hand=_HAND_EIGHT_FLOWERS, kind=_WIN_EIGHT_FLOWERS)


def own_turn_options(snap: TableSnapshot, seat: int) -> OwnTurnOptions:
    """Everything ``seat`` may do now. FailedPrecondition when it is not the seat's own turn."""
    if type(seat) is not int or not 0 <= seat < NUM_SEATS:  # check_seat() only if it refuses
        check_seat(seat)
    refusal = turn_refusal(snap, seat)
    if refusal:
        raise FailedPrecondition(refusal, seat=seat)
    st = snap.seats[seat]
    counts = st.concealed
    # Kongs and wins are filtered by their rule's ``*_refusal`` (so the options are exactly
    # what validation accepts), tried only on the kinds that pass the rule's first, cheap
    # condition: no refusal message is built for the many kinds that plainly do not qualify.
    discards = allowed_discards(snap, seat)
    ready: tuple[int, ...] = ()
    if declaration_required(snap.ruleset) and not st.declared_ready:
        ready = ready_discards(counts, st.melds, snap.ruleset)
    concealed: tuple[int, ...] = ()
    if _holds_four(counts):
        concealed = tuple(
            k
            for k, n in enumerate(counts)
            if n == 4 and concealed_kong_refusal(snap, seat, k) is None
        )
    added: tuple[int, ...] = ()
    if st.melds:
        added = tuple(
            m.tiles[0]
            for m in st.melds
            if m.kind is _MELD_PONG
            and counts[m.tiles[0]]
            and added_kong_refusal(snap, seat, m.tiles[0]) is None
        )
    wins: tuple[WinOption, ...] = ()
    if _turn_began_with_draw(snap):
        option = _self_draw_option(snap, seat)
        if option is not None and win_refusal(snap, seat, option) is None:
            wins = (option,)
        if len(st.flowers) >= NUM_FLOWERS:  # 八花齐 needs all eight
            flowers = eight_flowers_win(snap, seat)
            if flowers is not None:
                wins = (*wins, flowers)
    return _new_options((seat, discards, ready, concealed, added, wins))  # in field order
