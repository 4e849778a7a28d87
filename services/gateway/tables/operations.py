"""The operator's calls on this replica's tables (README "Operations"): ListTables (the tables
held here, filtered, each one's public state; the cluster's listing is :mod:`.listing`'s) and
EndTable
(:func:`~services.gateway.domain.session.ending.end_table`, in one fenced step like any other
action). EndTable is appended to the deployment's audit log (:mod:`shared.audit`, the store's
log the services share), refused or done, with who asked and why — by the replica that runs
the table: a NOT_OWNER refusal is sent on to the owner (:mod:`services.gateway.console`), which
records it."""

from __future__ import annotations

import time
from dataclasses import dataclass

import structlog

from infra.store import Store
from services.gateway.domain.events import views as event_views
from services.gateway.domain.session import HALTED, presence
from services.gateway.domain.session.ending import Ended, end_table
from services.gateway.tables.access import TableAccess
from services.gateway.tables.log import read_table_log
from services.gateway.tables.registry import TableRegistry
from services.gateway.tables.steps import StepWriter
from shared import audit
from shared.errors import DomainError, InvalidArgument, NotFound

log = structlog.get_logger("mahjong.gateway.operations")
MAX_PREFIX = 200
MAX_EVENTS, DEFAULT_EVENTS = 1000, 200


@dataclass(frozen=True, slots=True)
class TableSummary:
    table_id: str
    tag: str
    phase: str
    stake: int
    hands_played: int
    hand_id: str
    hand_number: int
    player_ids: tuple[str, ...]
    auto_play: tuple[bool, ...]
    chips: tuple[int, ...]
    last_sequence: int
    finish_reason: str
    left: tuple[bool, ...] = ()


class TableOperations:
    def __init__(
        self, store: Store, registry: TableRegistry, access: TableAccess, writer: StepWriter
    ) -> None:
        self.store = store
        self.registry = registry
        self.access = access
        self.writer = writer

    def list_tables(
        self, tag_prefix: str, stake: int, halted_only: bool, leased_only: bool = False
    ) -> list[TableSummary]:
        """The tables in this replica's memory whose tag starts with ``tag_prefix``, at
        ``stake`` (0: any), halted only if asked; by table id. ``leased_only``: only those
        whose lease this replica holds (what it tells another replica listing the cluster)."""
        if len(tag_prefix) > MAX_PREFIX:
            raise InvalidArgument(f"tag_prefix is over {MAX_PREFIX} characters", field="tag_prefix")
        if stake < 0:
            raise InvalidArgument(f"stake {stake} is negative", field="stake")
        with self.registry.lock:
            tables = sorted(self.registry.tables.values(), key=lambda t: t.id)
        out = []
        ownership = self.access.leases.ownership
        for table in tables:
            if not table.tag.startswith(tag_prefix):
                continue
            if leased_only and not ownership.owns(table.id):
                continue
            with table.lock:
                t = table.session
                if t is None or not table.owned:
                    continue
                if (stake and t.config.stake != stake) or (halted_only and t.phase != HALTED):
                    continue
                hand_id, number = t.head()
                out.append(
                    TableSummary(
                        table.id,
                        table.tag,
                        t.phase,
                        t.config.stake,
                        t.hands_played,
                        hand_id,
                        number,
                        tuple(s.player_id for s in t.seats),
                        tuple(s.auto_play for s in t.seats),
                        tuple(s.chips for s in t.seats),
                        table.last_seq,
                        t.finish_reason or "",
                        tuple(s.left for s in t.seats),
                    )
                )
        return out

    def inspect(self, table_id: str, after: int, limit: int):
        """A spectator's view of the table (as GetTableState gives it), its public events after
        sequence ``after`` (at most ``limit``, 0 = 200) as (logged, public copy), and the
        ``after`` of the next page (0: none)."""
        if after < 0:
            raise InvalidArgument(f"after_sequence {after} is negative", field="after_sequence")
        if limit < 0 or limit > MAX_EVENTS:
            raise InvalidArgument(f"limit {limit} is not in 1-{MAX_EVENTS}", field="limit")
        table = self.access.table(table_id)
        with table.lock:
            session = self.access.session(table)
            view = session.seat_view(None)
            view["last_sequence"] = table.head
            view["config"] = session.config
        logged = [e for e in read_table_log(self.store, table.id) if e.seq > after]
        size = limit or DEFAULT_EVENTS
        page, more = logged[:size], len(logged) > size
        public = [(e, event_views.project(e.event, None)) for e in page]
        events = [(e, copy) for e, copy in public if copy is not None]
        return view, events, (page[-1].seq if more else 0)

    def end_table(self, table_id: str, reason: str, actor: str) -> Ended:
        """End the table (see :mod:`~services.gateway.domain.session.ending`), audited."""
        try:
            audit.check_reason(reason)
            table = self.access.table(table_id)
            with table.lock:
                session = self.access.session(table)
                with self.writer.step(table):
                    ended = end_table(session)
        except DomainError as exc:
            if exc.reason != "NOT_OWNER":  # sent on to the owner, which records it
                self._record(actor, table_id, reason, exc.code, exc.message)
            raise
        voided = ended.voided_hand_id or "none"
        detail = f"ended; voided hand {voided}; {ended.hands_played} hands played"
        self._record(actor, table_id, reason, audit.OK, detail)
        return ended

    def suspend_player(self, table_id: str, player_id: str) -> tuple[int, bool]:
        """Matchmaking says ``player_id`` is suspended: their seat at the table goes to 托管
        and then to a bot (:func:`~services.gateway.domain.session.presence.suspend`); the
        seat, and whether anything changed."""
        table = self.access.table(table_id)
        with table.lock:
            session = self.access.session(table)
            seats = [i for i, s in enumerate(session.seats) if s.player_id == player_id]
            if not player_id or not seats:
                raise NotFound(f"no seat of {player_id!r} at table {table_id}", player_id=player_id)
            with self.writer.step(table):
                changed = presence.suspend(session, seats[0])
        log.warning("seat_suspended", table=table_id, player=player_id, changed=changed)
        return seats[0], changed

    def _record(self, actor: str, table_id: str, reason: str, result: str, detail: str) -> None:
        now_ms = int(time.time() * 1000)
        entry = audit.entry(now_ms, actor, "EndTable", table_id, reason, result, detail)
        seq = self.store.append(audit.AUDIT_LOG, entry.dump())
        log.warning("operator_action", audit_seq=seq, action="EndTable", table=table_id,
                    actor=entry.actor, result=result)  # fmt: skip
