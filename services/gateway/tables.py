"""Live tables of one gateway replica: creation, seats, actions, views and event streams.

Each table is a :class:`~services.gateway.domain.session.TableSession` behind a lock (one
writer). Every event the session emits is appended to the table's log in the store (namespace
``gateway-log/<table id>``, numbered from 1: the per-table sequence numbers clients see) and
wakes the table's subscribers. The replica owns a table through a lease record
(``gateway-lease``) it renews; requests are idempotent by request id (``gateway-request``);
settled hands go to the matchmaking outbox (``gateway-outbox``).

CreateTable is idempotent by request id (``gateway-create``: request id -> the table id and a
fingerprint of the request, :func:`spec_fingerprint`). A retry of the same request returns the
same table and seat tokens; the same request id with a different request (other seats, ruleset,
stake, limits, tag, ...) is refused with FAILED_PRECONDITION ``REQUEST_ID_REUSED`` and creates
nothing. Records from before the fingerprint (a bare table id) still answer any retry.

Idempotency: the first result of a seat's request id is kept (in memory and in the store, so a
replica taking the table over knows it too) and given again for a repeated id — an accepted
action's sequence number, a Leave's penalty, or a refusal (its status code, message, reason and
details, returned as the same error): a request refused once is never evaluated again, even if
it would be legal later. Refusals that come before the request id can be tied to a seat
(malformed input, a bad token) or that say nothing about the request (NOT_OWNER: this replica
no longer runs the table; the client retries where the table is now; TABLE_FINISHED: nothing
can happen at a finished table any more) are not kept.

How long request ids are kept: as long as a client may retry, not forever. Each record notes the
table's last sequence number when it was made (``at``); when a hand starts, the records made
before the previous hand started are dropped, here and in the store — so the ids of the current
and the previous hand are always known (the same two hands whose events are held in memory), and
a table holds at most two hands' worth of them. A retry of a forgotten id (a hand and more
later) is evaluated again: its ``last_sequence`` is older than any prompt of the seat now, so it
is refused (ABORTED, or FAILED_PRECONDITION without a prompt) and applies nothing. When the table
finishes, its records in the store are deleted (the ones in memory answer retries until the
table leaves memory); after that every Act is TABLE_FINISHED.

Finished tables leave memory: ``--finished-table-ttl-seconds`` (GatewaySettings
``finished_table_ttl_ms``, default 300 s) after ``table_finished`` the table is dropped from
:attr:`TableManager.tables`. A later Subscribe, GetTableState or JoinSeat loads it
again, read-only, from its log (:meth:`TableManager._recover`: no lease is taken, nothing is
scheduled or written) and drops it again after the same time. Such a view has the table's final
seats, chips and counters but no ``hand`` (the last hand is in the log: ``hand_result``,
``seed_revealed``). The log, the seats (``gateway-table``), ``gateway-create`` and
``gateway-reported`` stay: replay export and CreateTable retries need them.

Losing a table: a replica whose lease renewal finds another replica's lease running (it was
paused or cut off longer than the lease) stops serving that table at once: the table leaves
memory, its Subscribe streams end UNAVAILABLE with reason NOT_OWNER after the events already
held, and Act and every later call for it answer UNAVAILABLE NOT_OWNER — with the new owner's
address (``owner_address``, from the lease record) in the error's details when it has one — so
the client reconnects there and resumes from its last sequence number.

Request checks, in order: malformed input INVALID_ARGUMENT (before any lock), the token
(UNAUTHENTICATED forged, PERMISSION_DENIED another table/seat), a known request id returns its
first result, a last sequence number older than the seat's pending prompt ABORTED — or, with
no prompt pending, older than the seat's latest decision (its last prompt or the action that
answered it, e.g. the timer's: a late answer is stale, not out of turn) — then the action
against the options held (FAILED_PRECONDITION). A refused request changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import structlog

from services.gateway import metrics
from services.gateway.domain.events import project
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import (
    FINISHED,
    PLAYING,
    RETRY_ATTEMPTS,
    Policy,
    Ports,
    ResumePlay,
    Seat,
    SessionConfig,
    TableSession,
)
from services.gateway.domain.tokens import sign_seat_token, verify_seat_token
from services.gateway.runtime import LockedScheduler, ThreadScheduler
from shared.errors import (
    Aborted,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unavailable,
)
from shared.ruleset import Ruleset
from shared.store import AlreadyExists, Store
from shared.table import Action

log_ = structlog.get_logger("mahjong.gateway")

LOG_PREFIX = "gateway-log/"


def step_failed(table_id: str, attempt: int, exc: Exception) -> None:
    """A table's engine step failed (a service call): it is retried; logged and counted, as an
    error once the table is stalled (its retries with short backoff used up)."""
    stalled = attempt >= RETRY_ATTEMPTS
    metrics.STEP_FAILURES.labels("true" if stalled else "false").inc()
    (log_.error if stalled else log_.warning)(
        "engine_step_failed", table=table_id, attempt=attempt, stalled=stalled, error=repr(exc)
    )


LEASES = "gateway-lease"
REQUESTS = "gateway-request"
CREATES = "gateway-create"
# "<table id>/<player id>" -> the request id of the JoinSeat that gave the player its open seat:
# a retry of that request (its answer lost) gets the seat's token again without holding it.
JOINS = "gateway-join"
OUTBOX = "gateway-outbox"
# table id -> b"1" / b"0": whether the table's hands go to matchmaking's ledger (absent: a table
# from before this record existed, reported as all tables were then).
REPORTED = "gateway-reported"
MAX_ID = 128


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


@dataclass
class Event:
    seq: int
    t: int
    kind: str
    data: dict[str, Any]


@dataclass
class TableSpec:
    """A validated CreateTable request."""

    request_id: str
    ruleset: Ruleset
    ruleset_name: str
    overrides: dict[str, str]
    stake: int
    seats: list[Seat]
    max_hands: int
    tag: str
    first_dealer: int | None
    max_rounds: int = 0
    # Report its hands to matchmaking's ledger: only tables a service of the deployment created
    # (matchmaking's), never casual ones (``mahjong play``, tests, clients), which it refuses.
    report_hands: bool = True
    # How long the table waits for its open seats (0 = forever); None = the gateway's setting.
    seat_wait_ms: int | None = None


def spec_fingerprint(spec: TableSpec) -> str:
    """SHA-256 (hex) of the canonical form of what a CreateTable asks for: every field that
    defines the table, as sorted JSON. The request id is the key, not part of it; who calls
    (``report_hands``, from the caller's token) is not part of the request either."""
    canonical = {
        "ruleset": spec.ruleset_name,
        "overrides": dict(sorted(spec.overrides.items())),
        "stake": spec.stake,
        "seats": [[s.player_id, s.display_name, s.bot] for s in spec.seats],
        "max_hands": spec.max_hands,
        "max_rounds": spec.max_rounds,
        "tag": spec.tag,
        "first_dealer": spec.first_dealer,
        "seat_wait_ms": spec.seat_wait_ms,
    }
    raw = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


def create_record(table_id: str, fingerprint: str) -> bytes:
    """The ``gateway-create`` record of a request id."""
    return json.dumps({"table_id": table_id, "fingerprint": fingerprint}).encode()


def parse_create_record(raw: bytes) -> tuple[str, str | None]:
    """(table id, request fingerprint) of a ``gateway-create`` record; the earlier format, a
    bare table id, has no fingerprint (None: any retry gets the table)."""
    if raw.startswith(b"{"):
        d = json.loads(raw)
        return d["table_id"], d.get("fingerprint")
    return raw.decode(), None


def read_table_log(
    store: Store, table_id: str, after: int = 0, limit: int | None = None
) -> list[tuple[int, int, str, dict[str, Any]]]:
    """A table's event log from the store as (seq, time ms, kind, data), after ``after``, at
    most ``limit`` entries: replays, exports, checks and late subscribers."""
    out = []
    for seq, raw in store.read_log(LOG_PREFIX + table_id, after, limit):
        d = json.loads(raw)
        out.append((seq, d["t"], d["kind"], d["data"]))
    return out


class LiveTable:
    def __init__(self, table_id: str, tag: str, report_hands: bool = True) -> None:
        self.id = table_id
        self.tag = tag
        self.report_hands = report_hands
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        # The events of the current and the previous hand (older ones are read from the
        # store): ``events[i].seq == base + i + 1``.
        self.events: list[Event] = []
        self.base = 0
        self.hand_starts: list[int] = []
        # (seat, request id) -> the first result: {"result": n} or {"refused": {...}}.
        self.requests: dict[tuple[int, str], dict[str, Any]] = {}
        self.session: TableSession | None = None
        self.owned = True
        # seat -> the sequence of its latest decision event: its latest prompt, or the action
        # that answered it (the seat's own, the timer's or 托管's). A request whose last
        # sequence is older was decided on a stale state: ABORTED, even once the prompt is
        # gone (a late answer after the timer decided for the seat).
        self.last_decision: dict[int, int] = {}

    @property
    def head(self) -> int:
        return self.base + len(self.events)

    def keep(self, ev: Event) -> None:
        """Hold ``ev``; when a hand starts, drop what came before the previous hand."""
        self.events.append(ev)
        if ev.kind == "prompt" or ev.kind == "action":
            self.last_decision[ev.data["seat"]] = ev.seq
        if ev.kind == "hand_started":
            self.hand_starts.append(ev.seq)
            if len(self.hand_starts) > 2:
                cut = self.hand_starts[-2]  # first event of the previous hand
                del self.events[: cut - 1 - self.base]
                self.base = cut - 1
                self.hand_starts = self.hand_starts[-2:]


def _error_classes() -> dict[str, type[DomainError]]:
    out: dict[str, type[DomainError]] = {}
    todo = [DomainError]
    while todo:
        cls = todo.pop()
        out.setdefault(cls.code, cls)
        todo.extend(cls.__subclasses__())
    return out


ERROR_CLASSES = _error_classes()


def refusal_record(exc: DomainError) -> dict[str, Any]:
    """A refusal as kept for its request id (JSON-able)."""
    return {
        "refused": {
            "code": exc.code,
            "message": exc.message,
            "reason": exc.reason,
            "details": dict(exc.details),
        }
    }


def replay_result(record: dict[str, Any]) -> int:
    """The first result of a repeated request id: its value, or its refusal raised again."""
    refused = record.get("refused")
    if refused is None:
        return int(record["result"])
    cls = ERROR_CLASSES.get(refused["code"], DomainError)
    raise cls(refused["message"], reason=refused["reason"], **refused["details"])


def parse_request_record(raw: bytes) -> dict[str, Any]:
    """A stored request record; a bare number is an accepted result (the earlier format)."""
    value = json.loads(raw)
    return {"result": int(value)} if isinstance(value, int) else value


def check_id(value: str, field_name: str, *, required: bool = True) -> str:
    if not value:
        if required:
            raise InvalidArgument(f"{field_name} is empty", field=field_name)
        return value
    if len(value) > MAX_ID or not value.isprintable():
        raise InvalidArgument(
            f"{field_name} must be printable and at most {MAX_ID} characters", field=field_name
        )
    return value


class TableManager:
    def __init__(
        self,
        store: Store,
        ports: Ports,
        settings: GatewaySettings,
        *,
        policy: Policy,
        scheduler: ThreadScheduler | None = None,
        on_event: Callable[[LiveTable, Event], None] | None = None,
    ) -> None:
        self.store = store
        self.ports = ports
        self.settings = settings
        self.policy = policy
        self.scheduler = scheduler or ThreadScheduler(settings.timer_workers)
        self.on_event = on_event
        self.tables: dict[str, LiveTable] = {}
        self._lock = threading.Lock()
        self._recover_lock = threading.RLock()
        self._stop = threading.Event()
        self._lease_thread = threading.Thread(target=self._renew_leases, daemon=True)
        self._lease_thread.start()

    # --- tables ----------------------------------------------------------------------------
    def create_table(self, spec: TableSpec) -> tuple[str, list[str]]:
        fingerprint = spec_fingerprint(spec)
        if spec.request_id and self.store.get(CREATES, spec.request_id) is not None:
            return self._created_for(spec.request_id, fingerprint)
        table_id = "t_" + secrets.token_hex(8)
        # The seats are stored before the request id is claimed: a retry of the same request
        # that arrives while this call is still starting the table then finds them and answers
        # with the seat tokens (before, it found no seats and answered with none).
        seats_json = [{"player_id": s.player_id, "bot": s.bot} for s in spec.seats]
        self.store.put("gateway-table", table_id, json.dumps(seats_json).encode())
        self.store.put(REPORTED, table_id, b"1" if spec.report_hands else b"0")
        if spec.request_id:
            try:
                self.store.create(CREATES, spec.request_id, create_record(table_id, fingerprint))
            except AlreadyExists:  # a concurrent call with the same request id won
                self.store.delete("gateway-table", table_id)
                self.store.delete(REPORTED, table_id)
                return self._created_for(spec.request_id, fingerprint)
        self._take_lease(table_id)
        table = LiveTable(table_id, spec.tag, spec.report_hands)
        lock = table.lock
        sched = LockedScheduler(self.scheduler, lock, lambda: None, table_id)
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
                seat_wait_ms=(
                    self.settings.seat_wait_ms if spec.seat_wait_ms is None else spec.seat_wait_ms
                ),
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
            # The first hand starts from the scheduler so CreateTable answers at once.
            sched.call_later(0, session.start)
        return table_id, self._seat_tokens(table_id, seats_json)

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
        return {
            "ports": self.ports,
            "scheduler": sched,
            "emit": lambda kind, data: self._append(table, kind, data),
            "report": lambda kind, data: self._report(table, kind, data),
            "policy": self.policy,
            "on_step_failed": lambda attempt, exc: step_failed(table.id, attempt, exc),
        }

    def _seats_of(self, table_id: str) -> bytes:
        rec = self.store.get("gateway-table", table_id)
        return rec.value if rec else b"[]"

    def _created_for(self, request_id: str, fingerprint: str) -> tuple[str, list[str]]:
        """The table an earlier CreateTable with ``request_id`` made, and its seat tokens —
        if that request was this one (same ``fingerprint``)."""
        rec = self.store.get(CREATES, request_id)
        assert rec is not None
        table_id, first = parse_create_record(rec.value)
        if first is not None and first != fingerprint:
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
        seats = self.store.get("gateway-table", table_id)
        if seats is None:  # a start cut short before its seats were stored
            raise Unavailable(
                f"table {table_id} for request_id {request_id!r} is not ready; retry",
                reason="TABLE_STARTING",
                request_id=request_id,
            )
        return table_id, self._seat_tokens(table_id, json.loads(seats.value))

    def _seat_tokens(self, table_id: str, seats: list[dict[str, Any]]) -> list[str]:
        return [
            sign_seat_token(self.settings.secret, table_id, i)
            if s["player_id"] and not s["bot"]
            else ""
            for i, s in enumerate(seats)
        ]

    def table(self, table_id: str) -> LiveTable:
        """A live table; one whose owner's lease expired is taken over from its log."""
        check_id(table_id, "table_id")
        t = self.tables.get(table_id)
        if t is None:
            t = self._recover(table_id)
        if t is None:
            lease = self._lease(table_id)
            if lease and lease.get("owner") != self.settings.replica_id:
                raise self._not_owner(table_id, lease)
            raise NotFound(f"no table {table_id!r} on this gateway", table_id=table_id)
        return t

    def _lease(self, table_id: str) -> dict[str, Any] | None:
        rec = self.store.get(LEASES, table_id)
        return json.loads(rec.value) if rec else None

    def _not_owner(self, table_id: str, lease: dict[str, Any] | None = None) -> Unavailable:
        """UNAVAILABLE NOT_OWNER: another replica runs the table now; its address (from the
        lease record, when it advertises one) is in the details, to reconnect there."""
        lease = self._lease(table_id) if lease is None else lease
        where = (lease or {}).get("address", "")
        details = {"table_id": table_id}
        if where:
            details["owner_address"] = where
        return Unavailable(
            f"gateway replica {self.settings.replica_id} does not run table {table_id} (any "
            f"more); {'reconnect to ' + where if where else 'retry through the load balancer'}",
            reason="NOT_OWNER",
            **details,
        )

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
            finished = any(k == "table_finished" for _, _, k, _ in log)
            if finished:  # nothing to own; a lease left by a race with its end goes
                self.store.delete(LEASES, table_id)
            elif not self._claim_lease(table_id):
                return None
            started = next(d for _, _, k, d in log if k == "table_started")
            reported = self.store.get(REPORTED, table_id)
            table = LiveTable(table_id, started["tag"], reported is None or reported.value == b"1")
            for q, t, k, d in log:
                table.keep(Event(q, t, k, d))
            prefix = f"{table_id}/"
            for key, rec in [] if finished else self.store.scan(REQUESTS, prefix):
                seat, _, rid = key[len(prefix) :].partition("/")
                record = parse_request_record(rec.value)
                record.setdefault("at", table.head)  # earlier records: kept one more hand
                table.requests[(int(seat), rid)] = record
            self._prune_requests(table)
            sched = LockedScheduler(self.scheduler, table.lock, lambda: None, table_id)
            with table.lock:
                session = restore_session(
                    table_id,
                    log,
                    timers=self._timers(),
                    **self._wiring(table, sched),
                )
                table.session = session
            self.tables[table_id] = table
            if session.phase == FINISHED:
                self._evict_later(table)
            elif self.on_event is not None:
                self.on_event(table, Event(0, 0, "table_taken_over", {}))
            log_.info("table_taken_over", table=table_id, events=len(log), phase=session.phase)
            return table

    def _claim_lease(self, table_id: str, now: int | None = None) -> bool:
        """Take or renew this replica's lease on a table; False while another replica's lease
        is still running. One atomic store update, so two replicas never both own a table."""
        now = int(time.time() * 1000) if now is None else now

        def claim(raw: bytes | None) -> tuple[bytes | None, bool]:
            cur = json.loads(raw) if raw else {}
            mine = cur.get("owner") == self.settings.replica_id
            if not mine and cur.get("expires_ms", 0) > now:
                return None, False
            cur.update(
                owner=self.settings.replica_id,
                address=self.settings.address,
                expires_ms=now + self.settings.lease_ms,
            )
            return json.dumps(cur).encode(), True

        return self.store.update(LEASES, table_id, claim)

    def _take_over_expired(self) -> None:
        """Adopt every table whose owner stopped renewing its lease."""
        now = int(time.time() * 1000)
        for table_id, rec in self.store.scan(LEASES):
            if table_id in self.tables:
                continue
            lease = json.loads(rec.value)
            if lease.get("expires_ms", 0) > now and lease.get("owner") != self.settings.replica_id:
                continue
            try:
                self._recover(table_id)
            except Exception as exc:  # one broken table must not stop the others
                log_.exception("take_over_failed", table=table_id, error=repr(exc))

    def _session(self, t: LiveTable) -> TableSession:
        if t.session is None:
            raise NotFound(f"table {t.id!r} is not ready")
        return t.session

    # --- events ----------------------------------------------------------------------------
    def _append(self, table: LiveTable, kind: str, data: dict[str, Any]) -> int:
        if not table.owned:  # another replica took the table over: write nothing more
            raise self._not_owner(table.id)
        t = int(time.time() * 1000)
        entry = json.dumps({"t": t, "kind": kind, "data": data}, separators=(",", ":"))
        seq = self.store.append(LOG_PREFIX + table.id, entry.encode())
        ev = Event(seq, t, kind, data)
        table.keep(ev)
        if seq != table.head:
            log_.error("event_log_out_of_step", table=table.id, seq=seq, held=table.head)
        if self.on_event is not None:
            self.on_event(table, ev)
        if kind == "hand_started":
            self._prune_requests(table)
        elif kind == "table_finished":  # nothing left to own or to retry
            self.store.delete(LEASES, table.id)
            for key, _ in list(self.store.scan(REQUESTS, f"{table.id}/")):
                self.store.delete(REQUESTS, key)
            self._evict_later(table)
        table.cond.notify_all()
        return seq

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
        if not (self.settings.report_to_matchmaking and table.report_hands):
            return
        session = table.session
        players = (
            [s.player_id or f"bot:{i}" for i, s in enumerate(session.seats)] if session else []
        )
        if kind == "hand":
            payload = {
                "kind": "hand",
                "hand_id": data["hand_id"],
                "table_id": table.id,
                "tag": table.tag,
                "player_ids": players,
                "payments": data["payments"],
                "house": data["house"],
                "escaped_seat": data.get("escaped_seat"),
            }
            key = f"{table.id}/{data['hand_id']}"
        else:
            payload = {
                "kind": "finished",
                "table_id": table.id,
                "tag": table.tag,
                "hands_played": data["hands_played"],
            }
            key = f"{table.id}/~finished"
        self.store.put(OUTBOX, key, json.dumps(payload).encode())

    # --- leases ----------------------------------------------------------------------------
    def _take_lease(self, table_id: str) -> None:
        value = json.dumps(
            {
                "owner": self.settings.replica_id,
                "address": self.settings.address,
                "expires_ms": int(time.time() * 1000) + self.settings.lease_ms,
            }
        ).encode()
        self.store.put(LEASES, table_id, value)

    def _renew_leases(self) -> None:
        interval = max(0.2, self.settings.lease_ms / 3000)
        while not self._stop.wait(interval):
            now = int(time.time() * 1000)
            for table in list(self.tables.values()):
                s = table.session
                if s is None or s.phase == FINISHED:
                    continue
                try:
                    owned = self._claim_lease(table.id, now)
                    if owned and s.phase == FINISHED:  # it finished meanwhile: no lease
                        self.store.delete(LEASES, table.id)
                except Exception as exc:  # the store is down: keep playing, retry later
                    log_.warning("lease_renewal_failed", table=table.id, error=repr(exc))
                    continue
                if not owned:
                    self._lost(table)
            try:
                self._take_over_expired()
            except Exception as exc:
                log_.warning("take_over_scan_failed", error=repr(exc))

    def _lost(self, table: LiveTable) -> None:
        """Another replica holds the table's lease now (this one was paused or cut off longer
        than the lease): stop serving it. Its streams end NOT_OWNER, later calls find it
        gone from memory and answer NOT_OWNER with the new owner's address; its session is
        never written to again (if the lease comes back, the table is rebuilt from the log)."""
        with table.cond:  # first: nothing of this replica's may be appended from here on
            table.owned = False
            if table.session is not None:
                table.session.detach()
            table.cond.notify_all()  # its streams end
        self._forget(table, "lease_lost")
        log_.warning("table_lost", table=table.id, lease=self._lease(table.id))
        if self.on_event is not None:
            self.on_event(table, Event(0, 0, "table_lost", {}))

    # --- seats -----------------------------------------------------------------------------
    def _viewer(self, table: LiveTable, token: str, seat_claim: int | None) -> int | None:
        seat = verify_seat_token(self.settings.secret, token, table.id)
        if seat_claim is not None and seat_claim != seat:
            raise PermissionDenied(
                f"seat_token is for {'a spectator' if seat is None else f'seat {seat}'}, "
                f"not seat {seat_claim}",
                field="seat_token",
            )
        return seat

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
        — or to a service of the deployment (``internal``); anyone else is PERMISSION_DENIED."""
        table = self.table(table_id)
        if spectator:
            return None, sign_seat_token(self.settings.secret, table.id, None), table.head
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
            session.join(chosen, player_id, display_name)
            if request_id and not mine:  # took an open seat: a retry of this request may too
                self.store.put(JOINS, f"{table.id}/{player_id}", request_id.encode())
            return chosen, sign_seat_token(self.settings.secret, table.id, chosen), table.head

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
        action: Action,
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
                return replay_result(table.requests[key]), True
            if not table.owned:  # not kept: the request was not evaluated here
                raise self._not_owner(table.id)
            self._refuse_if_finished(table)  # not kept: nothing is remembered of a finished table
            try:
                seq = self._apply(table, seat, last_sequence, action)
            except DomainError as exc:
                if exc.reason != "NOT_OWNER":
                    self._remember(table, seat, request_id, refusal_record(exc))
                raise
            self._remember(table, seat, request_id, {"result": seq})
            return seq, False

    def _remember(self, table: LiveTable, seat: int, request_id: str, record: dict) -> None:
        """Keep the first result of a seat's request id, here and in the store, noting when
        (``at``: the table's last sequence number) for :meth:`_prune_requests`."""
        record["at"] = table.head
        table.requests[(seat, request_id)] = record
        self.store.put(REQUESTS, f"{table.id}/{seat}/{request_id}", json.dumps(record).encode())

    def _prune_requests(self, table: LiveTable) -> None:
        """Forget the request ids made before the previous hand started (module docstring)."""
        if len(table.hand_starts) < 2:
            return
        cut = table.hand_starts[-2]
        old = [key for key, rec in table.requests.items() if rec["at"] < cut]
        for seat, rid in old:
            del table.requests[(seat, rid)]
            self.store.delete(REQUESTS, f"{table.id}/{seat}/{rid}")

    def _refuse_if_finished(self, table: LiveTable) -> None:
        session = self._session(table)
        if session.phase == FINISHED:
            why = f" ({session.finish_reason})" if session.finish_reason else ""
            raise FailedPrecondition(
                f"table {table.id} has finished{why}",
                reason="TABLE_FINISHED",
                finish_reason=session.finish_reason,
            )

    def _apply(self, table: LiveTable, seat: int, last_sequence: int, action: Action) -> int:
        """Check an action against the table's state and apply it; the resulting sequence."""
        if last_sequence > table.head:
            raise InvalidArgument(
                f"last_sequence {last_sequence} is beyond the table's last event {table.head}",
                field="last_sequence",
            )
        session = self._session(table)
        if isinstance(action, ResumePlay):  # ends 托管: no decision on a prompt, never stale
            session.act(seat, action)
            return table.head
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
        session.act(seat, action)
        return table.head

    def leave(self, table_id: str, token: str, request_id: str) -> int:
        check_id(request_id, "request_id", required=False)
        table = self.table(table_id)
        with table.lock:
            seat = self._viewer(table, token, None)
            if seat is None:
                return 0  # a spectator just goes
            rid = "leave:" + request_id
            if request_id and (seat, rid) in table.requests:
                return replay_result(table.requests[(seat, rid)])
            if not table.owned:
                raise self._not_owner(table.id)
            if self._session(table).phase == FINISHED:
                return 0  # the table is over: nothing to pay and nothing to write
            try:
                penalty = self._session(table).leave(seat)
            except DomainError as exc:
                if request_id and exc.reason != "NOT_OWNER":
                    self._remember(table, seat, rid, refusal_record(exc))
                raise
            if request_id:
                self._remember(table, seat, rid, {"result": penalty})
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

    def subscribe(
        self, table_id: str, token: str, after: int, active: Callable[[], bool]
    ) -> Iterator[tuple[Event, dict[str, Any]]]:
        """The viewer's events after ``after``, then live ones until the table finishes."""
        if after < 0:
            raise InvalidArgument("after_sequence is negative", field="after_sequence")
        table = self.table(table_id)
        with table.lock:
            viewer = self._viewer(table, token, None)
            if after > table.head:
                raise InvalidArgument(
                    f"after_sequence {after} is beyond the table's last event {table.head}",
                    field="after_sequence",
                )
        index = after
        while active():
            with table.cond:
                while index >= table.head and active():
                    session = table.session
                    if session is not None and session.phase == FINISHED:
                        return
                    if not table.owned:  # every event held was sent: go to the new owner
                        raise self._not_owner(table.id)
                    table.cond.wait(0.25)
                base = table.base
                batch = table.events[index - base :] if index >= base else []
            if index < base:  # older than what is held: from the store
                batch = [
                    Event(q, t, k, d)
                    for q, t, k, d in read_table_log(self.store, table.id, index, base - index)
                ]
            if not batch:
                continue
            index = batch[-1].seq
            for ev in batch:
                seen = project(ev.kind, ev.data, viewer)
                if seen is not None:
                    yield ev, seen

    def close(self) -> None:
        self._stop.set()
        self.scheduler.close()
