"""Live tables of one gateway replica: the facade the servicer calls (create, join, act,
leave, view, subscribe), over the table's parts — :mod:`.live` (a table in memory),
:mod:`.log` (its event log), :mod:`.leases` (ownership), :mod:`.requests` (idempotency by
request id), :mod:`.creation` (the request, its fingerprint, seat tokens), :mod:`.streams`
(Subscribe), :mod:`.spectators` (the spectators a table admits, each with a token of its own)
and :mod:`.records` (every other record in the store).

Each table is a :class:`~services.gateway.domain.session.TableSession` behind a lock (one
writer). Whatever runs under the lock is one step of the table (:meth:`TableManager.step`: an
Act, a JoinSeat or Leave, a timer, a bot's move and what follows it): the events it emits are
appended to the table's log in one transaction, fenced by the table's lease, together with the
records that go with them — the request's result and settled hands for the matchmaking outbox
(``gateway-outbox``) — and only then wake the table's subscribers and answer the caller. A step
the store cannot take (unreachable) never happened: the table is rebuilt from its log.

CreateTable is idempotent by request id (``gateway-create``: request id -> the table id and a
fingerprint of the request). A retry of the same request returns the same table and seat
tokens; the same request id with a different request (other seats, ruleset, stake, limits,
tag, ...) is refused with FAILED_PRECONDITION ``REQUEST_ID_REUSED`` and creates nothing.

Finished tables leave memory: ``--finished-table-ttl-seconds`` (GatewaySettings
``finished_table_ttl_ms``, default 300 s) after ``table_finished`` the table is dropped from
:attr:`TableManager.tables`. A later Subscribe, GetTableState or JoinSeat loads it again,
read-only, from its log (:meth:`TableManager._recover`: no lease is taken, nothing is
scheduled or written) and drops it again after the same time. Such a view has the table's final
seats, chips and counters but no ``hand``. The log, the seats (``gateway-table``),
``gateway-create`` and ``gateway-reported`` stay: replay export and CreateTable retries need
them. A halted table (its engine failed on a bug) stays in memory, read-only, its log untouched.

Losing a table: a replica whose lease renewal finds another replica's lease running stops
serving that table at once: the table leaves memory, its Subscribe streams end UNAVAILABLE with
reason NOT_OWNER after the events already held, and Act and every later call for it answer
UNAVAILABLE NOT_OWNER — with the new owner's address (``owner_address``) in the error's details
when it has one.

Request checks, in order: malformed input INVALID_ARGUMENT (before any lock), the token
(UNAUTHENTICATED forged or a spectator's revoked, PERMISSION_DENIED another table/seat), a
known request id returns its first result, a last sequence number older than the seat's pending
prompt ABORTED — or, with no prompt pending, older than the seat's latest decision (its last
prompt or the action that answered it, e.g. the timer's: a late answer is stale, not out of
turn) — then the action against the options held (FAILED_PRECONDITION). A refused request
changes nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

import structlog

from services.gateway import metrics
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.ports import WallFenced, is_transient
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import (
    FINISHED,
    HALTED,
    PLAYING,
    RETRY_ATTEMPTS,
    Policy,
    Ports,
    SessionConfig,
    TableSession,
)
from services.gateway.domain.tokens import (
    SeatToken,
    read_seat_token,
    sign_seat_token,
    sign_spectator_token,
    verify_seat_token,
)
from services.gateway.runtime import LockedScheduler, ThreadScheduler
from services.gateway.tables import leases, requests, spectators
from services.gateway.tables.creation import TableSpec, seat_tokens, spec_fingerprint
from services.gateway.tables.fenced_wall import FencedWall
from services.gateway.tables.live import LiveTable
from services.gateway.tables.log import append_events, read_table_log
from services.gateway.tables.records import (
    CREATES,
    JOINS,
    OUTBOX,
    REPORTED,
    TABLES,
    CreateRecord,
    FinishedReport,
    HandReport,
    Refusal,
    Report,
    RequestRecord,
    SeatRecord,
    check_id,
    decode_seats,
    encode_report,
    encode_seats,
)
from services.gateway.tables.streams import stream, stream_async
from shared.errors import (
    Aborted,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unavailable,
)
from shared.store import AlreadyExists, Store
from shared.store.base import Conflict, Fence, Fenced, StoreError, StoreUnavailable
from shared.store.ownership import NotOwner, Ownership
from shared.table import ResumePlay, SeatRequest

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


@dataclass
class GatewaySettings:
    secret: bytes
    replica_id: str = field(default_factory=lambda: "gw-" + secrets.token_hex(4))
    address: str = ""
    lease_ms: int = 30_000
    discard_ms: int | None = None  # None: the ruleset's timers
    claim_ms: int | None = None
    bot_delay_ms: int = 0
    auto_play_delay_ms: int = 1_000
    between_hands_ms: int = 0
    # How long a table with open seats waits for them before it ends (0 = forever); a
    # CreateTable may set its own (TableSpec.seat_wait_ms).
    seat_wait_ms: int = 120_000
    report_to_matchmaking: bool = False
    timer_workers: int = 2  # threads running timers, bots and the steps after actions
    # How long a finished table stays in memory (later looks read its log from the store).
    finished_table_ttl_ms: int = 300_000
    # Tables created by callers without the internal token (players, the web page): allowed at
    # all, how many new ones per client address per minute, and how many live at once.
    public_tables: bool = True
    public_tables_per_minute: float = 10.0
    public_tables_per_address: int = 8
    # Flood control: calls per second one seat token may make (after a burst).
    seat_calls_per_second: float = 20.0
    seat_call_burst: int = 40
    # A stream whose client does not read: cut once one event waits this long to be written,
    # or once it is this many events behind the table (the client resumes from its last one).
    stream_write_timeout_ms: int = 10_000
    stream_max_lag: int = 1_000
    # Spectators one table admits at once (each with a token of its own; 0 = any number).
    max_spectators_per_table: int = 10_000


class TableManager:
    def __init__(
        self,
        store: Store,
        ports: Ports,
        settings: GatewaySettings,
        *,
        policy: Policy,
        scheduler: ThreadScheduler | None = None,
        on_event: Callable[[LiveTable, LoggedEvent | None, str], None] | None = None,
    ) -> None:
        self.store = store
        self.ports = ports
        self.settings = settings
        # 加倍卡: matchmaking's holds (services.gateway.double_cards); None: not played here
        self.double_cards = None
        self.policy = policy
        self.scheduler = scheduler or ThreadScheduler(settings.timer_workers)
        # Told of every event appended (the server's metrics), and of a table taken over or
        # lost (event None, what happened: "taken_over", "lost").
        self.on_event = on_event
        self.tables: dict[str, LiveTable] = {}
        # The tables this replica owns: the store's leases, renewed every lease/3; a table
        # another replica took over is dropped (_lost) and every write is fenced by its lease.
        self.ownership = Ownership(
            store,
            settings.replica_id,
            ttl_ms=max(1, settings.lease_ms),
            prefix=leases.LEASE_PREFIX,
            on_lost=self._lost_id,
        )
        leases.advertise(store, settings.replica_id, settings.address)
        self._lock = threading.Lock()
        self._starting: set[str] = set()  # tables whose start this replica is making
        # Tables rewound (a step the store could not take): rewinds in a row, for the backoff
        # of their rebuild, and those whose rebuild is scheduled (one at a time).
        self._rewinds: dict[str, int] = {}
        self._reload_pending: set[str] = set()
        self._recover_lock = threading.RLock()
        self._public_lock = threading.Lock()
        self._stop = threading.Event()
        # Renewals and takeovers on threads of their own: however long adopting orphaned
        # tables takes (a log read and a replay each), this replica's leases are renewed.
        self._lease_thread = threading.Thread(
            target=self._renew_leases, name="gateway-leases", daemon=True
        )
        self._adopt_thread = threading.Thread(
            target=self._adopt_orphans, name="gateway-adopt", daemon=True
        )
        self._lease_thread.start()
        self._adopt_thread.start()

    # --- tables ----------------------------------------------------------------------------
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
        }

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
                "request (seats, ruleset, stake, limits, tag, first dealer or seat wait "
                "differ); a retry must repeat the request exactly, a new table needs a new "
                "request id",
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

    def table(self, table_id: str) -> LiveTable:
        """A live table; one whose owner's lease expired is taken over from its log."""
        check_id(table_id, "table_id")
        t = self.tables.get(table_id)
        if t is not None and t.owned and self.ownership.unsure(table_id):
            self._confirm(t)
            t = self.tables.get(table_id)
        if t is None:
            owner = leases.owner_of(self.store, table_id)
            if owner and owner != self.settings.replica_id:  # its lease runs: not ours to load
                raise self._not_owner(table_id)
            t = self._recover(table_id)
        if t is None:
            owner = leases.owner_of(self.store, table_id)
            if owner and owner != self.settings.replica_id:
                raise self._not_owner(table_id)
            raise NotFound(f"no table {table_id!r} on this gateway", table_id=table_id)
        return t

    def _confirm(self, table: LiveTable) -> None:
        """Make sure this replica still owns ``table`` before serving it, when its lease is no
        longer sure by this replica's clock (it was paused, or its renewals stalled, longer
        than the lease): renewed now, or lost (let go: the caller finds the new owner). A
        store that cannot be reached: UNAVAILABLE, never an answer as a stale owner."""
        try:
            confirmed = self.ownership.confirm(table.id)
        except StoreError as exc:
            raise Unavailable(
                f"gateway replica {self.settings.replica_id} cannot confirm it still runs "
                f"table {table.id} (the store: {exc}); retry",
                reason="NOT_OWNER",
                table_id=table.id,
            ) from None
        if not confirmed and table.owned:  # on_lost has let it go, unless it was released
            self._lost(table)

    def _not_owner(self, table_id: str) -> Unavailable:
        return leases.not_owner(self.store, self.settings.replica_id, table_id)

    def _fence(self, table: LiveTable) -> Fence:
        """The fence of every write of ``table``: NOT_OWNER once this replica lost it."""
        try:
            return self.ownership.fence(table.id)
        except NotOwner:
            raise self._not_owner(table.id) from None

    # --- taking over a table -----------------------------------------------------------------
    def _recover(self, table_id: str) -> LiveTable | None:
        """Rebuild a table from its event log when its lease has expired (or is ours from an
        earlier run): the session and any hand in progress, its subscribers' history and its
        request ids; then it plays on here. A finished table is loaded read-only: no lease,
        nothing scheduled, dropped again from memory after ``finished_table_ttl_ms``. None when
        there is no such table or another live replica owns it."""
        with self._recover_lock:
            if table_id in self.tables:
                return self.tables[table_id]
            log = read_table_log(self.store, table_id)
            if not log:
                return None
            over = any(isinstance(e.event, K.TableFinished | K.TableHalted) for e in log)
            if not over and self.ownership.claim(table_id) is None:
                return None  # another replica's lease is running
            started = next(e.event for e in log if isinstance(e.event, K.TableStarted))
            assert isinstance(started, K.TableStarted)
            reported = self.store.get(REPORTED, table_id)
            table = LiveTable(
                table_id, started.tag, reported is not None and reported.value == b"1"
            )
            for e in log:
                table.keep(e)
            spectators.load(self.store, table)
            if not over:
                requests.load(self.store, table)
                requests.load_from_log(table, log)
            requests.prune(self.store, table, None if over else self.ownership.fence(table_id))
            sched = LockedScheduler(self.scheduler, table.lock, lambda: self.step(table), table_id)
            with table.lock:
                session = restore_session(
                    table_id, log, timers=self._timers(), **self._wiring(table, sched)
                )
                table.session = session
            self.tables[table_id] = table
            if session.phase == FINISHED:
                self._evict_later(table)
            elif self.on_event is not None and session.phase != HALTED:
                self.on_event(table, None, "taken_over")
            log_.info("table_taken_over", table=table_id, events=len(log), phase=session.phase)
            return table

    def _take_over_expired(self) -> None:
        """Adopt every table whose owner stopped renewing its lease (or released it)."""
        for table_id in self.ownership.orphans():
            if self._stop.is_set():
                return
            if table_id in self.tables:
                continue
            try:
                self._recover(table_id)
            except Exception as exc:  # one broken table must not stop the others
                log_.exception("take_over_failed", table=table_id, error=repr(exc))

    def _session(self, t: LiveTable) -> TableSession:
        """The table's session, under its lock; NOT_OWNER for a table this replica let go
        while the caller waited for the lock (its session is detached: the new owner's to
        answer)."""
        if not t.owned:
            raise self._not_owner(t.id)
        if t.session is None:
            raise NotFound(f"table {t.id!r} is not ready")
        return t.session

    # --- events ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def step(self, table: LiveTable) -> Iterator[None]:
        """One step of ``table``, run with its lock held: the events emitted meanwhile and the
        records that go with them are written in one fenced transaction when it ends (also when
        it raises: what was emitted before a failure happened), then kept, shown to the streams
        and followed by ``after_write``. Nested: the outermost step writes. A refusal within
        the step (the wall fencing this replica out: :meth:`_wall_fenced`) fails the step too,
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

    def _append(self, table: LiveTable, event: K.TableEvent) -> int:
        """The session's ``emit``: the event joins the running step (one of its own when none
        runs); its sequence number."""
        if not table.owned:  # another replica took the table over: write nothing more
            raise self._not_owner(table.id)
        if table.unwritten is None:
            with self.step(table):
                return self._append(table, event)
        table.unwritten.append((int(time.time() * 1000), event))
        return table.last_seq

    def _wall_fenced(self, table: LiveTable, exc: WallFenced) -> NoReturn:
        """The wall refused this replica's epoch (:mod:`.fenced_wall`): another replica owns
        the table, as a fenced write would have said. The step fails with NOT_OWNER, and
        writes nothing (the table is no longer owned here)."""
        log_.warning("table_wall_call_fenced", table=table.id, error=str(exc))
        raise self._lost_in_step(table) from exc

    def _lost_in_step(self, table: LiveTable) -> Unavailable:
        """The table is lost to another replica within a step: let it go, and the NOT_OWNER
        its step fails with (its caller's answer), to raise."""
        self._lost(table)
        table.write_failure = self._not_owner(table.id)
        return table.write_failure

    def _write_step(self, table: LiveTable) -> None:
        events, table.unwritten = table.unwritten or [], None
        records, table.unwritten_records = table.unwritten_records, []
        after, table.after_write = table.after_write, []
        if not table.owned and (events or records):  # lost within the step: none of it lands
            table.write_failure = table.write_failure or self._not_owner(table.id)
            raise table.write_failure
        if not events and not records:
            for fn in after:
                fn()
            return
        try:
            fence = self.ownership.fence(table.id)
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
                self._rewind(table, exc)
            table.write_failure = Unavailable(str(exc), reason="STORE_UNAVAILABLE")
            raise table.write_failure from exc
        if table.id in self._rewinds:  # written again: its next rewind starts the backoff anew
            with self._lock:
                self._rewinds.pop(table.id, None)
        if events:
            first = last - len(events) + 1
            if first != table.head + 1:
                log_.error("event_log_out_of_step", table=table.id, seq=first, held=table.head)
            written = [LoggedEvent(first + i, t, event) for i, (t, event) in enumerate(events)]
            for e in written:
                table.keep(e)
                if self.on_event is not None:
                    self.on_event(table, e, "appended")
            table.notify()
            self._forget_what_ended(table, written)
        for fn in after:
            fn()

    def _forget_what_ended(self, table: LiveTable, written: list[LoggedEvent]) -> None:
        """After written events: a hand started drops the request ids made before the previous
        hand; the table finished drops them all, and the table leaves memory later (its lease
        goes with the finished report: :meth:`_report`). Dropping records is best effort: one
        a store failure left goes at the next hand's start or with the table."""
        kinds = {type(e.event) for e in written}
        finished = K.TableFinished in kinds
        try:
            if finished:  # nothing left to own or to retry
                requests.forget_all(self.store, table.id, self._fence(table))
            elif K.HandStarted in kinds:
                requests.prune(self.store, table, self._fence(table))
        except (StoreError, DomainError) as exc:
            log_.warning("request_records_not_dropped", table=table.id, error=repr(exc))
        if finished:
            self._evict_later(table)

    def _rewind(self, table: LiveTable, exc: Exception) -> None:
        """A step the store could not take (unreachable; written whole or not at all, so not
        at all): the session is ahead of its log, so it is dropped and the table rebuilt from
        the log, which still holds the lease. What was not written did not happen: the caller
        was answered UNAVAILABLE and retries with the same request id, a bot or timer decides
        again, and a wall draw asked again under its number gives the same tile. Streams end
        (they resume from their last event); the table is rebuilt by the next call for it, or
        by a retry here, with backoff, while the store stays away."""
        log_.warning("table_step_unwritten", table=table.id, error=str(exc))
        self._let_go(table, "step_unwritten")
        self._reload_later(table.id)

    def _reload_later(self, table_id: str) -> None:
        """Rebuild a rewound table from its log, later: 0.2 s after its first rewind, twice as
        long after each rewind or failed rebuild in a row (5 s at most), one at a time."""
        with self._lock:
            if table_id in self._reload_pending:
                return
            self._reload_pending.add(table_id)
            tries = self._rewinds[table_id] = self._rewinds.get(table_id, 0) + 1

        def reload() -> None:
            with self._lock:
                self._reload_pending.discard(table_id)
            if self._stop.is_set() or table_id in self.tables:
                return
            try:
                self._recover(table_id)
            except Exception as exc:  # the store is still away: again, a little later
                log_.warning("table_reload_failed", table=table_id, error=repr(exc))
                self._reload_later(table_id)

        self.scheduler.call_later(min(5000, 100 * 2**tries), reload)

    def _evict_later(self, table: LiveTable) -> None:
        """Drop a finished table from memory after ``finished_table_ttl_ms``."""
        self.scheduler.call_later(
            self.settings.finished_table_ttl_ms, lambda: self._forget(table, "finished")
        )

    def _forget(self, table: LiveTable, why: str) -> None:
        """Drop ``table`` from memory (if it is still the one held for its id)."""
        with self._recover_lock, self._lock:
            if self.tables.get(table.id) is table:
                del self.tables[table.id]
                log_.info("table_evicted", table=table.id, why=why)

    def _report(self, table: LiveTable, kind: str, data: dict[str, Any]) -> None:
        """A settled hand or the table's end, into the outbox for matchmaking (when the table
        reports), written with the step's events (the transactional outbox: a report exists
        exactly when its hand's result is in the log). The end is the table's last write: its
        lease is released after it."""
        with self.step(table):
            if self.settings.report_to_matchmaking and table.report_hands:
                table.unwritten_records.append(self._outbox_row(table, kind, data))
            if kind == "finished":
                table.after_write.append(lambda: self.ownership.release(table.id))

    def _outbox_row(
        self, table: LiveTable, kind: str, data: dict[str, Any]
    ) -> tuple[str, str, bytes]:
        session = table.session
        players = (
            [s.player_id or f"bot:{i}" for i, s in enumerate(session.seats)] if session else []
        )
        report: Report
        if kind == "hand":
            report = HandReport(
                hand_id=data["hand_id"],
                table_id=table.id,
                tag=table.tag,
                player_ids=tuple(players),
                payments=tuple(data["payments"]),
                house=data["house"],
                escaped_seat=data.get("escaped_seat"),
                hand_number=int(data.get("hand_number", 0)),  # type: ignore[call-overload]
                doubled_seats=tuple(data.get("doubled_seats", ())),  # type: ignore[arg-type]
            )
        else:
            report = FinishedReport(table.id, table.tag, data["hands_played"])
        return OUTBOX, report.key(), encode_report(report)

    # --- leases ----------------------------------------------------------------------------
    @property
    def _renew_seconds(self) -> float:
        """A third of the lease (50 ms at the least): how often leases are renewed."""
        return max(0.05, self.settings.lease_ms / 3000)

    def _renew_leases(self) -> None:
        """Renew this replica's leases every lease/3."""
        while not self._stop.wait(self._renew_seconds):
            try:
                self.ownership.renew()  # a lease another replica took: _lost_id
            except Exception as exc:  # the store is down: keep playing, retry later
                log_.warning("lease_renewal_failed", error=repr(exc))

    def _adopt_orphans(self) -> None:
        """Look for tables to take over (an owner gone, or one that released its tables when
        it drained) every lease/3, and every second at most."""
        while not self._stop.wait(min(1.0, self._renew_seconds)):
            try:
                self._take_over_expired()
            except Exception as exc:
                log_.warning("take_over_scan_failed", error=repr(exc))

    def _lost_id(self, table_id: str) -> None:
        table = self.tables.get(table_id)
        if table is not None:
            self._lost(table)

    def _lost(self, table: LiveTable) -> None:
        """Another replica holds the table's lease now (this one was paused or cut off longer
        than the lease): stop serving it. Its streams end NOT_OWNER, later calls find it
        gone from memory and answer NOT_OWNER with the new owner's address; its session is
        never written to again (if the lease comes back, the table is rebuilt from the log)."""
        self._let_go(table, "lease_lost")
        log_.warning("table_lost", table=table.id, owner=leases.owner_of(self.store, table.id))

    def _let_go(self, table: LiveTable, why: str) -> None:
        """Stop serving ``table`` here (lost, or rewound to be rebuilt from its log)."""
        with table.cond:  # first: nothing of this replica's may be appended from here on
            table.owned = False
            if table.session is not None:
                table.session.detach()
        self._forget(table, why)
        if self.on_event is not None:
            self.on_event(table, None, "lost")
        with table.cond:  # then its streams end: a client reconnecting finds it gone
            table.notify()

    # --- seats -----------------------------------------------------------------------------
    def _holder(self, table: LiveTable, token: str, seat_claim: int | None) -> SeatToken:
        """Who ``token`` is at ``table``: its seat, or a spectator the table still admits
        (UNAUTHENTICATED ``SPECTATOR_TOKEN_REVOKED`` otherwise)."""
        held = read_seat_token(self.settings.secret, token, table.id)
        seat = held.seat
        if seat is None and not spectators.admitted(self.store, table, held.spectator_id):
            raise spectators.revoked(held.spectator_id)
        if seat_claim is not None and seat_claim != seat:
            raise PermissionDenied(
                f"seat_token is for {'a spectator' if seat is None else f'seat {seat}'}, "
                f"not seat {seat_claim}",
                field="seat_token",
            )
        return held

    def _viewer(self, table: LiveTable, token: str, seat_claim: int | None) -> int | None:
        """The seat ``token`` proves at ``table`` (None: a spectator it admits)."""
        return self._holder(table, token, seat_claim).seat

    def join(
        self,
        table_id: str,
        player_id: str,
        display_name: str,
        seat: int | None,
        spectator: bool,
        *,
        seat_token: str = "",
        internal: bool = False,
        request_id: str = "",
    ) -> tuple[int | None, str, int]:
        """A seat's token (or a spectator's). An open seat goes to the first caller. Player ids
        are public (table_started, the views), so a seat already assigned to ``player_id`` is
        given only to a caller proving it holds it — its ``seat_token`` (a reconnect), or the
        ``request_id`` of the JoinSeat that took the open seat (a retry whose answer was lost)
        — or to a service of the deployment (``internal``); anyone else is PERMISSION_DENIED.
        A spectator gets a token of its own (:meth:`_spectate`)."""
        table = self.table(table_id)
        if spectator:
            return None, self._spectate(table, seat_token), table.head
        check_id(player_id, "player_id")
        with table.lock:
            session = self._session(table)
            seats = session.seats
            mine = [i for i, s in enumerate(seats) if s.player_id == player_id and not s.bot]
            if mine:
                chosen = mine[0]
                if not internal and not self._retried_join(table, player_id, request_id):
                    self._check_rejoin(table, chosen, seat_token)
                if seat is not None and seat != chosen:
                    raise PermissionDenied(
                        f"player {player_id!r} sits in seat {chosen}, not seat {seat}"
                    )
            elif seat is not None:
                if not seats[seat].open:
                    raise FailedPrecondition(f"seat {seat} is taken", reason="SEAT_TAKEN")
                chosen = seat
            else:
                free = [i for i, s in enumerate(seats) if s.open]
                if not free:
                    raise FailedPrecondition("no open seat at this table", reason="TABLE_FULL")
                chosen = free[0]
            with self.step(table):
                session.join(chosen, player_id, display_name)
            if request_id and not mine:  # took an open seat: a retry of this request may too
                self.store.put(JOINS, f"{table.id}/{player_id}", request_id.encode())
            return chosen, sign_seat_token(self.settings.secret, table.id, chosen), table.head

    def _spectate(self, table: LiveTable, token: str) -> str:
        """A spectator's token: ``token`` again when it is a spectator's the table still admits
        (a reconnect: not counted twice), else a new spectator's, counted against
        ``max_spectators_per_table``. A forged ``token`` is UNAUTHENTICATED, another table's
        PERMISSION_DENIED; a seat's token, or a revoked one, gets a new spectator token."""
        secret = self.settings.secret
        if token:
            held = read_seat_token(secret, token, table.id)
            if held.seat is None and spectators.admitted(self.store, table, held.spectator_id):
                return token
        limit = self.settings.max_spectators_per_table
        now_ms = int(time.time() * 1000)
        spectator_id = self._spectators_write(
            table, lambda fence: spectators.admit(self.store, table, limit, fence, now_ms)
        )
        return sign_spectator_token(secret, table.id, spectator_id)

    def _spectators_write(self, table: LiveTable, write: Callable[[Fence | None], Any]) -> Any:
        """A write of ``table``'s spectators: fenced by its lease while it is live (NOT_OWNER
        when another replica took it over: nobody is admitted or revoked by a stale owner),
        unfenced once it is over (its lease goes with its end)."""
        fence = self._fence(table) if table.live else None
        try:
            return write(fence)
        except Fenced as exc:
            if not table.live:  # it finished meanwhile: the lease was released with its end
                return write(None)
            self._lost(table)
            raise self._not_owner(table.id) from exc

    def _retried_join(self, table: LiveTable, player_id: str, request_id: str) -> bool:
        """Is this the JoinSeat that gave ``player_id`` its open seat, sent again?"""
        if not request_id:
            return False
        rec = self.store.get(JOINS, f"{table.id}/{player_id}")
        return rec is not None and secrets.compare_digest(rec.value, request_id.encode())

    def _check_rejoin(self, table: LiveTable, seat: int, token: str) -> None:
        """JoinSeat of a seat already assigned: only with that seat's own token."""
        if not token:
            raise PermissionDenied(
                f"seat {seat} is already assigned to this player: use the seat token given "
                "when the table was created (CreateTableResponse.seat_tokens) or by the first "
                "JoinSeat, and pass it as seat_token to join again",
                field="seat_token",
            )
        held = verify_seat_token(self.settings.secret, token, table.id)
        if held != seat:
            who = "a spectator" if held is None else f"seat {held}"
            raise PermissionDenied(
                f"seat_token is for {who}, not seat {seat}: use the token given for seat {seat} "
                "when the table was created",
                field="seat_token",
            )

    # --- acting ----------------------------------------------------------------------------
    def act(
        self,
        table_id: str,
        token: str,
        seat_claim: int | None,
        request_id: str,
        last_sequence: int,
        action: SeatRequest,
    ) -> tuple[int, bool]:
        """Apply a seat's action; returns (sequence, replayed)."""
        check_id(request_id, "request_id")
        if last_sequence < 0:
            raise InvalidArgument("last_sequence is negative", field="last_sequence")
        table = self.table(table_id)
        with table.lock:
            seat = self._viewer(table, token, seat_claim)
            if seat is None:
                raise PermissionDenied("a spectator cannot act", field="seat_token")
            key = (seat, request_id)
            if key in table.requests:
                return table.requests[key].replay(), True
            if not table.owned:  # not kept: the request was not evaluated here
                raise self._not_owner(table.id)
            self._refuse_if_over(table)  # not kept: nothing is remembered of a finished table
            with self.step(table):  # the action's events and its result: one write
                try:
                    seq = self._apply(table, seat, last_sequence, action, request_id)
                except DomainError as exc:
                    if not is_transient(exc):  # an outage or NOT_OWNER: retried, not refused
                        self._remember(table, seat, request_id, refusal=Refusal.of(exc))
                    raise
                self._remember(table, seat, request_id, result=seq)
            return seq, False

    def _remember(self, table: LiveTable, seat: int, request_id: str, **result) -> None:
        """Keep a request's first result: written with the running step's events, then held
        here (a write that fails keeps nothing, and the retry is evaluated again). A request
        that ended the table (the last player leaving: 人走光) is held here only: a finished
        table's records leave the store with its end, and its lease with them, so a retry while
        the table is held gets the same answer and nothing is written."""
        record = RequestRecord(table.last_seq, **result)
        key = (seat, request_id)
        if not table.live:
            table.requests[key] = record
            return
        table.unwritten_records.append(requests.row(table.id, seat, request_id, record))
        table.after_write.append(lambda: table.requests.__setitem__(key, record))

    def _refuse_if_over(self, table: LiveTable) -> None:
        session = self._session(table)
        if session.phase == FINISHED:
            why = f" ({session.finish_reason})" if session.finish_reason else ""
            raise FailedPrecondition(
                f"table {table.id} has finished{why}",
                reason="TABLE_FINISHED",
                finish_reason=session.finish_reason,
            )
        if session.phase == HALTED:
            raise FailedPrecondition(
                f"table {table.id} stopped on an internal error; nothing can be played there",
                reason="TABLE_HALTED",
            )

    def _apply(
        self, table: LiveTable, seat: int, last_sequence: int, action: SeatRequest, request_id: str
    ) -> int:
        """Check an action against the table's state and apply it; the resulting sequence."""
        if last_sequence > table.head:
            raise InvalidArgument(
                f"last_sequence {last_sequence} is beyond the table's last event {table.head}",
                field="last_sequence",
            )
        session = self._session(table)
        if isinstance(action, ResumePlay):  # ends 托管: no decision on a prompt, never stale
            session.act(seat, action)
            return table.last_seq
        p = None
        if session.phase == PLAYING and session.hand is not None:
            p = session.hand.pending.get(seat)
        if p is not None and last_sequence < p.sequence:
            raise Aborted(
                f"stale: the last event seen is {last_sequence} but seat {seat}'s "
                f"prompt is event {p.sequence}; refresh and decide again",
                last_sequence=last_sequence,
                prompt_sequence=p.sequence,
            )
        decided = table.last_decision.get(seat, 0)
        if p is None and last_sequence < decided:
            # e.g. a late answer: the timer already decided the prompt it answers
            raise Aborted(
                f"stale: the last event seen is {last_sequence} but seat {seat}'s last "
                f"decision was made at event {decided}; refresh (no decision is pending)",
                last_sequence=last_sequence,
                decision_sequence=decided,
            )
        session.act(seat, action, request_id)
        return table.last_seq

    def play_double_card(self, table_id: str, token: str, request_id: str) -> tuple[int, int]:
        """加倍卡 for the next hand (:func:`services.gateway.double_cards.play_double_card`)."""
        from services.gateway.double_cards import play_double_card

        return play_double_card(self, table_id, token, request_id)

    def leave(self, table_id: str, token: str, request_id: str) -> int:
        """A seat leaves (its escape penalty, if a hand runs); a spectator goes, its token
        revoked (a Leave repeated with it answers 0 again and changes nothing)."""
        check_id(request_id, "request_id", required=False)
        table = self.table(table_id)
        held = read_seat_token(self.settings.secret, token, table.id)
        if held.seat is None:
            self._spectators_write(
                table,
                lambda fence: spectators.revoke(self.store, table, held.spectator_id, fence),
            )
            return 0
        with table.lock:
            seat = self._viewer(table, token, None)
            rid = "leave:" + request_id
            if request_id and (seat, rid) in table.requests:
                return table.requests[(seat, rid)].replay()
            if not table.owned:
                raise self._not_owner(table.id)
            if self._session(table).phase in (FINISHED, HALTED):
                return 0  # the table is over: nothing to pay and nothing to write
            with self.step(table):
                try:
                    penalty = self._session(table).leave(seat)
                except DomainError as exc:
                    if request_id and not is_transient(exc):
                        self._remember(table, seat, rid, refusal=Refusal.of(exc))
                    raise
                if request_id:
                    self._remember(table, seat, rid, result=penalty)
            return penalty

    # --- views -----------------------------------------------------------------------------
    def view(self, table_id: str, token: str, seat_claim: int | None) -> dict[str, Any]:
        table = self.table(table_id)
        with table.lock:
            viewer = self._viewer(table, token, seat_claim)
            session = self._session(table)
            v = session.seat_view(viewer)
            v["last_sequence"] = table.head
            v["config"] = session.config
            return v

    def open_stream(self, table_id: str, token: str, after: int) -> tuple[LiveTable, SeatToken]:
        """The table and the viewer (its token, verified) of a Subscribe after sequence
        ``after``, checked."""
        if after < 0:
            raise InvalidArgument("after_sequence is negative", field="after_sequence")
        table = self.table(table_id)
        with table.lock:
            viewer = self._holder(table, token, None)
            if after > table.head:
                raise InvalidArgument(
                    f"after_sequence {after} is beyond the table's last event {table.head}",
                    field="after_sequence",
                )
        return table, viewer

    def subscribe(
        self, table_id: str, token: str, after: int, active: Callable[[], bool]
    ) -> Iterator[tuple[LoggedEvent, K.TableEvent]]:
        """The viewer's events after ``after``, then live ones until the table finishes (a
        thread waits for them: the threaded server and the web port)."""
        table, viewer = self.open_stream(table_id, token, after)
        return stream(
            self.store,
            table,
            viewer.seat,
            after,
            active,
            lambda: self._not_owner(table.id),
            self._still_watching(table, viewer),
        )

    def subscribe_async(
        self,
        table: LiveTable,
        viewer: SeatToken,
        after: int,
        run_blocking: Callable[..., Awaitable],
    ) -> AsyncIterator[tuple[LoggedEvent, K.TableEvent]]:
        """The same events for a coroutine on the server's event loop (no thread held while it
        waits), for a stream :meth:`open_stream` checked."""
        return stream_async(
            self.store,
            table,
            viewer.seat,
            after,
            lambda: self._not_owner(table.id),
            run_blocking,
            self._still_watching(table, viewer),
        )

    @staticmethod
    def _still_watching(table: LiveTable, viewer: SeatToken) -> Callable[[], None]:
        """Checked before each batch of a stream's events: a spectator's stream ends
        UNAUTHENTICATED once its token is revoked (a seat's never does)."""
        spectator_id = viewer.spectator_id

        def check() -> None:
            if viewer.seat is None and not spectators.still_admitted(table, spectator_id):
                raise spectators.revoked(spectator_id)

        return check

    def hand_over(self) -> None:
        """Draining (SIGTERM, as health turns NOT_SERVING): stop playing here, end every stream
        UNAVAILABLE NOT_OWNER once it has what this replica wrote (its client resumes from its
        last event on another replica) and release every lease at once, so other replicas take
        the tables over within a second instead of after the lease expires."""
        self._stop.set()
        self._lease_thread.join(timeout=5)
        self._adopt_thread.join(timeout=5)
        self.scheduler.close()
        for table in list(self.tables.values()):
            with table.cond:  # after any step in progress: nothing more is written here
                table.owned = False
                if table.session is not None:
                    table.session.detach()
                table.notify()
        with contextlib.suppress(StoreError):
            self.ownership.release_all()
        log_.info("tables_handed_over", tables=len(self.tables))

    def close(self) -> None:
        """Stop: no more timers or steps, then hand every table over at once (the leases are
        released, so another replica takes them without waiting for them to expire)."""
        self._stop.set()
        self._lease_thread.join(timeout=5)
        self._adopt_thread.join(timeout=5)
        self.scheduler.close()
        with contextlib.suppress(StoreError):
            self.ownership.release_all()
