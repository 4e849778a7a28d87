"""Live tables of one gateway replica: :class:`TableManager`, the facade the servicer calls
(create, join, act, leave, view, subscribe). It composes one part per concept, each given the
collaborators it calls in its constructor (built in this order, so no part calls one built
after it, and none calls back up):

* :mod:`.registry` — the tables held in memory, and tables leaving memory;
* :mod:`.leases` — the leases: renewals, fences, NOT_OWNER, letting a table go;
* :mod:`.rewinds` — tables whose step the store could not take, to rebuild with backoff;
* :mod:`.steps` — a table's step, written in one fenced transaction with its records;
* :mod:`.reports` — the transactional outbox for matchmaking, and its answers;
* :mod:`.wiring` — what a session is connected to: the ports it is given (event log, outbox,
  fenced wall), its scheduler, bots and timers;
* :mod:`.recovery` — a table rebuilt from its event log;
* :mod:`.keeper` — adopting orphaned tables and rebuilding rewound ones; draining, closing;
* :mod:`.creating` — CreateTable: idempotent by request id, a table's start;
* :mod:`.access` — finding a table (taken over when its lease expired), who a token is;
* :mod:`.seats` — JoinSeat (seats and spectators) and Leave;
* :mod:`.acting` — Act and 加倍卡, checked and kept by request id (answered early on the asyncio
  server: :mod:`.answer_early`);
* :mod:`.views` — GetTableState and Subscribe;
* :mod:`.operations` — the operator's ListTables and EndTable;

over the table's own modules — :mod:`.live` (a table in memory), :mod:`.log` (its event log),
:mod:`.requests` (idempotency by request id), :mod:`.creation`
(the request, its fingerprint, seat tokens), :mod:`.streams` (Subscribe), :mod:`.spectators`
(the spectators a table admits, each with a token of its own) and :mod:`.records` (every other
record in the store).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from infra.store import Store
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.ports import ActAnswer, DoubleCardBank
from services.gateway.domain.session import Policy, Ports
from services.gateway.domain.tokens import SeatToken
from services.gateway.runtime import ThreadScheduler
from services.gateway.settings import GatewaySettings
from services.gateway.tables.access import TableAccess
from services.gateway.tables.acting import ActCalls, DoubleCardCalls, NextHandCalls
from services.gateway.tables.creating import TableCreation
from services.gateway.tables.creation import TableSpec
from services.gateway.tables.keeper import TableKeeper
from services.gateway.tables.leases import OnEvent, TableLeases
from services.gateway.tables.live import LiveTable
from services.gateway.tables.operations import TableOperations
from services.gateway.tables.recovery import TableRecovery
from services.gateway.tables.registry import TableRegistry
from services.gateway.tables.reports import TableReports
from services.gateway.tables.rewinds import Rewinds
from services.gateway.tables.seats import SeatCalls
from services.gateway.tables.steps import StepWriter
from services.gateway.tables.streams import Seen
from services.gateway.tables.views import TableViews
from services.gateway.tables.wiring import SessionWiring
from shared.table import SeatRequest


class TableManager:
    """A gateway replica's live tables (``tables``: table id -> :class:`LiveTable`); see the
    module's docstring for its parts. ``double_cards``: matchmaking's holds of 加倍卡
    (:class:`~services.gateway.double_cards.MatchmakingBank`); None: not played here."""

    def __init__(
        self,
        store: Store,
        ports: Ports,
        settings: GatewaySettings,
        *,
        policy: Policy,
        scheduler: ThreadScheduler | None = None,
        on_event: OnEvent | None = None,
    ) -> None:
        self.store = store
        self.ports = ports
        self.settings = settings
        self.policy = policy
        self.double_cards: DoubleCardBank | None = None
        self.scheduler = scheduler or ThreadScheduler(settings.timer_workers)
        self.stop = threading.Event()
        self.registry = TableRegistry(self.scheduler, settings.finished_table_ttl_ms)
        self.tables = self.registry.tables
        self.leases = TableLeases(store, settings, self.registry, on_event, self.stop)
        self.ownership = self.leases.ownership
        self.rewinds = Rewinds(self.leases)
        self.writer = StepWriter(store, self.leases, self.registry, self.rewinds, on_event)
        self.reports = TableReports(store, settings, self.writer, self.ownership)
        self.wiring = wiring = SessionWiring(
            settings, ports, policy, self.scheduler, self.writer, self.reports, self.leases
        )
        self.recovery = TableRecovery(store, self.ownership, self.registry, wiring, on_event)
        self.keeper = TableKeeper(
            self.registry, self.leases, self.recovery, self.rewinds, self.scheduler, self.stop
        )
        self.creation = TableCreation(store, settings, self.ownership, self.registry, wiring)
        self.access = TableAccess(store, settings, self.registry, self.leases, self.recovery)
        self.seats = SeatCalls(store, settings, self.access, self.writer, self.leases)
        self.acting = ActCalls(self.access, self.writer, self.leases)
        self.double_card_calls = DoubleCardCalls(self.access, self.writer, self.leases)
        self.next_hand_calls = NextHandCalls(self.access, self.writer, self.leases)
        self.views = TableViews(store, self.access, self.leases)
        self.operations = TableOperations(store, self.registry, self.access, self.writer)
        # Renewals and takeovers on threads of their own: however long adopting orphaned
        # tables takes (a log read and a replay each), this replica's leases are renewed.
        self.leases.start()
        self.keeper.start()

    # --- the calls (see each part) --------------------------------------------------------
    def create_table(self, spec: TableSpec, creator: str = "") -> tuple[str, list[str]]:
        return self.creation.create_table(spec, creator)

    def table(self, table_id: str) -> LiveTable:
        return self.access.table(table_id)

    def join(
        self,
        table_id: str,
        player_id: str,
        display_name: str,
        seat: int | None,
        spectator: bool,
        **kw: Any,
    ) -> tuple[int | None, str, int]:
        return self.seats.join(table_id, player_id, display_name, seat, spectator, **kw)

    def leave(self, table_id: str, token: str, request_id: str) -> int:
        return self.seats.leave(table_id, token, request_id)

    def act(
        self,
        table_id: str,
        token: str,
        seat_claim: int | None,
        request_id: str,
        last_sequence: int,
        action: SeatRequest,
        answer: ActAnswer | None = None,
    ) -> tuple[int, bool]:
        return self.acting.act(
            table_id, token, seat_claim, request_id, last_sequence, action, answer
        )

    def play_double_card(self, table_id: str, token: str, request_id: str) -> tuple[int, int]:
        return self.double_card_calls.play(self.double_cards, table_id, token, request_id)

    def ready_for_next_hand(self, table_id: str, token: str, request_id: str) -> list[int]:
        return self.next_hand_calls.ready(table_id, token, request_id)

    def view(self, table_id: str, token: str, seat_claim: int | None) -> dict[str, Any]:
        return self.views.view(table_id, token, seat_claim)

    def stream_view(
        self, table: LiveTable, viewer: SeatToken, wait: bool = True
    ) -> dict[str, Any] | None:
        return self.views.stream_view(table, viewer, wait)

    def open_stream(self, table_id: str, token: str, after: int) -> tuple[LiveTable, SeatToken]:
        return self.views.open_stream(table_id, token, after)

    def subscribe(
        self, table_id: str, token: str, after: int, active: Callable[[], bool]
    ) -> Iterator[tuple[LoggedEvent, K.TableEvent]]:
        return self.views.subscribe(table_id, token, after, active)

    def subscribe_batches(
        self, table_id: str, token: str, after: int, active: Callable[[], bool]
    ) -> Iterator[Seen]:
        return self.views.subscribe_batches(table_id, token, after, active)

    def stream_batches(
        self,
        table: LiveTable,
        viewer: SeatToken,
        after: int,
        active: Callable[[], bool],
        quiet_s: float = 0.0,
    ) -> Iterator[Seen | None]:
        return self.views.stream_batches(table, viewer, after, active, quiet_s)

    def subscribe_async(
        self,
        table: LiveTable,
        viewer: SeatToken,
        after: int,
        run_blocking: Callable[..., Awaitable],
    ) -> AsyncIterator[Seen]:
        return self.views.subscribe_async(table, viewer, after, run_blocking)

    def hand_over(self) -> None:
        self.keeper.hand_over()

    def close(self) -> None:
        self.keeper.close()
