"""What a table's session is connected to: the ports it is given, each implemented here for the
table and passed down, so no call of the session runs back up a layer.

* :class:`TableLink` — one table's end of the ports the domain declares
  (:mod:`services.gateway.domain.ports`): its event log (``Emit``: the running step,
  :mod:`.steps`), its outbox (``Report``: :mod:`.reports`), the ownership its wall calls carry
  (``WallFence``: the lease's epoch, and a refusal handled as a fenced write), matchmaking's
  answer to its hands, and the logging of its engine's failures;
* :class:`SessionWiring` — the session's wiring: the fenced wall (:mod:`.fenced_wall`), the
  table's scheduler (each callback one step), the bots' policy and the timers' settings.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NoReturn

import structlog

from services.gateway import metrics
from services.gateway.domain.events.kinds import TableEvent
from services.gateway.domain.ports import WallFenced
from services.gateway.domain.session import RETRY_ATTEMPTS, Policy, Ports
from services.gateway.runtime import LockedScheduler, ThreadScheduler
from services.gateway.settings import GatewaySettings
from services.gateway.tables.fenced_wall import FencedWall
from services.gateway.tables.leases import TableLeases
from services.gateway.tables.live import LiveTable
from services.gateway.tables.reports import TableReports
from services.gateway.tables.steps import StepWriter

log_ = structlog.get_logger("mahjong.gateway")


class TableLink:
    """One table's end of its session's ports: :class:`~services.gateway.domain.ports.Emit`
    (:meth:`emit`), :class:`~services.gateway.domain.ports.Report` (:meth:`report`),
    :class:`~services.gateway.domain.ports.WallFence` (:meth:`epoch`, :meth:`fenced`)."""

    __slots__ = ("leases", "reports", "table", "writer")

    def __init__(
        self, table: LiveTable, writer: StepWriter, reports: TableReports, leases: TableLeases
    ) -> None:
        self.table = table
        self.writer = writer
        self.reports = reports
        self.leases = leases

    def emit(self, event: TableEvent) -> int:
        """The event joins the running step (one of its own when none runs)."""
        return self.writer.append(self.table, event)

    def report(self, kind: str, data: dict[str, Any]) -> None:
        """A settled hand or the table's end, into the outbox with the step's events."""
        self.reports.report(self.table, kind, data)

    def epoch(self) -> int:
        """The epoch of the table's lease, carried by its wall calls."""
        return self.leases.fence(self.table).epoch

    def fenced(self, exc: WallFenced) -> NoReturn:
        """The wall refused the epoch: the table is lost, as a fenced write would say."""
        self.writer.wall_fenced(self.table, exc)

    def step_failed(self, attempt: int, exc: Exception) -> None:
        """An engine step failed for a transient reason (a service call): it is retried;
        logged and counted, as an error once the table is stalled (its short retries used
        up)."""
        stalled = attempt >= RETRY_ATTEMPTS
        metrics.STEP_FAILURES.labels("true" if stalled else "false").inc()
        (log_.error if stalled else log_.warning)(
            "engine_step_failed", table=self.table.id, attempt=attempt, stalled=stalled,
            error=repr(exc),
        )  # fmt: skip

    def halted(self, exc: Exception) -> None:
        """The table's engine failed on an error no retry mends: logged with its stack,
        counted."""
        metrics.TABLES_HALTED.inc()
        log_.error("table_halted", table=self.table.id, error=repr(exc), exc_info=exc)


class SessionWiring:
    """What every session of this replica is connected to: the services (``ports``), the
    bots' ``policy``, the timers (``scheduler``, ``settings``), and each table's
    :class:`TableLink` over ``writer``, ``reports`` and ``leases``."""

    def __init__(
        self,
        settings: GatewaySettings,
        ports: Ports,
        policy: Policy,
        scheduler: ThreadScheduler,
        writer: StepWriter,
        reports: TableReports,
        leases: TableLeases,
    ) -> None:
        self.settings = settings
        self.ports = ports
        self.policy = policy
        self.scheduler = scheduler
        self.writer = writer
        self.reports = reports
        self.leases = leases

    def timers(self) -> dict[str, Any]:
        """The session's timer settings (None = the ruleset's)."""
        st = self.settings
        return {
            "discard_ms": st.discard_ms,
            "claim_ms": st.claim_ms,
            "claim_window_floor_ms": st.claim_window_floor_ms,
            "claim_window_jitter_ms": st.claim_window_jitter_ms,
            "bot_delay_ms": st.bot_delay_ms,
            "bot_pace_ms": st.bot_pace_ms,
            "bot_pace_jitter_ms": st.bot_pace_jitter_ms,
            "auto_play_delay_ms": st.auto_play_delay_ms,
            "between_hands_ms": st.between_hands_ms,
        }

    def table_scheduler(self, table: LiveTable) -> LockedScheduler:
        """The table's scheduler: each callback runs under its lock as one step."""
        step = functools.partial(self.writer.step, table)
        return LockedScheduler(self.scheduler, table.lock, step, table.id)

    def connect(self, table: LiveTable, sched: LockedScheduler) -> dict[str, Any]:
        """What a session of ``table`` is connected to: ports, scheduler, log, outbox, bots."""
        link = TableLink(table, self.writer, self.reports, self.leases)
        ports = dataclasses.replace(self.ports, wall=FencedWall(self.ports.wall, link))
        return {
            "ports": ports,
            "scheduler": sched,
            "emit": link.emit,
            "report": link.report,
            "policy": self.policy,
            "on_step_failed": link.step_failed,
            "on_halted": link.halted,
            "hand_answer": self.reports.hand_answer(table),
        }
