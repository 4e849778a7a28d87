"""Answering an Act early: the whole mechanism, in one place.

On the asyncio server an Act is answered as soon as its action is written, before the engine
steps it leads to (claim options, the next draw and its prompt, scoring) have run; they follow
at once as a step of their own, and the table's streams are woken once, after both, so each
stream sends one message for the two. The threaded server and the web port answer once both
are written (one step, no answer port).

1. The servicer runs the Act in a worker thread with an
   :class:`~services.gateway.domain.ports.ActAnswer` (:func:`run_answering_early`): the RPC's
   response is the first of what is given to the answer, what the Act returns, or what it
   raises.
2. The Act (:meth:`ActCalls.act <services.gateway.tables.acting.ActCalls.act>`) applies the
   action in a step, the steps after it collected (``TableSession.steps_collected``), and
   holds the step's wake-up (:meth:`WakeHold.hold`).
3. With the table's lock released, :func:`answer_then_run` answers and runs the collected steps
   as one step of the table (:func:`services.gateway.runtime.run_logged`), whose write wakes the
   streams for both (:meth:`WakeHold.take`, :meth:`WakeHold.written`,
   :meth:`WakeHold.release`, called by the step's writer, :mod:`.steps`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeVar

import structlog

from services.gateway.domain.ports import ActAnswer
from services.gateway.runtime import run_logged

if TYPE_CHECKING:
    from services.gateway.domain.session import TableSession
    from services.gateway.tables.live import LiveTable

T = TypeVar("T")
log = structlog.get_logger("mahjong.gateway")


class WakeHold:
    """A table's wake-up held over from one step to the next: set within a step whose events
    the next step follows at once (an answered Act, then the engine steps after it), that
    step's write does not wake the streams (``unwoken``); the next step's does, so each stream
    sends both in one message."""

    __slots__ = ("later", "unwoken")

    def __init__(self) -> None:
        self.later = False  # the running step holds its wake-up for the next one
        self.unwoken = False  # events were written that no stream was woken for yet

    def hold(self) -> None:
        """Within a step: its write wakes nobody; the next step's wakes the streams."""
        self.later = True

    def take(self) -> bool:
        """As a step's write begins: whether it holds its wake-up (and the hold is spent)."""
        later, self.later = self.later, False
        return later

    def written(self) -> None:
        """A step's events were written: the streams are to be woken."""
        self.unwoken = True

    def release(self, table: LiveTable, later: bool) -> None:
        """As a step's write ends (``later``: :meth:`take`'s answer): wake the streams for
        what was written, unless the step holds its wake-up for the next one."""
        if self.unwoken and not later:
            self.unwoken = False
            table.notify()


def answer_then_run(
    table: LiveTable,
    session: TableSession,
    step: Callable[[LiveTable], AbstractContextManager[None]],
    answer: ActAnswer,
    sequence: int,
    after: list[Callable[[], None]],
) -> None:
    """After an Act's step was written, with the table's lock released: answer ``sequence``,
    then run the engine steps ``after`` it (collected while it was applied) as one step of
    the table, whose write wakes the streams for both."""
    answer(sequence, False)
    if after:
        run_logged(table.lock, functools.partial(step, table), table.id, session.run_steps, after)


class _LoopAnswer:
    """An :class:`~services.gateway.domain.ports.ActAnswer` that settles the RPC's future on
    its event loop with ``respond(sequence, replayed)``."""

    __slots__ = ("_respond", "_settle", "loop")

    def __init__(self, loop, settle, respond: Callable[[int, bool], Any]) -> None:
        self.loop, self._settle, self._respond = loop, settle, respond

    def __call__(self, sequence: int, replayed: bool) -> None:
        self.loop.call_soon_threadsafe(self._settle, self._respond(sequence, replayed))


def run_answering_early(
    fn: Callable[..., T], respond: Callable[[int, bool], T], *args: Any
) -> asyncio.Future[T]:
    """Run ``fn(*args, answer)`` in the server's worker threads (as
    :func:`infra.aio_server.run_blocking` does); the
    future it returns resolves with the first of: ``respond(sequence, replayed)`` of what
    ``fn`` gives ``answer``, what ``fn`` returns, or what it raises. ``fn`` goes on working
    once it has answered (the caller gets its answer meanwhile); what it raises after that is
    logged."""
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[T] = loop.create_future()

    def settle(value: Any = None, error: BaseException | None = None) -> None:
        if answered.done():  # answered already (or the caller gave up on it)
            if error is not None:
                log.error("work_after_answer_failed", error=repr(error))
            return
        if error is not None:
            answered.set_exception(error)
        else:
            answered.set_result(value)

    answer = _LoopAnswer(loop, settle, respond)

    def work() -> None:
        try:
            value = fn(*args, answer)
        except BaseException as exc:
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, value)

    # in the server's worker pool (the loop's executor), with the caller's context variables
    loop.run_in_executor(None, contextvars.copy_context().run, work)
    return answered
