"""Claim options on a discard or an added kong for every other seat, in one call (RULES §4).

On a discard: 胡 win (with 敲 and 漏胡 applied), 碰 pong and 明杠 exposed kong for any other
seat, 吃 chow for the discarder's 下家 only (every run shape the tile can make). On an added
kong: only 抢杠, a win on the added tile; concealed kongs and kongs from a discard are never
robbed, since they are never offered for claiming.

As in :mod:`.own_turn`, each rule is a ``*_refusal`` function (None = legal) shared by the
options and by validation, and the options ask a rule only when its first, cheap condition
holds (the tile completes the hand; two or three of it held; the chow's other two held), so
the usual seat that can do nothing with the tile costs no message formatting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from services.rules.domain.readiness import (
    declaration_required,
    is_locked,
    locked_kong_refusal,
)
from services.rules.domain.win_situation import (
    missed_win_refusal,
    ready_refusal,
    win_option,
    win_refusal,
)
from shared.errors import FailedPrecondition
from shared.hand import classify, is_winning_hand
from shared.hand.preset_hands import BAIDA, QIAOMA, classify_hand, model_of
from shared.melds import Meld, MeldKind
from shared.per_ruleset import PerRuleset
from shared.ruleset import Ruleset
from shared.table import (
    NUM_SEATS,
    ClaimOptions,
    LastActionKind,
    SeatState,
    TableSnapshot,
    WinKind,
    WinOption,
    is_wild_tile,
    next_seat,
    seats_from,
)
from shared.tiles import NUM_KINDS, format_tile, format_tiles, is_suited, rank_of

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_LAST_ADDED_KONG: Final = LastActionKind.ADDED_KONG
_LAST_DISCARD: Final = LastActionKind.DISCARD
_MELD_EXPOSED_KONG: Final = MeldKind.EXPOSED_KONG
_WIN_DISCARD: Final = WinKind.DISCARD
_WIN_ROB_KONG: Final = WinKind.ROB_KONG

_CLAIMABLE: Final = (_LAST_DISCARD, _LAST_ADDED_KONG)
_HONOR_BASE: Final = 27
# The lows of the runs (in one suit) a suited tile can be part of.
_RUN_LOWS: Final = tuple(
    tuple(low for low in range(k - 2, k + 1) if low >= 9 * (k // 9) and low % 9 <= 6)
    for k in range(_HONOR_BASE)
)
_NO_CLAIM: Final = tuple(ClaimOptions(seat=s) for s in range(NUM_SEATS))  # immutable, shared
_SEATS_AFTER: Final = tuple(tuple(seats_from(s)) for s in range(NUM_SEATS))


class _WinFlags:
    """What decides, before any hand check, that a claim win would be refused for want of 敲
    (:func:`ready_refusal`), looked up once per ruleset object."""

    __slots__ = ("heavenly_earthly", "needs_ready")

    def __init__(self, ruleset: Ruleset) -> None:
        try:
            self.needs_ready = declaration_required(ruleset)
            self.heavenly_earthly = bool(ruleset.hands.heavenly_earthly)
        except AttributeError:  # a ruleset without these options: never skip the hand check
            self.needs_ready, self.heavenly_earthly = False, True


_WIN_FLAGS: Final = PerRuleset(_WinFlags)


def claim_refusal(snap: TableSnapshot, seat: int) -> str | None:
    """Why ``seat`` cannot claim anything now (None: it may consider the tile)."""
    last = snap.last
    if last.kind not in _CLAIMABLE:
        return f"nothing to claim: the last action is a {last.kind.label} by seat {last.seat}"
    if seat == last.seat:
        return f"seat {seat} cannot claim its own {last.kind.label.replace('_', ' ')}"
    if is_wild_tile(snap, last.tile):
        return f"a discarded {format_tile(last.tile or 0)} (百搭) can never be claimed"
    return None


def _tile(snap: TableSnapshot) -> int:
    assert snap.last.tile is not None
    return snap.last.tile


def _completing_win(snap: TableSnapshot, seat: int) -> WinOption | None:
    """The win the claimed tile makes for ``seat`` (another seat than the one whose tile it
    is), whether or not it may be declared; None when the tile does not complete the hand."""
    tile = snap.last.tile
    assert tile is not None
    return _win_on(snap, seat, snap.seats[seat], tile)


def _win_on(snap: TableSnapshot, seat: int, st: SeatState, tile: int) -> WinOption | None:
    """The win ``tile`` makes for ``seat`` on a discard or an added kong; never under the 百搭
    model, which wins by self-draw only (no 冲, no 抢杠: RULES-presets §13.B.4)."""
    ruleset = snap.ruleset
    model = model_of(ruleset)
    if model == BAIDA:
        return None
    counts = list(st.concealed)
    counts[tile] += 1
    if model == QIAOMA:  # the hot path as it was: scans, then the suit tables
        if not is_winning_hand(counts, st.melds, ruleset):
            return None
        hand = classify(counts, st.melds, ruleset)
    else:
        hand = classify_hand(counts, st.melds, ruleset, st.wildcards)
    if hand is None:
        return None
    kind = _WIN_ROB_KONG if snap.last.kind is _LAST_ADDED_KONG else _WIN_DISCARD
    return win_option(snap, seat, hand, kind, tile, st.concealed)


def claim_win(snap: TableSnapshot, seat: int) -> tuple[WinOption | None, str | None]:
    """The win on the claimed tile (冲 on a discard, 抢杠 on an added kong), and why it may not
    be declared (no 敲, 漏胡), if so."""
    refusal = claim_refusal(snap, seat)
    if refusal:
        return None, refusal
    option = _completing_win(snap, seat)
    if option is None:
        return None, f"{format_tile(_tile(snap))} does not complete seat {seat}'s hand"
    return option, win_refusal(snap, seat, option)


def _on_discard_refusal(snap: TableSnapshot, seat: int, what: str) -> str | None:
    refusal = claim_refusal(snap, seat)
    if refusal:
        return refusal
    if snap.last.kind is not _LAST_DISCARD:
        return f"an added kong can only be robbed by a win (抢杠), not claimed by a {what}"
    return None


def pong_refusal(snap: TableSnapshot, seat: int) -> str | None:
    refusal = _on_discard_refusal(snap, seat, "pong")
    if refusal:
        return refusal
    st = snap.seats[seat]
    tile = _tile(snap)
    if is_locked(st, snap.ruleset):
        return f"seat {seat} has declared ready (敲): no pong"
    if st.concealed[tile] < 2:
        return f"seat {seat} holds {st.concealed[tile]} of {format_tile(tile)}; a pong needs 2"
    return None


def exposed_kong_refusal(snap: TableSnapshot, seat: int) -> str | None:
    """明杠 from the discard: three held; after 敲 only if the waits stay the same."""
    refusal = _on_discard_refusal(snap, seat, "kong")
    if refusal:
        return refusal
    st = snap.seats[seat]
    tile = _tile(snap)
    if st.concealed[tile] != 3:
        return f"seat {seat} holds {st.concealed[tile]} of {format_tile(tile)}; a kong needs 3"
    if snap.drawable <= 0:
        return "no tile is left for the replacement draw a kong needs"
    after = list(st.concealed)
    after[tile] = 0
    melds = (*st.melds, Meld(_MELD_EXPOSED_KONG, (tile,) * 4, snap.last.seat))
    return locked_kong_refusal(seat, st, snap.ruleset, tile, st.concealed, after, melds)


def chow_refusal(snap: TableSnapshot, seat: int, low: int) -> str | None:
    """吃 the discard into the run ``low``, ``low+1``, ``low+2``: only the discarder's 下家,
    not after 敲, the run in one suit containing the tile, the other two held."""
    refusal = _on_discard_refusal(snap, seat, "chow")
    if refusal:
        return refusal
    tile = _tile(snap)
    if seat != next_seat(snap.last.seat):
        return (
            f"only seat {next_seat(snap.last.seat)}, the discarder's 下家, may chow; "
            f"seat {seat} may not"
        )
    st = snap.seats[seat]
    if is_locked(st, snap.ruleset):
        return f"seat {seat} has declared ready (敲): no chow"
    if not is_suited(tile):
        return f"{format_tile(tile)} is an honor: honors cannot chow"
    if not (low >= 0 and is_suited(low) and rank_of(low) <= 7 and low <= tile <= low + 2):
        return f"no run starting at {format_tile(low)} holds {format_tile(tile)}"
    for k in (low, low + 1, low + 2):
        if k == snap.wild_kind:
            return f"{format_tile(k)} is 百搭 this hand: a 百搭 is never chowed"
        if k != tile and not st.concealed[k]:
            run = format_tiles((low, low + 1, low + 2))
            return f"seat {seat} lacks {format_tile(k)} for the chow {run}"
    return None


def chow_lows(snap: TableSnapshot, seat: int) -> tuple[int, ...]:
    """Every run the seat may chow the discard into, by its lowest tile."""
    last = snap.last
    if last.kind is not _LAST_DISCARD or seat != next_seat(last.seat):
        return ()
    assert last.tile is not None
    return _chow_lows(snap, seat, snap.seats[seat].concealed, last.tile)


def _chow_lows(snap: TableSnapshot, seat: int, held: Sequence[int], tile: int) -> tuple[int, ...]:
    """:func:`chow_lows` for the discarder's 下家 on a discard: chow_refusal decides, asked only
    about runs in the tile's suit whose other two tiles are held."""
    if tile >= _HONOR_BASE:  # honors cannot chow
        return ()
    lows = []
    for low in _RUN_LOWS[tile]:
        if (
            (low == tile or held[low])
            and (low + 1 == tile or held[low + 1])
            and (low + 2 == tile or held[low + 2])
            and chow_refusal(snap, seat, low) is None
        ):
            lows.append(low)
    return tuple(lows)


def seat_claim_options(snap: TableSnapshot, seat: int) -> ClaimOptions:
    """What ``seat`` may do with the claimed tile."""
    if claim_refusal(snap, seat):
        return ClaimOptions(seat=seat)
    last = snap.last
    assert last.tile is not None
    chower = next_seat(last.seat) if last.kind is _LAST_DISCARD else -1
    return _seat_options(snap, seat, last.tile, seat == chower)


def _seat_options(snap: TableSnapshot, seat: int, tile: int, may_chow: bool) -> ClaimOptions:
    """Each option is decided by its rule's ``*_refusal`` (as validation is), asked only when
    the rule's first, cheap condition holds (the tile completes the hand; two or three of it
    held; the chow's other two held), so no refusal message is built for the usual seat that
    can do nothing with the tile. ``may_chow``: the seat is the discarder's 下家 on a discard."""
    if tile >= NUM_KINDS or tile == snap.wild_kind:  # a 百搭 is never claimed
        return _NO_CLAIM[seat]
    st = snap.seats[seat]
    held = st.concealed[tile]
    flags = _WIN_FLAGS.get(snap.ruleset)
    if (
        flags.needs_ready
        and not st.declared_ready
        and not (flags.heavenly_earthly and snap.first_go_around)
    ):
        # no 敲, and no 地胡 possible: ready_refusal refuses any win on a claimed tile (a
        # discard or robbing win is never 天胡 or 八花齐), so the hand is not checked at all
        win: WinOption | None = None
    else:
        win = _win_on(snap, seat, st, tile)
    missed = False
    chows = _chow_lows(snap, seat, st.concealed, tile) if may_chow else ()
    if win is None and held < 2 and not chows:
        return _NO_CLAIM[seat]
    if win is not None and ready_refusal(snap, seat, win) is not None:
        win = None
    elif win is not None and missed_win_refusal(snap, seat, win) is not None:
        win, missed = None, True
    return ClaimOptions(
        seat=seat,
        win=win,
        pong=held >= 2 and pong_refusal(snap, seat) is None,
        exposed_kong=held == 3 and exposed_kong_refusal(snap, seat) is None,
        chows=chows,
        missed_win=missed,
    )


def claim_options(snap: TableSnapshot) -> tuple[ClaimOptions, ...]:
    """Options of every other seat, in turn order from the discarder's 下家.
    FailedPrecondition when the last action is neither a discard nor an added kong."""
    last = snap.last
    if last.kind not in _CLAIMABLE:
        raise FailedPrecondition(
            f"nothing to claim: the last action is a {last.kind.label} by seat {last.seat}"
        )
    tile = last.tile
    assert tile is not None
    # seats_from(last.seat), by its table here (a Python call from compiled code otherwise):
    # the discarder's 下家 first, which may chow
    first, second, third = _SEATS_AFTER[last.seat % NUM_SEATS]
    on_discard = last.kind is _LAST_DISCARD
    return (
        _seat_options(snap, first, tile, on_discard),
        _seat_options(snap, second, tile, False),
        _seat_options(snap, third, tile, False),
    )


def claim_options_by_seat(snap: TableSnapshot) -> dict[int, ClaimOptions]:
    """:func:`claim_options` keyed by seat, as the gateway's rules port answers (built here,
    compiled, rather than by a comprehension in the Python adapter on every discard)."""
    return {o.seat: o for o in claim_options(snap)}
