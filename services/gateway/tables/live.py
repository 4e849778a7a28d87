"""A live table in a replica's memory: its session behind a lock, the events of its current and
previous hand (older ones are read from the store), its request ids, the spectators it admits,
whether it is still owned, and what wakes its streams (threads wait on ``cond``, asyncio streams
on ``wakeup``)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.events.views import project
from services.gateway.domain.session import FINISHED, HALTED, TableSession
from services.gateway.tables.answer_early import WakeHold
from services.gateway.tables.records import RequestRecord


class LiveTable:
    def __init__(self, table_id: str, tag: str, report_hands: bool = True) -> None:
        self.id = table_id
        self.tag = tag
        self.report_hands = report_hands
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.wakeup = Wakeup()
        # (base, events): the events of the current and the previous hand, ``events[i].seq ==
        # base + i + 1`` (older ones are read from the store). One attribute, whose list only
        # grows until the pair is replaced, so a stream reads it without taking the lock.
        self.window: tuple[int, list[LoggedEvent]] = (0, [])
        self.hand_starts: list[int] = []
        # (seat, request id) -> its first result
        self.requests: dict[tuple[int, str], RequestRecord] = {}
        self.session: TableSession | None = None
        self.owned = True
        # Where the table came from when it was created by a caller without the internal token
        # (its client address, for the per-caller table limit); "" otherwise.
        self.creator = ""
        # seat -> the sequence of its latest decision event: its latest prompt, or the action
        # that answered it (the seat's own, the timer's or 托管's). A request whose last
        # sequence is older was decided on a stale state: ABORTED, even once the prompt is
        # gone (a late answer after the timer decided for the seat).
        self.last_decision: dict[int, int] = {}
        # The step running under the lock (StepWriter.step): its events, numbered on from
        # ``head``, and the records that go with them (outbox rows, request results), written
        # in one fenced transaction when it ends; then ``after_write`` runs. None outside one.
        self.unwritten: list[tuple[int, K.TableEvent]] | None = None
        self.unwritten_records: list[tuple[str, str, bytes]] = []
        self.after_write: list[Callable[[], None]] = []
        # A write of the running step that failed (the error its caller gets), None otherwise.
        self.write_failure: Exception | None = None
        # An answered Act's step holds its wake-up for the steps after it (:mod:`.answer_early`).
        self.wake_hold = WakeHold()
        # The ids of the spectators this table admits (each holds a token of its own; its
        # record is in the store, :mod:`.spectators`), and the lock that keeps their count
        # exact without holding up the table's own lock.
        self.spectators: set[str] = set()
        self.spectators_lock = threading.Lock()

    @property
    def live(self) -> bool:
        """Still playing or waiting for players (not finished, not halted)."""
        session = self.session
        return session is None or session.phase not in (FINISHED, HALTED)

    @property
    def head(self) -> int:
        base, events = self.window
        return base + len(events)

    @property
    def last_seq(self) -> int:
        """The last event's number, counting the running step's not yet written (what the
        engine and an Act's answer see; clients only ever see ``head``)."""
        return self.head + len(self.unwritten or ())

    def last_seen(self, viewer: int | None, upto: int) -> int:
        """The number of the last event up to ``upto`` (the running step's count too) that
        ``viewer`` (a seat, None: a spectator) sees: the only numbers a viewer is told. The
        log's head would count the prompts and answers of a claim window nobody else sees,
        and so tell how many seats could claim the discard (RULES §4 "Claim windows")."""
        head = self.head
        unwritten = self.unwritten or ()
        for seq in range(min(upto, head + len(unwritten)), head, -1):
            if project(unwritten[seq - head - 1][1], viewer) is not None:
                return seq
        base, events = self.window
        for e in reversed(events[: max(0, min(upto, head) - base)]):
            if project(e.event, viewer) is not None:
                return e.seq
        return min(upto, base)  # none held that the viewer sees: older ones were all read

    def after(self, index: int) -> list[LoggedEvent] | None:
        """The events held after sequence ``index`` (None: some are older than those held)."""
        base, events = self.window
        return events[index - base :] if index >= base else None

    def keep(self, e: LoggedEvent) -> None:
        """Hold ``e``; when a hand starts, drop what came before the previous hand."""
        base, events = self.window
        events.append(e)
        ev = e.event
        if isinstance(ev, K.Prompt | K.ActionTaken):
            self.last_decision[ev.seat] = e.seq
        elif isinstance(ev, K.HandStarted):
            self.hand_starts.append(e.seq)
            if len(self.hand_starts) > 2:
                cut = self.hand_starts[-2] - 1  # the event before the previous hand's first
                self.window = (cut, events[cut - base :])
                self.hand_starts = self.hand_starts[-2:]

    def notify(self) -> None:
        """Wake every stream of the table (called with ``lock`` held)."""
        self.cond.notify_all()
        self.wakeup.fire()


class Wakeup:
    """Wakes a table's asyncio streams from any thread. Per event loop one ``asyncio.Event``,
    replaced each time it fires; a burst of events from the table's thread costs one
    ``call_soon_threadsafe`` per loop, however many streams wait. A stream takes the current
    event (:meth:`waiter`) *before* it looks for new events, so no wake-up is lost."""

    __slots__ = ("_signals",)

    def __init__(self) -> None:
        self._signals: dict[asyncio.AbstractEventLoop, _LoopSignal] = {}

    def waiter(self) -> asyncio.Event:
        """The event the calling coroutine waits on (on its running loop)."""
        loop = asyncio.get_running_loop()
        signal = self._signals.get(loop)
        if signal is None:
            signal = self._signals[loop] = _LoopSignal(loop)
        return signal.event

    def fire(self) -> None:
        for signal in list(self._signals.values()):
            signal.fire_threadsafe()


class _LoopSignal:
    __slots__ = ("event", "loop", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.event = asyncio.Event()
        self.scheduled = False

    def fire_threadsafe(self) -> None:
        if self.scheduled:  # a wake-up is on its way: it will show this event too
            return
        self.scheduled = True
        try:
            self.loop.call_soon_threadsafe(self._fire)
        except RuntimeError:  # the loop is closed: nobody waits any more
            self.scheduled = False

    def _fire(self) -> None:
        self.scheduled = False
        fired, self.event = self.event, asyncio.Event()
        fired.set()
