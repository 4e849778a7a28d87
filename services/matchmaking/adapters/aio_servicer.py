"""MatchmakingService on the asyncio server (``--server-model asyncio``, the default).

Every unary call runs in a worker thread exactly as on the threaded server: the guarded call
(:class:`.call_guard.GuardedServicer`: flood control, request
ids), then :class:`.servicer.MatchmakingServicer`'s own method, so
answers, codes, reasons and idempotency are the same (flood control verifies the session token's
signature: that too stays off the event loop).

The two watch streams are coroutines: an open stream waits on the loop and holds no thread, so
one replica holds as many as its memory allows (``--max-streams``), not as many as it has
threads. What they read from the store runs in the worker threads, a batch of streams' reads
per trip (:class:`WatchReads`), so the change that wakes 10,000 watchers costs a few hundred
worker trips and leaves most workers to unary calls.

* ``WatchTournament``: the watchers of a tournament on this replica share one
  :class:`TournamentFeed`. It reads the tournament's snapshot
  (:meth:`Matchmaking.tournament_snapshot`) and its encoding
  (:meth:`MatchmakingServicer.snapshot_message`) once per change on this replica — told by
  :meth:`Matchmaking.notify_tournament` through ``loop.call_soon_threadsafe`` (an observer
  of the facade's :class:`~services.matchmaking.domain.changes.Changes`); a burst of changes,
  every hand of a running round, is read once per :data:`FEED_READ_GAP_S` — and every
  ``poll_seconds`` otherwise (other replicas' changes), and wakes its watchers only when the
  tournament's message changed. A watcher reads
  its own seat once per round: its table when the round is seated, the assignment once the
  round's progress says its table was created. It sends at most one message per
  :data:`.servicer.WATCH_MIN_INTERVAL_S` (the last change always
  arrives), as on the threaded server. Its session is verified when it opens and looked up in
  the store again every ``session_check_seconds`` (all of a feed's watchers in one batch): a
  session signed out or expired ends the stream ``UNAUTHENTICATED``, as on the threaded server
  (where every wake-up checks it).
* ``WatchAssignments``: wakes on any quick-match or room change on this replica
  (:meth:`Matchmaking.notify`, bridged the same way) or every ``poll_seconds``, reads the ticket
  and sends it when it changed, until it is assigned or cancelled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import structlog
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.aio_server import run_blocking
from infra.session_tokens import SessionClaims
from services.matchmaking.adapters import convert as conv
from services.matchmaking.adapters import servicer
from services.matchmaking.adapters.call_guard import GuardedServicer, Method
from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.domain.tournaments import rounds as tournament_rounds
from services.matchmaking.domain.tournaments import tournament as tournaments

T = TypeVar("T")

log = structlog.get_logger("mahjong.matchmaking")

WATCH_BATCH = 64  # watch streams' reads run together in one worker trip
WATCH_TRIPS = 4  # such trips at once: the other workers stay free for unary calls
SESSION_CHECK_S = 5.0  # an open WatchTournament's session is looked up again this often
SESSION_CHECK_CHUNK = 1000  # sessions looked up in one worker trip
FEED_READ_GAP_S = 0.25  # a tournament changing often is read again at most this often
STREAMS = ("WatchAssignments", "WatchTournament")


def _run_all(batch: list[tuple[contextvars.Context, Callable[..., Any], tuple, Any]]):
    """Each call of ``batch`` in its caller's context: (True, value) or (False, exception)."""
    out: list[tuple[bool, Any]] = []
    for ctx, fn, args, _ in batch:
        try:
            out.append((True, ctx.run(fn, *args)))
        except Exception as exc:
            out.append((False, exc))
    return out


class WatchReads:
    """The blocking reads of open watch streams (the store), run in the server's worker
    threads ``batch`` at a time, at most ``trips`` worker trips at once. Used on the loop."""

    def __init__(self, batch: int = WATCH_BATCH, trips: int = WATCH_TRIPS) -> None:
        self.batch = batch
        self.trips = trips
        self._queue: deque[tuple[contextvars.Context, Callable[..., Any], tuple, Any]] = deque()
        self._running: set[asyncio.Task] = set()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker thread, with the caller's context variables."""
        fut = asyncio.get_running_loop().create_future()
        self._queue.append((contextvars.copy_context(), fn, args, fut))
        if len(self._running) < self.trips:
            self._running.add(asyncio.ensure_future(self._drain()))
        return await fut

    async def _drain(self) -> None:
        try:
            await self._drain_queue()
        finally:  # at once, not in a done callback: a read queued from now on starts a trip
            self._running.discard(asyncio.current_task())  # type: ignore[arg-type]

    async def _drain_queue(self) -> None:
        while self._queue:
            batch = []
            while self._queue and len(batch) < self.batch:
                item = self._queue.popleft()
                if not item[3].done():  # its stream was cancelled meanwhile
                    batch.append(item)
            if not batch:
                continue
            try:
                results = await run_blocking(_run_all, batch)
            except BaseException as exc:  # the pool is shut down, or this task cancelled
                for *_, fut in batch:
                    if fut.done():
                        continue
                    if isinstance(exc, asyncio.CancelledError):
                        fut.cancel()
                    else:
                        fut.set_exception(exc)
                raise
            for (*_, fut), (ok, value) in zip(batch, results, strict=True):
                if fut.done():
                    continue
                if ok:
                    fut.set_result(value)
                else:
                    fut.set_exception(value)


def _settle(fut: asyncio.Future) -> asyncio.Future:
    """Resolve ``fut`` (waiters wake) and return its successor."""
    if not fut.done():
        fut.set_result(None)
    return fut.get_loop().create_future()


async def _until(*futures: asyncio.Future, timeout: float | None = None) -> None:
    """Wait until one of ``futures`` is done (or ``timeout``), never cancelling any of them:
    they are shared by every watcher of a feed."""
    await asyncio.wait(futures, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)


class _Watcher:
    """One open WatchTournament: its session's claims, and a future set when the session is no
    longer live (signed out or expired)."""

    __slots__ = ("claims", "ended")

    def __init__(self, claims: SessionClaims, ended: asyncio.Future) -> None:
        self.claims = claims
        self.ended = ended


class _Seat:
    """A watcher's seat in the tournament's current round, read once per round: its table's
    index once the round is seated (the seating is written before the round starts, and never
    changes), then the assignment once the round's progress says that table was created."""

    __slots__ = ("assignment", "index", "round")

    def __init__(self) -> None:
        self.round = -1  # the round it was read for
        self.index: int | None = None  # its table in that round (None: not seated in it)
        self.assignment: pb.Assignment | None = None

    def stale(self, t: tournaments.Tournament, progress: Any) -> bool:
        """Whether it must be read (:func:`tournament_rounds.seat_of`) for ``t``."""
        if t.state not in tournaments.ACTIVE or not t.current_round:
            if self.round != t.current_round:  # no seat (what seat_of says), none to read
                self.round, self.index, self.assignment = -1, None, None
            return False
        if self.round != t.current_round:
            return True
        if self.assignment is not None or self.index is None:
            return False
        return (
            progress is not None
            and progress.round == self.round
            and progress.has("created", self.index)
        )

    def update(self, round_no: int, found) -> None:
        self.round = round_no
        self.index = found[0] if found else None
        self.assignment = conv.assignment_to_proto(found[1]) if found and found[1] else None


class TournamentFeed:
    """One tournament as this replica's watchers of it see it: its snapshot and message, read
    once per change here (:meth:`kick`; at most every :data:`FEED_READ_GAP_S`) or every
    ``poll_seconds``; ``changed`` resolves when the
    message changed, ``read`` after every read. A failed read ends the feed: its watchers end
    with the error (the next watcher opens a new feed). Used on the loop only."""

    def __init__(self, owner: AsyncMatchmakingServicer, tournament_id: str) -> None:
        loop = asyncio.get_running_loop()
        self.owner = owner
        self.tournament_id = tournament_id
        self.watchers: set[_Watcher] = set()
        self.version = -1  # the tournament's version on this replica when last read
        self.snap: Any = None
        self.message: pb.Tournament | None = None
        self.error: BaseException | None = None
        self.changed = loop.create_future()
        self.read = loop.create_future()
        self._kicked = loop.create_future()
        self._read_at = 0.0  # loop.time() of the last read's start
        self.task = asyncio.ensure_future(self._run())
        self._sessions = asyncio.ensure_future(self._check_sessions())

    def kick(self) -> None:
        """The tournament changed on this replica (or the feed may have no watchers left)."""
        if not self._kicked.done():
            self._kicked.set_result(None)

    async def current(self, version: int) -> None:
        """Wait until the feed has read the tournament as of ``version`` (or later); raise the
        error that ended the feed."""
        while self.error is None and (self.message is None or self.version < version):
            await _until(self.read)
        if self.error is not None:
            raise self.error

    async def _run(self) -> None:
        owner, tid = self.owner, self.tournament_id
        mm = owner.mm
        loop = asyncio.get_running_loop()
        try:
            while self.watchers:
                version = mm.tournament_version(tid)
                self._read_at = loop.time()
                try:
                    snap, message = await run_blocking(owner.snapshot, tid)
                except Exception as exc:
                    self.error = exc
                    return
                self.version = version
                if self.message is None or (snap is not self.snap and message != self.message):
                    self.snap, self.message = snap, message
                    self.changed = _settle(self.changed)
                self.read = _settle(self.read)
                if self.watchers and mm.tournament_version(tid) == version:
                    await _until(self._kicked, timeout=owner.poll_seconds)
                if self._kicked.done():
                    self._kicked = loop.create_future()
                    # changes come in bursts (a hand, a table): one read for each burst
                    gap = self._read_at + FEED_READ_GAP_S - loop.time()
                    if gap > 0:
                        await asyncio.sleep(gap)
        finally:
            if owner.feeds.get(tid) is self:
                del owner.feeds[tid]
            if self.error is None and self.watchers:  # cancelled with watchers (shutdown)
                self.error = asyncio.CancelledError()
            self.changed = _settle(self.changed)
            self.read = _settle(self.read)
            self._sessions.cancel()
            await asyncio.gather(self._sessions, return_exceptions=True)

    async def _check_sessions(self) -> None:
        """Every ``session_check_seconds``, each watcher's session looked up again (a batch
        per worker trip); a session no longer live wakes its watcher, which ends."""
        owner = self.owner
        while True:
            await asyncio.sleep(owner.session_check_seconds)
            watchers = [w for w in self.watchers if not w.ended.done()]
            for i in range(0, len(watchers), SESSION_CHECK_CHUNK):
                chunk = watchers[i : i + SESSION_CHECK_CHUNK]
                try:
                    live = await run_blocking(owner.sessions_live, [w.claims for w in chunk])
                except Exception as exc:  # the store: looked up again next time
                    log.warning("watch_session_check_failed", error=repr(exc))
                    continue
                for w, ok in zip(chunk, live, strict=True):
                    if not ok and not w.ended.done():
                        w.ended.set_result(None)


class AsyncMatchmakingServicer(pb_grpc.MatchmakingServiceServicer):
    """``guard`` (the :class:`GuardedServicer` over ``calls``, a :class:`MatchmakingServicer`)
    for the asyncio server and its web port. It observes the facade's changes
    (:class:`~services.matchmaking.domain.changes.Changes`), so changes on this replica wake the
    streams at once (other replicas' within ``poll_seconds``)."""

    def __init__(
        self,
        guard: GuardedServicer,
        calls: servicer.MatchmakingServicer,
        *,
        session_check_seconds: float | None = None,
    ) -> None:
        self.guard = guard
        self.calls = calls
        self.mm = calls.mm
        self.poll_seconds = calls.poll_seconds
        self.session_check_seconds = session_check_seconds or SESSION_CHECK_S
        self.reads = WatchReads()
        self.feeds: dict[str, TournamentFeed] = {}
        self._assignments: asyncio.Future | None = None  # resolved on the next notify()
        self._loop: asyncio.AbstractEventLoop | None = None
        for name, m in guard.methods.items():
            if m.stream and name not in STREAMS:
                raise TypeError(f"MatchmakingService/{name}: a stream with no asyncio handler")
            if not m.stream:
                setattr(self, name, self._unary(name, getattr(guard, name)))
        self._observer = self._observe
        self.mm.changes.observe(self._observer)
        with contextlib.suppress(RuntimeError):  # made on the server's loop (else: later)
            self._loop = asyncio.get_running_loop()

    def close(self) -> None:
        """Stop observing the facade's changes and end the feeds (once the server stopped:
        called from another thread than the loop's, which still runs)."""
        self.mm.changes.unobserve(self._observer)
        loop = self._loop
        if loop is None or loop.is_closed() or not loop.is_running():
            return
        with contextlib.suppress(RuntimeError, TimeoutError, concurrent.futures.TimeoutError):
            asyncio.run_coroutine_threadsafe(self._end_feeds(), loop).result(5)

    async def _end_feeds(self) -> None:
        tasks = [feed.task for feed in self.feeds.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # --- unary calls: the guarded call of the threaded server, in a worker ---------------------
    @staticmethod
    def _unary(name: str, guarded: Callable[..., Any]):
        """``guarded`` (flood control, request ids, then the handler: it verifies a session
        token and reads the store) in a worker thread, never on the loop."""

        async def call(request, context):
            return await run_blocking(guarded, request, context)

        call.__name__ = name
        return call

    async def _admit(self, m: Method, request, context) -> tuple[str, str | None]:
        """A stream's flood control (:meth:`GuardedServicer.admit`: the session token verified)
        in a worker thread."""
        return await self.reads.run(self.guard.admit, m, request, context)

    # --- change notifications, from any thread, onto the loop ---------------------------------
    def _bind_loop(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        self._loop = loop
        return loop

    def _observe(self, tournament_id: str | None) -> None:
        loop = self._loop
        if loop is None:
            return  # no stream has opened yet
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server stopped
            loop.call_soon_threadsafe(self._changed, tournament_id)

    def _changed(self, tournament_id: str | None) -> None:
        if tournament_id is None:
            if self._assignments is not None:
                _settle(self._assignments)
                self._assignments = None
            return
        feed = self.feeds.get(tournament_id)
        if feed is not None:
            feed.kick()

    # --- blocking reads (worker threads) --------------------------------------------------------
    def snapshot(self, tournament_id: str):
        """The replica's shared snapshot of a tournament and its shared encoding."""
        snap = self.mm.tournament_snapshot(tournament_id)
        return snap, self.calls.snapshot_message(snap)

    def sessions_live(self, claims: Sequence[SessionClaims]) -> list[bool]:
        """Whether each session is unexpired and still in the store (not signed out)."""
        now = self.mm.clock()
        sessions = self.mm.sessions
        return [c.expires_at > now and sessions.record(c) is not None for c in claims]

    def _ticket(self, token: str, ticket_id: str, claims: SessionClaims | None):
        """The ticket and its message, for its owner's live session: on the first read, and
        once the session no longer looks live, the full check (whose refusal ends the
        stream); else its record alone."""
        if claims is None or not self.sessions_live([claims])[0]:
            ticket = self.mm.ticket(token, ticket_id)
            claims = self.mm.authenticate_session(token)[1]
        else:
            ticket = queues.owned_ticket(self.mm.queue_records, ticket_id, claims.player_id)
        return claims, ticket, self.calls.ticket_message(ticket)

    # --- the streams: coroutines writing with ``context.write`` (a client that leaves cancels
    # the call's task, which ends here at once, in the call's own context) ---------------------
    async def WatchAssignments(self, request, context) -> None:
        m = self.guard.methods["WatchAssignments"]
        address, player = await self._admit(m, request, context)
        with self.guard.open_stream(m, address, player):
            loop = self._bind_loop()
            claims: SessionClaims | None = None
            last = None
            while True:
                version = self.mm.version
                claims, ticket, message = await self.reads.run(
                    self._ticket, request.session_token, request.ticket_id, claims
                )
                if message != last:
                    await context.write(pb.WatchAssignmentsResponse(ticket=message))
                    last = message
                if ticket.state in (queues.ASSIGNED, queues.CANCELLED):
                    return
                if self.mm.version == version:
                    if self._assignments is None:
                        self._assignments = loop.create_future()
                    await _until(self._assignments, timeout=self.poll_seconds)

    async def WatchTournament(self, request, context) -> None:
        """The tournament and the caller's seat now, then on every change, until it finishes
        (see the module's docstring)."""
        m = self.guard.methods["WatchTournament"]
        address, player = await self._admit(m, request, context)
        with self.guard.open_stream(m, address, player):
            loop = self._bind_loop()
            tid, token = request.tournament_id, request.session_token
            me, claims = await self.reads.run(self.mm.authenticate_session, token)
            watcher = _Watcher(claims, loop.create_future())
            feed = self.feeds.get(tid)
            if feed is None:
                feed = self.feeds[tid] = TournamentFeed(self, tid)
            feed.watchers.add(watcher)
            try:
                # What was sent: the feed's message (a new object only when its content
                # changed) and the seat's assignment (a new one only when it changed).
                sent: tuple[Any, Any] = (None, None)
                seat = _Seat()
                quiet_until = 0.0
                while True:
                    await feed.current(self.mm.tournament_version(tid))
                    snap, message, changed = feed.snap, feed.message, feed.changed
                    t = snap.tournament
                    if seat.stale(t, snap.progress):
                        found = await self.reads.run(
                            tournament_rounds.seat_of, self.mm.tournament_records, t, me.player_id
                        )
                        seat.update(t.current_round, found)
                    if message is not sent[0] or seat.assignment is not sent[1]:
                        pause = quiet_until - loop.time()
                        if pause > 0 and t.state != tournaments.FINISHED:
                            await _until(watcher.ended, timeout=pause)
                            if not watcher.ended.done():
                                continue  # read again: what changed meanwhile goes in this one
                        else:
                            out = pb.WatchTournamentResponse(tournament=message)
                            if seat.assignment is not None:
                                out.assignment.CopyFrom(seat.assignment)
                            await context.write(out)
                            sent = (message, seat.assignment)
                            quiet_until = loop.time() + servicer.WATCH_MIN_INTERVAL_S
                    if t.state == tournaments.FINISHED:
                        return
                    if not watcher.ended.done():
                        await _until(changed, watcher.ended)
                    if watcher.ended.done():  # the full check: its refusal ends the stream
                        me, claims = await self.reads.run(self.mm.authenticate_session, token)
                        watcher.claims, watcher.ended = claims, loop.create_future()
            finally:
                feed.watchers.discard(watcher)
                if not feed.watchers:
                    feed.kick()  # it ends now rather than at its next poll
