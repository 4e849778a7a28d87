"""Creating a table (:meth:`TableCreation.create_table`, CreateTable): its seats and request id
stored, its lease taken, its session started with TableStarted in the log before the answer.

CreateTable is idempotent by request id (``gateway-create``: request id -> the table id and a
fingerprint of the request, :mod:`.creation`). A retry of the same request returns the same
table and seat tokens; the same request id with a different request (other seats, ruleset,
stake, limits, tag, deadline, ...) is refused with FAILED_PRECONDITION ``REQUEST_ID_REUSED``
and creates nothing. A start cut short (its replica died after keeping the request id, before
TableStarted was logged) is started by the retry. Callers without the internal token hold at
most ``public_tables_per_address`` live tables each.

What a new table's session is connected to is :mod:`.wiring`'s.
"""

from __future__ import annotations

import contextlib
import secrets
import threading

import structlog

from infra.store import AlreadyExists, Store
from infra.store.ownership import Ownership
from services.gateway.domain.session import SessionConfig, TableSession, presence
from services.gateway.settings import GatewaySettings
from services.gateway.tables.creation import TableSpec, seat_tokens, spec_fingerprint
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
from services.gateway.tables.registry import TableRegistry
from services.gateway.tables.wiring import SessionWiring
from shared.errors import DomainError, FailedPrecondition, ResourceExhausted, Unavailable

log_ = structlog.get_logger("mahjong.gateway")


class TableCreation:
    """New tables: their records in ``store``, their leases claimed (``ownership``), held in
    the ``registry``, their sessions connected (``wiring``)."""

    def __init__(
        self,
        store: Store,
        settings: GatewaySettings,
        ownership: Ownership,
        registry: TableRegistry,
        wiring: SessionWiring,
    ) -> None:
        self.store = store
        self.settings = settings
        self.ownership = ownership
        self.registry = registry
        self.wiring = wiring
        self._public_lock = threading.Lock()

    def create_table(self, spec: TableSpec, creator: str = "") -> tuple[str, list[str]]:
        """A new table (or the one an earlier call with the same request id made). ``creator``:
        the client address of a caller without the internal token, who may hold at most
        ``public_tables_per_address`` live tables."""
        if not creator:
            return self._create_table(spec, "")
        with self._public_lock:  # the count and the new table together: the limit is exact
            limit = self.settings.public_tables_per_address
            tables = list(self.registry.tables.values())
            held = sum(1 for t in tables if t.creator == creator and t.live)
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
        registry = self.registry
        with registry.lock:
            if table_id in registry.tables or table_id in registry.starting:
                return table_id, seat_tokens(self.settings.secret, table_id, seats)
            registry.starting.add(table_id)
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
            with registry.lock:
                registry.starting.discard(table_id)

    def _start(
        self, table_id: str, spec: TableSpec, creator: str, seats: list[SeatRecord]
    ) -> tuple[str, list[str]]:
        """Start a table whose lease this replica holds: its session, TableStarted in the log
        (before the answer), and its first hand from the scheduler."""
        st = self.settings
        table = LiveTable(table_id, spec.tag, spec.report_hands)
        table.creator = creator
        lock = table.lock
        sched = self.wiring.table_scheduler(table)
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
                fee_per_hand=spec.fee_per_hand,
                **self.wiring.timers(),
            ),
            spec.seats,
            **self.wiring.connect(table, sched),
        )
        table.session = session
        self.registry.add(table)
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
            presence.watch(session)  # 掉线: each player's grace runs until a stream opens
            sched.call_later(0, session.begin)
        return table_id, seat_tokens(st.secret, table_id, seats)

    def _abandon(self, table: LiveTable, request_id: str) -> None:
        """Undo a table whose first event could not be written: a retry of its CreateTable
        makes a new one."""
        with self.registry.lock:
            self.registry.tables.pop(table.id, None)
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
                "request (seats, ruleset, stake, limits, tag, first dealer, seat wait, "
                "deadline or fee differ); a retry must repeat the request exactly, a new "
                "table needs a new request id",
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
