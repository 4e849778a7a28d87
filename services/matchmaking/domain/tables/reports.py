"""The gateway's reports of matchmaking's tables (RecordHand, TableFinished): each checked
against the allocation (:mod:`.allocated`: reports about any other table are refused), then the
hand into the ledger, the bankrupt seats answered, the tournament round or the room moved on.

A part of :class:`~services.matchmaking.service.Matchmaking`: ``bankrupt_after`` is the economy
desk's, ``changes`` the facade's change notification; ``wake_ticker`` (set by the server) ticks
now when a round's last table settled, so a round's barrier waits for no tick period.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from services.matchmaking.domain.changes import Changes
from services.matchmaking.domain.clock import Clock
from services.matchmaking.domain.economy import double_cards, ledger
from services.matchmaking.domain.economy.repository import HoldRepository
from services.matchmaking.domain.integrity import counts as integrity
from services.matchmaking.domain.ports import Metrics, Records
from services.matchmaking.domain.rooms import private as rooms
from services.matchmaking.domain.rooms.repository import RoomRepository
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.domain.tables.repository import TableRepository
from services.matchmaking.domain.tables.tags import parse_room, parse_tournament
from services.matchmaking.domain.tournaments import rounds as tournament_rounds
from services.matchmaking.domain.tournaments.repository import TournamentRepository
from shared.errors import FailedPrecondition, InvalidArgument, NotFound

log = structlog.get_logger("mahjong.matchmaking")


class ReportDesk:
    def __init__(
        self,
        store: Records,
        room_records: RoomRepository,
        tables: TableRepository,
        tournament_records: TournamentRepository,
        holds: HoldRepository,
        clock: Clock,
        changes: Changes,
        bankrupt_after: Callable[[ledger.HandReport], tuple[list[int], list[str]]],
        metrics: Metrics,
        signals: integrity.IntegrityRepository | None = None,
    ) -> None:
        """``signals``: where each recorded hand's collusion signals are counted (None: not
        counted)."""
        self.metrics = metrics
        self.signals = signals
        self.store = store
        self.room_records = room_records
        self.tables = tables
        self.tournament_records = tournament_records
        self.holds = holds
        self.clock = clock
        self.notify = changes.notify
        self.notify_tournament = changes.notify_tournament
        self.bankrupt_after = bankrupt_after
        self.wake_ticker: Callable[[], None] = lambda: None

    def record_hand(self, report: ledger.HandReport) -> bool:
        """Record a settled hand (idempotent by hand id); True when new (:meth:`hand_answer`)."""
        return self.hand_answer(report)[0]

    def hand_answer(self, report: ledger.HandReport) -> tuple[bool, list[int], list[str]]:
        """Record a settled hand (idempotent by hand id): whether it was new, the seats whose
        player no longer covers a hand (破产: they leave after it) and the bots taking them.
        Only for a table matchmaking allocated, with its tag and its players by seat (else
        refused, nothing recorded: see :mod:`.domain.tables.allocated`)."""
        ledger.validate_report(report)
        self._check_report(
            report.table_id,
            report.tag,
            report.player_ids,
            report.hand_id,
            report.fees,
            report.escaped_seat is not None,
        )
        new = ledger.record_hand(
            self.store, report, self.clock(), double_cards.consume_legs(report), self.metrics
        )
        self.metrics.hand_recorded(new)
        log.info(
            "hand_recorded", hand=report.hand_id, table=report.table_id, tag=report.tag, new=new
        )
        self._count_signals(report)
        where = parse_tournament(report.tag)
        seats, bots = self.bankrupt_after(report)
        if where:  # a table that finished before this hand reached the ledger settles now
            ms = int(self.clock() * 1000)
            if tournament_rounds.hand_recorded(
                self.tournament_records,
                self.store,
                where.tournament_id,
                where.round,
                where.table,
                ms,
            ):
                self.wake_ticker()  # the round's last table: the next round, now
            self.notify_tournament(where.tournament_id)
        else:
            self.notify()
        return new, seats, bots

    def _count_signals(self, report: ledger.HandReport) -> None:
        """The hand's collusion signals, counted once per hand id (a repeat too: the first
        report may have been recorded by a replica that stopped before counting). An escape's
        own report (its penalty) is no hand played together. Never refuses a recorded hand:
        a failure is logged (and that hand's signals lost)."""
        if self.signals is None or report.escaped_seat is not None:
            return
        try:
            integrity.record_hand(self.signals, report.hand_id, report.player_ids, report.facts)
        except Exception as exc:  # the hand is in the ledger: its signals must not undo that
            log.warning("hand_signals_not_counted", hand=report.hand_id, error=repr(exc))

    def table_finished(self, table_id: str, tag: str, hands_played: int) -> None:
        if not table_id:
            raise InvalidArgument("table_id is empty", field="table_id")
        if hands_played < 0:
            raise InvalidArgument(f"hands_played {hands_played} is negative")
        self._check_report(table_id, tag)
        double_cards.release_table(
            self.store, self.holds, table_id, self.clock()
        )  # hands never started
        allocated_tables.finish(self.tables, table_id)  # its seats are free: spending too
        where = parse_tournament(tag)
        if where:  # recorded; the round's next step is the ticker's (its failure is not ours)
            settled = tournament_rounds.table_finished(
                self.tournament_records,
                self.store,
                where.tournament_id,
                where.round,
                where.table,
                table_id,
                hands_played,
                int(self.clock() * 1000),
            )
            if settled.round_done:
                self.wake_ticker()  # the round's last table: the next round, now
            self.notify_tournament(where.tournament_id)
            return
        if code := parse_room(tag):
            rooms.finish_room(self.room_records, code, table_id)
        self.notify()

    def _check_report(
        self, table_id: str, tag: str, player_ids=None, hand_id: str = "", fees=None, escaped=False
    ) -> None:
        try:
            allocated_tables.check_report(
                self.tables, table_id, tag, player_ids, hand_id, fees, escaped
            )
        except (NotFound, FailedPrecondition) as exc:
            self.metrics.report_refused(exc.reason)
            log.error(
                "report_refused", table=table_id, tag=tag, reason=exc.reason, error=exc.message
            )
            raise
