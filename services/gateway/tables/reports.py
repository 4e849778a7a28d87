"""The transactional outbox: what a table reports to matchmaking (each settled hand, and the
table's end) is a row of ``gateway-outbox`` written in the same step as the events it reports,
so a report exists exactly when its hand's result is in the log; :mod:`services.gateway.outbox`
delivers the rows. The end is the table's last write: its lease is released after it.
"""

from __future__ import annotations

from typing import Any

from services.gateway.tables.live import LiveTable
from services.gateway.tables.records import (
    OUTBOX,
    FinishedReport,
    HandReport,
    Report,
    encode_report,
)


class TableReports:
    """Mixed into :class:`~services.gateway.tables.manager.TableManager`, whose ``settings``
    and ``ownership`` it uses, with ``step`` of :mod:`.steps`."""

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
