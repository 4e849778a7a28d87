"""A finished hand as one seat saw it (牌谱, ``GetReplay``): the hand's events out of its table's
log, each projected for the seat (:func:`.events.views.project`, the same copy its stream gave).

Who may ask is decided here from the log alone: the seat the player held when the hand was
dealt (the table's seats at its start, then each ``SeatChanged`` a player joined by). A hand
still being played is refused: its replay would show nothing the stream did not, but a page
stepping through a past hand has no use for one that is not over.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.events.views import project
from shared.errors import FailedPrecondition, NotFound, PermissionDenied


@dataclass(frozen=True)
class SeatReplay:
    """The seat the player held, the seats' names at the table's start and the hand's events:
    (the logged event, the seat's copy of it)."""

    seat: int
    names: tuple[str, ...]
    events: tuple[tuple[LoggedEvent, K.TableEvent], ...]


def _finished(ev: K.TableEvent, hand_id: str) -> bool:
    """The hand's own end (an escape's result is a seat leaving; the hand goes on)."""
    return isinstance(ev, K.HandResult) and ev.hand_id == hand_id and ev.outcome != "escape"


def seat_replay(log: Iterable[LoggedEvent], player_id: str, hand_id: str) -> SeatReplay:
    """``hand_id``'s events as ``player_id``'s seat saw them (see the module docstring)."""
    players: list[str] = []
    names: tuple[str, ...] = ()
    seat: int | None = None
    dealt = finished = False
    mine: list[LoggedEvent] = []
    for logged in log:
        ev = logged.event
        if isinstance(ev, K.TableStarted):
            players = [s.player_id for s in ev.seats]
            names = tuple(s.display_name for s in ev.seats)
        elif isinstance(ev, K.SeatChanged) and ev.reason == "joined" and ev.player_id:
            players[ev.seat] = ev.player_id
        if getattr(ev, "hand_id", "") != hand_id:
            continue
        if isinstance(ev, K.HandStarted) and not dealt:
            dealt = True
            seat = players.index(player_id) if player_id in players else None
        finished = finished or _finished(ev, hand_id)
        mine.append(logged)
    if not dealt:
        raise NotFound(f"the table has no hand {hand_id}", reason="NO_SUCH_HAND", field="hand_id")
    if seat is None:
        raise PermissionDenied(
            f"{player_id} held no seat at hand {hand_id}", reason="NOT_YOUR_HAND", field="hand_id"
        )
    if not finished:
        raise FailedPrecondition(
            f"hand {hand_id} is still being played: its replay comes when it ends",
            reason="HAND_NOT_FINISHED",
            field="hand_id",
        )
    seen = ((logged, project(logged.event, seat)) for logged in mine)
    return SeatReplay(seat, names, tuple((lg, ev) for lg, ev in seen if ev is not None))
