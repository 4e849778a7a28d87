"""A table's steps and their writes.

Each table is a :class:`~services.gateway.domain.session.TableSession` behind a lock (one
writer). Whatever runs under the lock is one step of the table (:meth:`StepWriter.step`: an
Act, a JoinSeat or Leave, a timer, a bot's move and what follows it): the events it emits are
appended to the table's log in one transaction, fenced by the table's lease, together with the
records that go with them — the request's result and settled hands for the matchmaking outbox
(``gateway-outbox``) — and only then wake the table's subscribers and answer the caller. A step
the store cannot take (unreachable) never happened: the table is rebuilt from its log
(:mod:`.rewinds`). An answered Act holds its step's wake-up for the steps after it
(:mod:`.answer_early`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import NoReturn

import structlog

from infra.store import Store
from infra.store.base import Conflict, Fenced, StoreError, StoreUnavailable
from infra.store.ownership import NotOwner
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.ports import WallFenced
from services.gateway.tables import requests
from services.gateway.tables.leases import OnEvent, TableLeases
from services.gateway.tables.live import LiveTable
from services.gateway.tables.log import append_events
from services.gateway.tables.records import forget_answers
from services.gateway.tables.registry import TableRegistry
from services.gateway.tables.rewinds import Rewinds
from shared.errors import DomainError, Unavailable

log_ = structlog.get_logger("mahjong.gateway")


class StepWriter:
    """The writes of every table's steps, to ``store``, fenced by the table's lease
    (``leases``); a step the store cannot take is rewound (``rewinds``); each event written
    is told to ``on_event``; a finished table leaves memory later (``registry``)."""

    def __init__(
        self,
        store: Store,
        leases: TableLeases,
        registry: TableRegistry,
        rewinds: Rewinds,
        on_event: OnEvent | None,
    ) -> None:
        self.store = store
        self.leases = leases
        self.registry = registry
        self.rewinds = rewinds
        self.on_event = on_event

    @contextlib.contextmanager
    def step(self, table: LiveTable) -> Iterator[None]:
        """One step of ``table``, run with its lock held: the events emitted meanwhile and the
        records that go with them are written in one fenced transaction when it ends (also when
        it raises: what was emitted before a failure happened), then kept, shown to the streams
        and followed by ``after_write``. Nested: the outermost step writes. A refusal within
        the step (the wall fencing this replica out: :meth:`wall_fenced`) fails the step too,
        even if the engine took it for a failed service call and went on: its caller must not
        be told that what it asked for was done."""
        if table.unwritten is not None:
            yield
            return
        table.unwritten = []
        table.write_failure = None
        try:
            yield
        finally:
            self._write_step(table)
        failure, table.write_failure = table.write_failure, None
        if failure is not None:
            raise failure

    def append(self, table: LiveTable, event: K.TableEvent) -> int:
        """The session's ``emit`` (through :class:`.wiring.TableLink`): the event joins the
        running step (one of its own when none runs); its sequence number."""
        if not table.owned:  # another replica took the table over: write nothing more
            raise self.leases.not_owner(table.id)
        if table.unwritten is None:
            with self.step(table):
                return self.append(table, event)
        table.unwritten.append((int(time.time() * 1000), event))
        return table.last_seq

    def wall_fenced(self, table: LiveTable, exc: WallFenced) -> NoReturn:
        """The wall refused this replica's epoch (:mod:`.fenced_wall`, through
        :class:`.wiring.TableLink`): another replica owns the table, as a fenced write would
        have said. The step fails with NOT_OWNER, and writes nothing (the table is no longer
        owned here)."""
        log_.warning("table_wall_call_fenced", table=table.id, error=str(exc))
        raise self._lost_in_step(table) from exc

    def _lost_in_step(self, table: LiveTable) -> Unavailable:
        """The table is lost to another replica within a step: let it go, and the NOT_OWNER
        its step fails with (its caller's answer), to raise."""
        self.leases.lost(table)
        table.write_failure = self.leases.not_owner(table.id)
        return table.write_failure

    def _write_step(self, table: LiveTable) -> None:
        hold = table.wake_hold
        later = hold.take()
        try:
            self._write_events(table)
        finally:
            hold.release(table, later)  # wakes the streams, unless the next step will

    def _write_events(self, table: LiveTable) -> None:
        events, table.unwritten = table.unwritten or [], None
        records, table.unwritten_records = table.unwritten_records, []
        after, table.after_write = table.after_write, []
        if not table.owned and (events or records):  # lost within the step: none of it lands
            table.write_failure = table.write_failure or self.leases.not_owner(table.id)
            raise table.write_failure
        if not events and not records:
            for fn in after:
                fn()
            return
        try:
            fence = self.leases.ownership.fence(table.id)
        except NotOwner:  # its lease was lost meanwhile: the session is ahead of nothing here
            raise self._lost_in_step(table) from None
        try:
            if events:
                last = append_events(
                    self.store, table.id, events, fence=fence, expected_seq=table.head,
                    records=records,
                )  # fmt: skip
            else:  # a refusal remembered: its record alone
                for namespace, key, value in records:
                    self.store.put(namespace, key, value, fence=fence)
        except (Fenced, Conflict) as exc:
            # Another replica took the table over (its epoch is newer, or it wrote already):
            # the store refused the write; this replica stops serving the table.
            log_.warning("table_write_refused", table=table.id, error=str(exc))
            raise self._lost_in_step(table) from exc
        except StoreUnavailable as exc:
            if events:  # the session ran ahead of its log: start again from the log
                self.rewinds.rewind(table, exc)
            table.write_failure = Unavailable(str(exc), reason="STORE_UNAVAILABLE")
            raise table.write_failure from exc
        self.rewinds.written(table.id)  # its next rewind starts the backoff anew
        if events:
            first = last - len(events) + 1
            if first != table.head + 1:
                log_.error("event_log_out_of_step", table=table.id, seq=first, held=table.head)
            written = [LoggedEvent(first + i, t, event) for i, (t, event) in enumerate(events)]
            for e in written:
                table.keep(e)
                if self.on_event is not None:
                    self.on_event(table, e, "appended")
            table.wake_hold.written()  # woken as this step ends (_write_step), or the next
            self._forget_what_ended(table, written)
        for fn in after:
            fn()

    def _forget_what_ended(self, table: LiveTable, written: list[LoggedEvent]) -> None:
        """After written events: a hand started drops the request ids made before the previous
        hand; the table finished drops them all, and the table leaves memory later (its lease
        goes with the finished report: :meth:`.reports.TableReports.report`). Dropping records
        is best effort: one a store failure left goes at the next hand's start or with the
        table."""
        kinds = {type(e.event) for e in written}
        finished = K.TableFinished in kinds
        try:
            if finished:  # nothing left to own or to retry
                requests.forget_all(self.store, table.id, self.leases.fence(table))
                forget_answers(self.store, table.id)
            elif K.HandStarted in kinds:
                requests.prune(self.store, table, self.leases.fence(table))
        except (StoreError, DomainError) as exc:
            log_.warning("request_records_not_dropped", table=table.id, error=repr(exc))
        if finished:
            self.registry.evict_later(table)
