"""Live tables of one gateway replica: :class:`TableManager`, the facade the servicer calls
(create, join, act, leave, view, subscribe). It holds the replica's tables and their shared
state, and is composed of one part per concept:

* :mod:`.creating` — CreateTable: idempotent by request id, a table's start and its wiring;
* :mod:`.takeover` — leases: renewals, adopting orphaned tables, fences, losing a table;
* :mod:`.recovery` — a table rebuilt from its event log, and tables leaving memory;
* :mod:`.steps` — a table's step, written in one fenced transaction with its records;
* :mod:`.reports` — the transactional outbox for matchmaking;
* :mod:`.seats` — who a token is, JoinSeat (seats and spectators) and Leave;
* :mod:`.acting` — Act and 加倍卡, checked and kept by request id;
* :mod:`.views` — GetTableState and Subscribe;

over the table's parts — :mod:`.live` (a table in memory), :mod:`.log` (its event log),
:mod:`.leases` (ownership), :mod:`.requests` (idempotency by request id), :mod:`.creation` (the
request, its fingerprint, seat tokens), :mod:`.streams` (Subscribe), :mod:`.spectators` (the
spectators a table admits, each with a token of its own) and :mod:`.records` (every other record
in the store).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from infra.store import Store
from infra.store.ownership import Ownership
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.session import Policy, Ports, TableSession
from services.gateway.runtime import ThreadScheduler
from services.gateway.settings import GatewaySettings
from services.gateway.tables import leases
from services.gateway.tables.acting import ActCalls
from services.gateway.tables.creating import TableCreation
from services.gateway.tables.live import LiveTable
from services.gateway.tables.records import check_id
from services.gateway.tables.recovery import TableRecovery
from services.gateway.tables.reports import TableReports
from services.gateway.tables.seats import SeatCalls
from services.gateway.tables.steps import StepWrites
from services.gateway.tables.takeover import TableLeases
from services.gateway.tables.views import TableViews
from shared.errors import NotFound


class TableManager(
    TableCreation,
    TableLeases,
    TableRecovery,
    StepWrites,
    TableReports,
    SeatCalls,
    ActCalls,
    TableViews,
):
    """A gateway replica's live tables (``tables``: table id -> :class:`LiveTable`) and the
    state its parts share; see the module's docstring for the parts."""

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

    def _session(self, t: LiveTable) -> TableSession:
        """The table's session, under its lock; NOT_OWNER for a table this replica let go
        while the caller waited for the lock (its session is detached: the new owner's to
        answer)."""
        if not t.owned:
            raise self._not_owner(t.id)
        if t.session is None:
            raise NotFound(f"table {t.id!r} is not ready")
        return t.session
