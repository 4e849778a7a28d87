"""Creating a table (:meth:`TableCreation.create_table`, CreateTable): its seats and request id
stored, its lease taken, its session started with TableStarted in the log before the answer.

CreateTable is idempotent by request id (``gateway-create``: request id -> the table id and a
fingerprint of the request, :mod:`.creation`). A retry of the same request returns the same
table and seat tokens; the same request id with a different request (other seats, ruleset,
stake, limits, tag, deadline, ...) is refused with FAILED_PRECONDITION ``REQUEST_ID_REUSED``
and creates nothing. A start cut short (its replica died after keeping the request id, before
TableStarted was logged) is started by the retry. Callers without the internal token hold at
most ``public_tables_per_address`` live tables each.

Also what a session is wired to (:meth:`TableCreation._wiring`: the fenced wall, the step's
``emit``, the outbox ``report``, the bots) and the logging of its engine's failures.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
from typing import Any

import structlog

from infra.store import AlreadyExists
from services.gateway import metrics
from services.gateway.domain.session import RETRY_ATTEMPTS, SessionConfig, TableSession
from services.gateway.runtime import LockedScheduler
from services.gateway.tables.creation import TableSpec, seat_tokens, spec_fingerprint
from services.gateway.tables.fenced_wall import FencedWall
from services.gateway.tables.live import LiveTable
from services.gateway.tables.log import read_table_log
from services.gateway.tables.records import (
    CREATES,
    REPORTED,
    TABLES,
    CreateRecord,
    SeatRecord,
    decode_seats,
    encode_seats,
)
from shared.errors import DomainError, FailedPrecondition, ResourceExhausted, Unavailable

log_ = structlog.get_logger("mahjong.gateway")


def step_failed(table_id: str, attempt: int, exc: Exception) -> None:
    """A table's engine step failed for a transient reason (a service call): it is retried;
    logged and counted, as an error once the table is stalled (its short retries used up)."""
    stalled = attempt >= RETRY_ATTEMPTS
    metrics.STEP_FAILURES.labels("true" if stalled else "false").inc()
    (log_.error if stalled else log_.warning)(
        "engine_step_failed", table=table_id, attempt=attempt, stalled=stalled, error=repr(exc)
    )


def table_halted(table_id: str, exc: Exception) -> None:
    """A table's engine failed on an error no retry mends: logged with its stack, counted."""
    metrics.TABLES_HALTED.inc()
    log_.error("table_halted", table=table_id, error=repr(exc), exc_info=exc)


class TableCreation:
    """Mixed into :class:`~services.gateway.tables.manager.TableManager`, whose ``store``,
    ``ports``, ``settings``, ``policy``, ``scheduler``, ``ownership``, ``tables``, ``_lock``,
    ``_starting`` and ``_public_lock`` it uses, with ``step``, ``_append``, ``_report``,
    ``_fence`` and ``_wall_fenced`` of the other parts."""

    def create_table(self, spec: TableSpec, creator: str = "") -> tuple[str, list[str]]:
        """A new table (or the one an earlier call with the same request id made). ``creator``:
        the client address of a caller without the internal token, who may hold at most
        ``public_tables_per_address`` live tables."""
        if not creator:
            return self._create_table(spec, "")
        with self._public_lock:  # the count and the new table together: the limit is exact
            limit = self.settings.public_tables_per_address
            held = sum(1 for t in list(self.tables.values()) if t.creator == creator and t.live)
            if limit and held >= limit and not self._known_request(spec):
                raise ResourceExhausted(
                    f"{creator} already has {held} live tables created without the internal "
                    f"token, the limit per client address ({limit}); finish or leave one first",
                    reason="TABLE_LIMIT",
                    limit=limit,
                )
            return self._create_table(spec, creator)

    def _known_request(self, spec: TableSpec) -> bool:
        """A retry of an earlier CreateTable (its answer is not a new table)."""
        return bool(spec.request_id) and self.store.get(CREATES, spec.request_id) is not None

    def _create_table(self, spec: TableSpec, creator: str) -> tuple[str, list[str]]:
        fingerprint = spec_fingerprint(spec)
        if spec.request_id and self.store.get(CREATES, spec.request_id) is not None:
            return self._created_for(spec, fingerprint, creator)
        table_id = "t_" + secrets.token_hex(8)
        # The seats are stored before the request id is claimed: a retry of the same request
        # that arrives while this call is still starting the table then finds them and answers
        # with the seat tokens.
        seats = [SeatRecord(s.player_id, s.bot) for s in spec.seats]
        self.store.put(TABLES, table_id, encode_seats(seats))
        self.store.put(REPORTED, table_id, b"1" if spec.report_hands else b"0")
        if spec.request_id:
            try:
                self.store.create(
                    CREATES, spec.request_id, CreateRecord(table_id, fingerprint).encode()
                )
            except AlreadyExists:  # a concurrent call with the same request id won
                self.store.delete(TABLES, table_id)
                self.store.delete(REPORTED, table_id)
                return self._created_for(spec, fingerprint, creator)
        return self._claim_and_start(table_id, spec, creator, seats)

    def _claim_and_start(
        self,
        table_id: str,
        spec: TableSpec,
        creator: str,
        seats: list[SeatRecord],
        *,
        cut_short: bool = False,
    ) -> tuple[str, list[str]]:
        """Take the new table's lease and start it, once: a call of the same request on this
        replica that started it (or is starting it) is answered with its seat tokens, and one
        on another replica that did is refused (its lease): the caller retries."""
        with self._lock:
            if table_id in self.tables or table_id in self._starting:
                return table_id, seat_tokens(self.settings.secret, table_id, seats)
            self._starting.add(table_id)
        try:
            if self.ownership.claim(table_id) is None:
                if cut_short:  # its first replica may still be starting it: its lease runs
                    raise Unavailable(
                        f"table {table_id} for request_id {spec.request_id!r} is starting; retry",
                        reason="TABLE_STARTING",
                        request_id=spec.request_id,
                    )
                raise Unavailable(
                    f"table {table_id} is leased elsewhere; retry", reason="NOT_OWNER"
                )
            if cut_short:
                log_.warning("table_start_resumed", table=table_id, request_id=spec.request_id)
            return self._start(table_id, spec, creator, seats)
        finally:
            with self._lock:
                self._starting.discard(table_id)

    def _start(
        self, table_id: str, spec: TableSpec, creator: str, seats: list[SeatRecord]
    ) -> tuple[str, list[str]]:
        """Start a table whose lease this replica holds: its session, TableStarted in the log
        (before the answer), and its first hand from the scheduler."""
        st = self.settings
        table = LiveTable(table_id, spec.tag, spec.report_hands)
        table.creator = creator
        lock = table.lock
        sched = LockedScheduler(self.scheduler, lock, lambda: self.step(table), table_id)
        session = TableSession(
            SessionConfig(
                table_id=table_id,
                ruleset=spec.ruleset,
                ruleset_name=spec.ruleset_name,
                overrides=spec.overrides,
                stake=spec.stake,
                max_hands=spec.max_hands,
                max_rounds=spec.max_rounds,
                tag=spec.tag,
                first_dealer=spec.first_dealer,
                seat_wait_ms=st.seat_wait_ms if spec.seat_wait_ms is None else spec.seat_wait_ms,
                end_by_ms=spec.end_by_ms,
                **self._timers(),
            ),
            spec.seats,
            **self._wiring(table, sched),
        )
        table.session = session
        with self._lock:
            self.tables[table_id] = table
        with lock:
            for s in spec.seats:
                s.joined = bool(s.player_id) or s.bot
            # TableStarted is in the log before CreateTable answers: a replica that dies right
            # after answering leaves a table the others take over, not a table id that leads
            # nowhere. The first hand starts from the scheduler so CreateTable answers at once.
            try:
                session.announce()
            except Exception as exc:
                # Refused as no longer the owner (paused past the lease): a retry of the same
                # request started the table elsewhere, and its records are that table's now.
                if not (isinstance(exc, DomainError) and exc.reason == "NOT_OWNER"):
                    self._abandon(table, spec.request_id)
                raise
            sched.call_later(0, session.begin)
        return table_id, seat_tokens(st.secret, table_id, seats)

    def _abandon(self, table: LiveTable, request_id: str) -> None:
        """Undo a table whose first event could not be written: a retry of its CreateTable
        makes a new one."""
        with self._lock:
            self.tables.pop(table.id, None)
        with contextlib.suppress(Exception):  # the store failing is why we are here
            fence = self.ownership.fence(table.id)  # never another owner's records
            if request_id:
                self.store.delete(CREATES, request_id, fence=fence)
            self.store.delete(TABLES, table.id, fence=fence)
            self.store.delete(REPORTED, table.id, fence=fence)
            self.ownership.release(table.id)

    def _created_for(
        self, spec: TableSpec, fingerprint: str, creator: str
    ) -> tuple[str, list[str]]:
        """The table an earlier CreateTable with the same request id made, and its seat
        tokens — if that request was this one (same ``fingerprint``). One whose start was cut
        short (its replica died after keeping the request id, before TableStarted was logged)
        is started now, from this request: it is the same request."""
        request_id = spec.request_id
        rec = self.store.get(CREATES, request_id)
        assert rec is not None
        first = CreateRecord.decode(rec.value)
        if first.fingerprint != fingerprint:
            # FAILED_PRECONDITION, not INVALID_ARGUMENT: the request is well formed (with a
            # new request id it would succeed); what it conflicts with is the server's state,
            # the id already bound to another request. Not ALREADY_EXISTS either: that would
            # say the table asked for exists, while the one that does is a different table.
            # The table id is not named: a request id is no credential for that table.
            raise FailedPrecondition(
                f"request_id {request_id!r} was already used by a different CreateTable "
                "request (seats, ruleset, stake, limits, tag, first dealer, seat wait or "
                "deadline differ); a retry must repeat the request exactly, a new table needs a "
                "new request id",
                reason="REQUEST_ID_REUSED",
                field="request_id",
            )
        seats = self.store.get(TABLES, first.table_id)
        if seats is None:  # a start cut short before its seats were stored
            raise Unavailable(
                f"table {first.table_id} for request_id {request_id!r} is not ready; retry",
                reason="TABLE_STARTING",
                request_id=request_id,
            )
        records = decode_seats(seats.value)
        if not read_table_log(self.store, first.table_id, limit=1):  # TableStarted not logged
            return self._claim_and_start(first.table_id, spec, creator, records, cut_short=True)
        return first.table_id, seat_tokens(self.settings.secret, first.table_id, records)

    def _timers(self) -> dict[str, Any]:
        """The session's timer settings (None = the ruleset's)."""
        st = self.settings
        return {
            "discard_ms": st.discard_ms,
            "claim_ms": st.claim_ms,
            "bot_delay_ms": st.bot_delay_ms,
            "auto_play_delay_ms": st.auto_play_delay_ms,
            "between_hands_ms": st.between_hands_ms,
        }

    def _wiring(self, table: LiveTable, sched: LockedScheduler) -> dict[str, Any]:
        """What a session of ``table`` is connected to: ports, scheduler, log, outbox, bots."""
        wall = FencedWall(
            self.ports.wall,
            lambda: self._fence(table).epoch,
            lambda exc: self._wall_fenced(table, exc),
        )
        ports = dataclasses.replace(self.ports, wall=wall)
        return {
            "ports": ports,
            "scheduler": sched,
            "emit": lambda event: self._append(table, event),
            "report": lambda kind, data: self._report(table, kind, data),
            "policy": self.policy,
            "on_step_failed": lambda attempt, exc: step_failed(table.id, attempt, exc),
            "on_halted": lambda exc: table_halted(table.id, exc),
            "hand_answer": self._hand_answer(table),
        }
