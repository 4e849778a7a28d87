"""The transactional outbox: what a table reports to matchmaking (each settled hand, and the
table's end) is a row of ``gateway-outbox`` written in the same step as the events it reports,
so a report exists exactly when its hand's result is in the log; :mod:`services.gateway.outbox`
delivers the rows. The end is the table's last write: its lease is released after it.

A reporting table deals its next hand only once matchmaking's answer to the last one is in the
store (``gateway-hand-answer``, kept by whichever replica's outbox sender delivered the report:
:mod:`services.gateway.outbox`), and applies its bankrupt seats (破产) before the deal
(:meth:`TableReports.hand_answer`, the session's ``hand_answer``). The answers go with the
table's end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import structlog

from infra.store import Store
from infra.store.base import StoreError
from infra.store.ownership import Ownership
from services.gateway.domain.hand_facts import hand_facts
from services.gateway.settings import GatewaySettings
from services.gateway.tables.live import LiveTable
from services.gateway.tables.records import (
    ANSWERS,
    OUTBOX,
    FinishedReport,
    HandAnswerRecord,
    HandReport,
    Report,
    answer_key,
    encode_report,
)

if TYPE_CHECKING:
    from services.gateway.tables.steps import StepWriter

log_ = structlog.get_logger("mahjong.gateway")


class TableReports:
    """A table's reports to matchmaking, written with its steps (``writer``), and
    matchmaking's answers to them, read from ``store``; the table's lease (``ownership``) is
    released after its end is written."""

    def __init__(
        self, store: Store, settings: GatewaySettings, writer: StepWriter, ownership: Ownership
    ) -> None:
        self.store = store
        self.settings = settings
        self.writer = writer
        self.ownership = ownership

    def report(self, table: LiveTable, kind: str, data: dict[str, Any]) -> None:
        """A settled hand or the table's end, into the outbox for matchmaking (when the table
        reports), written with the step's events (the transactional outbox: a report exists
        exactly when its hand's result is in the log). The end is the table's last write: its
        lease is released after it."""
        with self.writer.step(table):
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
                fees=tuple(data.get("fees", ())),  # type: ignore[arg-type]
                facts=None if data.get("escaped_seat") is not None else self._facts(table, data),
            )
        else:
            report = FinishedReport(table.id, table.tag, data["hands_played"])
        return OUTBOX, report.key(), encode_report(report)

    @staticmethod
    def _facts(table: LiveTable, data: dict[str, Any]):
        """The hand's facts (collusion signals) from its events: the table's window of written
        events and the running step's. A table taken over mid-hand has the hand's events from
        the takeover on in its window, so its facts may miss what came before."""
        hand_id = data["hand_id"]
        written = [logged.event for logged in table.window[1]]
        running = [event for _, event in table.unwritten or ()]
        return hand_facts(e for e in (*written, *running) if e.hand_id == hand_id)

    def hand_answer(
        self, table: LiveTable
    ) -> Callable[[str], tuple[tuple[int, str], ...] | None] | None:
        """The session's ``hand_answer`` for a table whose hands go to matchmaking's ledger
        (None for one that reports nothing: it never waits): the bankrupt seats of a hand's
        stored answer, or None while the answer is not in (or the store cannot say: asked
        again)."""
        if not (self.settings.report_to_matchmaking and table.report_hands):
            return None
        store = self.store

        def answer(hand_id: str) -> tuple[tuple[int, str], ...] | None:
            try:
                rec = store.get(ANSWERS, answer_key(table.id, hand_id))
            except StoreError as exc:
                log_.warning("hand_answer_unread", table=table.id, hand=hand_id, error=repr(exc))
                return None
            if rec is None:
                return None
            return HandAnswerRecord.decode(rec.value).bankrupt

        return answer
