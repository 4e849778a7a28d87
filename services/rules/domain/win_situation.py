"""Win situations (RULES §6) that scoring needs, and who may declare a win at all.

* 自摸 self-draw, 冲 discard, 抢杠 robbing an added kong (:class:`shared.table.WinKind`);
* 杠开 winning on a replacement draw after a kong or a flower;
* 大吊车 every other tile is in laid-down melds and the win completes the single-tile pair wait
  (a concealed kong among them counts only with ``scoring.big_hanging_concealed_kong``);
* 门清 no chow, pong or exposed/added kong (concealed kongs allowed);
* 天胡 / 地胡 for presets with ``hands.heavenly_earthly`` (shanghai-classic): the dealer wins on
  the initial 14 / a non-dealer wins during the first go-around. Both win without 敲.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from services.rules.domain.missed_win import is_blocked
from services.rules.domain.readiness import declaration_required
from shared.hand import HandType
from shared.ruleset import Ruleset
from shared.table import LastActionKind, SeatState, TableSnapshot, WinKind, WinOption
from shared.tiles import format_tile

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_LAST_REPLACEMENT_DRAW: Final = LastActionKind.REPLACEMENT_DRAW
_WIN_DISCARD: Final = WinKind.DISCARD
_WIN_EIGHT_FLOWERS: Final = WinKind.EIGHT_FLOWERS
_WIN_ROB_KONG: Final = WinKind.ROB_KONG
_WIN_SELF_DRAW: Final = WinKind.SELF_DRAW


def is_replacement_win(snap: TableSnapshot, kind: WinKind) -> bool:
    """杠开 (杠上花): a self-draw on the replacement tile after a kong or a flower."""
    return kind is _WIN_SELF_DRAW and snap.last.kind is _LAST_REPLACEMENT_DRAW


def is_big_hanging(
    seat: SeatState, waiting: Sequence[int], win_tile: int | None, ruleset: Ruleset
) -> bool:
    """大吊车: one tile left in hand, every set a laid-down meld, the win tile pairs it. A
    concealed kong counts as laid down only with ``scoring.big_hanging_concealed_kong``."""
    concealed_kong_ok = bool(ruleset.scoring.get("big_hanging_concealed_kong", False))
    return (
        win_tile is not None
        and 0 <= win_tile < len(waiting)
        and seat.wildcards == 0
        and sum(waiting) == 1
        and waiting[win_tile] == 1
        and all(m.kind.is_exposed or concealed_kong_ok for m in seat.melds)
    )


def is_concealed_hand(seat: SeatState) -> bool:
    """门清: no chow, pong, exposed or added kong (concealed kongs are allowed)."""
    return not any(m.kind.is_exposed for m in seat.melds)


def _heavenly_earthly(snap: TableSnapshot) -> bool:
    return bool(snap.ruleset.hands.heavenly_earthly) and snap.first_go_around


def is_heavenly_win(snap: TableSnapshot, seat: int, kind: WinKind) -> bool:
    """天胡: the dealer wins on the initial 14 (before its first discard)."""
    return (
        _heavenly_earthly(snap)
        and seat == snap.dealer
        and kind is _WIN_SELF_DRAW
        and not snap.seats[seat].discards
    )


def is_earthly_win(snap: TableSnapshot, seat: int, kind: WinKind) -> bool:
    """地胡: a non-dealer wins during the first go-around."""
    return (
        _heavenly_earthly(snap) and seat != snap.dealer and kind in (_WIN_SELF_DRAW, _WIN_DISCARD)
    )


def win_option(
    snap: TableSnapshot,
    seat: int,
    hand: HandType,
    kind: WinKind,
    win_tile: int | None,
    waiting: Sequence[int],
) -> WinOption:
    """Describe a win: ``waiting`` is the hand before the win tile (13 − 3 × melds tiles)."""
    st = snap.seats[seat]
    return WinOption(
        hand=hand,
        kind=kind,
        win_tile=win_tile,
        replacement=is_replacement_win(snap, kind),
        big_hanging=is_big_hanging(st, waiting, win_tile, snap.ruleset),
        concealed_hand=is_concealed_hand(st),
        heavenly=is_heavenly_win(snap, seat, kind),
        earthly=is_earthly_win(snap, seat, kind),
    )


def ready_refusal(snap: TableSnapshot, seat: int, option: WinOption) -> str | None:
    """Why ``seat`` may not win for want of 敲 (八花齐, 天胡 and 地胡 need none)."""
    if option.kind is _WIN_EIGHT_FLOWERS or option.heavenly or option.earthly:
        return None
    if declaration_required(snap.ruleset) and not snap.seats[seat].declared_ready:
        return f"seat {seat} has not declared ready (敲) and may not win"
    return None


def missed_win_refusal(snap: TableSnapshot, seat: int, option: WinOption) -> str | None:
    """Why a 漏胡 mark stops ``seat`` winning on someone else's tile (discard or added kong)."""
    tile = option.win_tile
    if tile is None or option.kind not in (_WIN_DISCARD, _WIN_ROB_KONG):
        return None
    if is_blocked(snap.seats[seat], tile):
        return (
            f"seat {seat} passed a win on {format_tile(tile)} (漏胡) and may not win on it "
            "until it draws, chows, pongs or kongs"
        )
    return None


def win_refusal(snap: TableSnapshot, seat: int, option: WinOption) -> str | None:
    """Why ``seat`` may not declare this complete hand (None: it may)."""
    return ready_refusal(snap, seat, option) or missed_win_refusal(snap, seat, option)
