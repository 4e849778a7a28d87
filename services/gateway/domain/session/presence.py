"""掉线 (disconnection), RULES §9: a seated player who is gone escapes, after a grace.

A player counts as disconnected once no stream of theirs is open (Subscribe, or the web port's
streams), they have made no call, and the ruleset's ``timers.disconnect_grace_seconds`` has
passed since the later of the two. Then:

* during a hand, ``seat_changed`` ``disconnected`` is announced and the seat is on 托管 at once
  (a bot answers its decisions); the player stays liable for the hand's result. Not back by the
  hand's end, they are treated as escaped at that moment, exactly as a Leave
  (:func:`.escape.escape`, reason ``disconnected``): the penalty, its 75/25 split, the 荒番
  reset, and a bot plays the seat for the rest of the table;
* between hands (or while the table waits for open seats) they leave as a Leave does then,
  without a penalty (nothing is at stake), and a bot takes the seat.

A player who comes back before that (a stream opened, or any call with their seat token) keeps
the seat with no penalty: ``seat_changed`` ``reconnected``, and the 托管 the disconnection
started ends.

Who is connected is the runtime's to say (:func:`stream_opened`, :func:`stream_closed`,
:func:`called`), and only once it watches the table (:func:`watch`: the gateway, which sees the
streams and calls; in-process play has no connections). Streams are the owning replica's, so
nothing of them is in the log: a replica that takes a table over starts every seat's grace
afresh (their streams move to it). The decisions are events (``disconnected``,
``reconnected``, the escape), so a table rebuilt from its log (:mod:`..restore`) holds the same
disconnected seats and settles them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from services.gateway.domain.clock import Timer
from services.gateway.domain.events.kinds import SeatChanged
from services.gateway.domain.session import decisions, escape
from services.gateway.domain.session.config import (
    DETACHED,
    FINISHED,
    HALTED,
    PLAYING,
    RETRY_ATTEMPTS,
    RETRY_BACKOFF_MS,
)
from shared.table import NUM_SEATS

if TYPE_CHECKING:
    from services.gateway.domain.hand import HandEngine
    from services.gateway.domain.session.table import TableSession

DISCONNECTED, RECONNECTED = "disconnected", "reconnected"  # SeatChanged.reason
SUSPENDED = "suspended"  # SeatChanged.reason: an operator suspended the seat's player


@dataclass
class Presence:
    """Who is connected to the table (the runtime's; not in the log) and who was found
    disconnected during the running hand (from the log's events)."""

    watching: bool = False
    streams: list[int] = field(default_factory=lambda: [0] * NUM_SEATS)
    last_call_ms: list[int] = field(default_factory=lambda: [0] * NUM_SEATS)
    timers: dict[int, Timer] = field(default_factory=dict)
    disconnected: set[int] = field(default_factory=set)
    suspended: set[int] = field(default_factory=set)  # seats of suspended players (the log's)


def grace_ms(t: TableSession) -> int:
    return int(t.config.ruleset.timers.disconnect_grace_seconds) * 1000


def _player(t: TableSession, seat: int) -> bool:
    """A seat a person still holds (not a bot, not left, not bankrupt, not open)."""
    s = t.seats[seat]
    return bool(s.player_id) and not (s.bot or s.left) and seat not in t.bankrupt


def _over(t: TableSession) -> bool:
    return t.phase in (FINISHED, HALTED, DETACHED)


def watch(t: TableSession) -> None:
    """Start watching the players' connections (a new table, or one taken over from its
    log): every seat held by a person has its grace from now, until a stream opens."""
    p = t.presence
    p.watching = True
    now = t.scheduler.now_ms()
    for seat in range(NUM_SEATS):
        p.last_call_ms[seat] = now
        _arm(t, seat)


def _arm(t: TableSession, seat: int, delay_ms: int | None = None) -> None:
    p = t.presence
    old = p.timers.pop(seat, None)
    if old is not None:
        old.cancel()
    if _over(t) or not _player(t, seat) or p.streams[seat] > 0:
        return
    delay = grace_ms(t) if delay_ms is None else delay_ms
    p.timers[seat] = t.scheduler.call_later(delay, lambda: _grace_over(t, seat))


def joined(t: TableSession, seat: int) -> None:
    """A player took an open seat: its grace runs from now, until a stream opens."""
    if t.presence.watching:
        t.presence.last_call_ms[seat] = t.scheduler.now_ms()
        _arm(t, seat)


def stream_opened(t: TableSession, seat: int) -> None:
    """A stream of ``seat``'s player opened: connected (back, if it was disconnected)."""
    p = t.presence
    p.streams[seat] += 1
    old = p.timers.pop(seat, None)
    if old is not None:
        old.cancel()
    came_back(t, seat)


def stream_closed(t: TableSession, seat: int) -> None:
    """A stream of ``seat``'s player ended: with none left, its grace runs from now."""
    p = t.presence
    p.streams[seat] = max(0, p.streams[seat] - 1)
    if p.streams[seat] == 0 and p.watching:
        p.last_call_ms[seat] = t.scheduler.now_ms()
        _arm(t, seat)


def called(t: TableSession, seat: int) -> bool:
    """A call with ``seat``'s token: its grace runs from now (the timer, armed, looks at this
    when it runs out: nothing is rescheduled per call). True when the seat was disconnected:
    the caller then runs :func:`came_back` as a step of the table."""
    p = t.presence
    p.last_call_ms[seat] = t.scheduler.now_ms()
    return seat in p.disconnected


def came_back(t: TableSession, seat: int) -> None:
    """``seat``'s player is back before the hand ended: keeps the seat, no penalty; the 托管
    the disconnection started ends."""
    p = t.presence
    if seat not in p.disconnected or seat in p.suspended or _over(t) or not _player(t, seat):
        return
    p.disconnected.discard(seat)
    t.emit(_changed(t, seat, RECONNECTED))
    if t.seats[seat].auto_play:
        decisions.resume(t, seat)


def _grace_over(t: TableSession, seat: int) -> None:
    p = t.presence
    p.timers.pop(seat, None)
    if _over(t) or not _player(t, seat) or p.streams[seat] > 0 or seat in p.disconnected:
        return
    left_ms = p.last_call_ms[seat] + grace_ms(t) - t.scheduler.now_ms()
    if left_ms > 0:  # a call since the timer was armed
        _arm(t, seat, left_ms)
        return
    disconnect(t, seat)


def disconnect(t: TableSession, seat: int, why: str = DISCONNECTED) -> None:
    """``seat``'s grace is over: on 托管 until the hand ends (then escaped, :func:`hand_over`),
    or, with no hand running, gone now without a penalty. ``why``: :data:`DISCONNECTED`, or
    :data:`SUSPENDED` (:func:`suspend`)."""
    hand = t.hand
    in_hand = t.phase == PLAYING and hand is not None and not hand.finished and bool(hand.hand_id)
    t.emit(_changed(t, seat, why))
    if not in_hand:
        escape.escape(t, seat, escape.DISCONNECTED)
        return
    assert hand is not None
    t.presence.disconnected.add(seat)
    s = t.seats[seat]
    if not s.auto_play:
        s.auto_play = True
        t.auto_play_hidden.discard(seat)
        t.emit(decisions.auto_play_change(t, seat, True))
    owed = hand.pending.get(seat)
    if owed is not None:  # its decision now is the bot's, as a 托管 seat's is
        seq = owed.sequence
        t.scheduler.call_later(t.config.auto_play_delay_ms, lambda: decisions.bot(t, seat, seq))


def suspend(t: TableSession, seat: int) -> bool:
    """An operator suspended ``seat``'s player: the seat never comes back (its token is refused
    ``PLAYER_SUSPENDED`` by the gateway); it goes to 托管 until the running hand ends and then
    to a bot, as a disconnected seat does (liable for the hand and the escape penalty), or to a
    bot at once between hands. False when it was suspended already or holds no player."""
    p = t.presence
    if seat in p.suspended or _over(t):
        return False
    p.suspended.add(seat)
    if not _player(t, seat):
        return False
    if seat in p.disconnected:  # on 托管 already: the hand's end hands it to a bot
        t.emit(_changed(t, seat, SUSPENDED))
        return True
    disconnect(t, seat, SUSPENDED)
    return True


def hand_over(t: TableSession, hand: HandEngine) -> None:
    """The hand ended: each seat still disconnected escapes now, liable for the hand just
    settled and for the penalty on top (after the hand's own result in the log)."""
    for seat in sorted(t.presence.disconnected):
        _escape_after(t, seat, hand, 1)


def _escape_after(t: TableSession, seat: int, hand: HandEngine, attempt: int) -> None:
    """The escape of a seat not back by the end of ``hand``; scoring unavailable, retried as
    an engine step is (RETRY_BACKOFF_MS × attempt), any other failure halts the table."""
    p = t.presence
    if seat not in p.disconnected or _over(t) or not _player(t, seat):
        p.disconnected.discard(seat)
        return
    try:
        escape.escape(t, seat, escape.DISCONNECTED, settled=hand)
    except Exception as exc:
        if t.failed(attempt, exc):
            delay = RETRY_BACKOFF_MS * min(attempt, RETRY_ATTEMPTS)
            t.scheduler.call_later(delay, lambda: _escape_after(t, seat, hand, attempt + 1))
        return
    p.disconnected.discard(seat)


def restored(t: TableSession, ev: SeatChanged) -> None:
    """The log's ``disconnected`` / ``reconnected`` / ``left`` of a seat, read back."""
    if ev.reason == SUSPENDED:
        t.presence.suspended.add(ev.seat)
        t.presence.disconnected.add(ev.seat)
    elif ev.reason == DISCONNECTED:
        t.presence.disconnected.add(ev.seat)
    elif ev.reason in (RECONNECTED, "left"):
        t.presence.disconnected.discard(ev.seat)


def _changed(t: TableSession, seat: int, reason: str) -> SeatChanged:
    s = t.seats[seat]
    hand_id, number = t.head()
    return SeatChanged(
        seat=seat,
        player_id=s.player_id,
        bot=False,
        reason=reason,
        auto_play=s.auto_play,
        hand_id=hand_id,
        hand_number=number,
    )
