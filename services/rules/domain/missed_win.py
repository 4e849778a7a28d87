"""漏胡 passing a win (RULES §7).

A ready player who passes a tile that would win may not win on that tile kind, discarded (or
added to a kong) by anyone, until the player next moves (动牌: draws, chows, pongs or kongs). It
applies to that one kind only. The marks live on :class:`shared.table.SeatState`
(``missed_wins``); :meth:`SeatState.with_missed_win` adds one and :meth:`SeatState.moved` clears
them. The gateway calls :func:`after_move` whenever a seat draws, chows, pongs or kongs and
:func:`after_pass` with the seats a claim resolution reports.
"""

from __future__ import annotations

from shared.table import SeatState, TableSnapshot


def is_blocked(seat: SeatState, tile: int) -> bool:
    """Does a 漏胡 mark stop this seat winning on ``tile``?"""
    return tile in seat.missed_wins


def after_pass(snap: TableSnapshot, seats: tuple[int, ...], tile: int) -> TableSnapshot:
    """The snapshot with a 漏胡 mark on ``tile`` for each seat that passed a win on it."""
    for s in seats:
        snap = snap.with_seat(s, snap.seats[s].with_missed_win(tile))
    return snap


def after_move(snap: TableSnapshot, seat: int) -> TableSnapshot:
    """The snapshot after ``seat`` drew, chowed, ponged or konged: its 漏胡 marks are gone."""
    return snap.with_seat(seat, snap.seats[seat].moved())
