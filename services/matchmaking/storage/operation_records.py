"""The operator's console over the service's store
(:class:`~services.matchmaking.domain.operations.console.ConsoleRepository` and
:class:`~services.matchmaking.domain.operations.audit.AuditLog`): suspensions
``mm_suspensions/<player id>``, the audit log (the store's append-only log ``mm_audit``), and the
reads the console makes of players, sessions and live seats."""

from __future__ import annotations

from typing import Any

from services.matchmaking.domain import records
from services.matchmaking.domain.operations.suspensions import Suspension
from services.matchmaking.domain.players.accounts import Player
from services.matchmaking.storage.player_records import PLAYERS, PlayerRecords
from services.matchmaking.storage.table_records import TableRecords
from shared.audit import AUDIT_LOG, AuditEntry

SUSPENSIONS = "mm_suspensions"


class OperationRecords:
    """Suspensions, and the players, sessions and seats the console reads, in ``store``."""

    def __init__(self, store: Any, players: PlayerRecords, tables: TableRecords) -> None:
        self.store = store
        self.players = players
        self.tables = tables
        self.find_player = players.find_player
        self.sessions = players.sessions
        self.end_session = players.end_session

    def players_named(self, display_name: str, limit: int) -> list[Player]:
        """Players whose display name is ``display_name`` in any case (a scan of the players:
        an operator's look-up, not a player's)."""
        wanted = display_name.casefold()
        found = []
        for _, rec in self.store.scan(PLAYERS):
            player = Player.from_record(records.load(rec.value))
            if player.display_name.casefold() == wanted:
                found.append(player)
                if len(found) >= limit:
                    break
        return found

    def seats_of(self, player_id: str) -> list[tuple[str, int, str]]:
        """(table id, seat 0-3, tag) of each table the player is seated at."""
        out = []
        for table_id in self.tables.seated_at(player_id):
            table = self.tables.table(table_id)
            if table is not None and player_id in table.player_ids:
                out.append((table_id, table.player_ids.index(player_id), table.tag))
        return out

    # --- suspensions -----------------------------------------------------------------------
    def suspension(self, player_id: str) -> Suspension | None:
        rec = self.store.get(SUSPENSIONS, player_id)
        return Suspension.load(rec.value if rec else None)

    def keep_suspension(self, suspension: Suspension) -> None:
        self.store.put(SUSPENSIONS, suspension.player_id, suspension.dump())

    def lift_suspension(self, player_id: str) -> bool:
        return self.store.delete(SUSPENSIONS, player_id)


class AuditRecords:
    """The audit log in ``store``: appended, never rewritten."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def append(self, entry: AuditEntry) -> int:
        return self.store.append(AUDIT_LOG, entry.dump())

    def read(self, after: int, limit: int) -> list[tuple[int, AuditEntry]]:
        return [
            (seq, AuditEntry.load(raw))
            for seq, raw in self.store.read_log(AUDIT_LOG, after=after, limit=limit)
        ]
