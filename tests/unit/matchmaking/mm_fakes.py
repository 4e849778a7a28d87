"""Test doubles for matchmaking: an in-memory gateway allocator and a ready-made service."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from infra.store.memory import MemoryStore
from services.matchmaking.domain.tables.allocator import TableAllocation, TableRequest
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from services.matchmaking.storage.player_records import PlayerRecords, PresenceRecords
from services.matchmaking.storage.queue_records import QueueRecords
from services.matchmaking.storage.room_records import RoomRecords
from services.matchmaking.storage.table_records import TableRecords
from services.matchmaking.storage.tournament_records import TournamentRecords
from shared.errors import Unavailable
from tests.doubles.clock import ManualClock
from tests.support.identity import issuer_config


class FakeAllocator:
    """Creates 'tables' in memory, idempotent by request id; ``down = True`` makes it fail."""

    def __init__(self) -> None:
        self.tables: dict[str, tuple[TableRequest, TableAllocation]] = {}
        self.calls = 0
        self.down = False
        self._ids = itertools.count(1)

    def create_table(self, request: TableRequest) -> TableAllocation:
        self.calls += 1
        if self.down:
            raise Unavailable("fake gateway is down")
        assert len(request.seats) == 4
        if request.request_id in self.tables:
            return self.tables[request.request_id][1]
        table_id = f"tbl-{next(self._ids)}"
        tokens = tuple("" if s.bot else f"seat-{table_id}-{i}" for i, s in enumerate(request.seats))
        alloc = TableAllocation(table_id, tokens, "gw.test:1")
        self.tables[request.request_id] = (request, alloc)
        return alloc

    def by_table(self, table_id: str) -> TableRequest:
        return next(r for r, a in self.tables.values() if a.table_id == table_id)


def make_service(store=None, **config) -> tuple[Matchmaking, FakeAllocator, ManualClock]:
    clock = ManualClock()
    alloc = FakeAllocator()
    config.setdefault("issuers", (issuer_config(),))  # tests.support.identity.sign_in
    # Tests of other features count silver to the chip at the cover's edge: their quick-match
    # tables charge no room service fee. test_mm_room_fee.py plays the deployment's default.
    config.setdefault("level_fee_units", 0)
    cfg = MatchmakingConfig(token_secret=b"test-secret", **config)
    return Matchmaking(store or MemoryStore(), alloc, clock, cfg), alloc, clock


def settle_round(mm: Matchmaking, alloc: FakeAllocator, tournament_id: str, rng) -> int:
    """Play the current round's tables as a gateway would: every hand reported to the ledger
    (random zero-sum payments, sometimes an escape with a house share), then TableFinished."""
    from services.matchmaking.domain.economy.ledger import HandReport

    house = 0
    for table in mm.tournament_tables(tournament_id):
        request = alloc.by_table(table.table_id)
        for h in range(request.max_hands):
            escaped, share = None, 0
            if rng.random() < 0.2:
                escaped, share = rng.randrange(4), 1
                payments = [1, 1, 1, 1]
                payments[escaped] = -4
            else:
                winner = rng.randrange(4)
                payments = [-rng.randrange(0, 20) if s != winner else 0 for s in range(4)]
                payments[winner] = -sum(payments)
            house += share
            report = HandReport(
                f"{table.table_id}-h{h}",
                table.table_id,
                request.tag,
                tuple(table.seats),
                tuple(payments),
                share,
                escaped,
            )
            mm.record_hand(report)
        mm.table_finished(table.table_id, request.tag, request.max_hands)
    mm.tick()  # the ticker moves the round on (the server wakes it on a table's settling)
    return house


def seated_quick_table(mm: Matchmaking, alloc: FakeAllocator):
    """Four signed-in players matched at a quick-match table: (table id, tag, ids, stake)."""
    from tests.support.identity import sign_in

    for _, tok in [sign_in(mm, n) for n in "ABCD"]:
        mm.join_queue(tok, "", 0)
    mm.tick()
    ((request, table),) = alloc.tables.values()
    return table.table_id, request.tag, tuple(s.player_id for s in request.seats), request.stake


def give(mm: Matchmaking, player_id: str, asset: str, amount: int) -> None:
    """``amount`` of ``asset`` from the house to the player (as an operator grant would)."""
    from services.matchmaking.domain.economy import ledger

    legs = [
        ledger.Leg(player_id, asset, amount, ledger.OPERATOR_GRANT, "test"),
        ledger.Leg(ledger.HOUSE, asset, -amount, ledger.OPERATOR_GRANT, "test"),
    ]
    ledger.transact(mm.store, f"test-grant/{player_id}/{asset}/{mm.clock()}", legs, mm.clock())


@dataclass(frozen=True)
class Repositories:
    """Each concept's repository over one store, as the facade builds them (for tests that
    call the domain's functions on a store of their own)."""

    players: PlayerRecords
    presence: PresenceRecords
    queues: QueueRecords
    rooms: RoomRecords
    tables: TableRecords
    tournaments: TournamentRecords


def repositories(store) -> Repositories:
    return Repositories(
        PlayerRecords(store),
        PresenceRecords(store),
        QueueRecords(store),
        RoomRecords(store),
        TableRecords(store),
        TournamentRecords(store),
    )
