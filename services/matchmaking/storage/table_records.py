"""The tables' repository over the service's store
(:class:`~services.matchmaking.domain.tables.repository.TableRepository`): the namespaces, keys
and encodings of allocated tables, tables being allocated and live seats."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from services.matchmaking.domain import records
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.tables.allocated import AllocatedTable

R = TypeVar("R")

TABLES = "mm_tables"
PENDING = "mm_tables_pending"
BY_REQUEST = "mm_tables_by_request"
LIVE_SEATS = "mm_live_seats"


def _body(table: AllocatedTable) -> dict:
    return {
        "tag": table.tag,
        "player_ids": list(table.player_ids),
        "request_id": table.request_id,
        "ruleset": table.ruleset,
        "stake": table.stake,
        "ruleset_options": dict(table.ruleset_options),
        "bankrupt": [list(b) for b in table.bankrupt],
        "fee_per_hand": table.fee_per_hand,
    }


def _table(table_id: str, raw: bytes) -> AllocatedTable:
    data = records.load(raw)
    return AllocatedTable(
        table_id,
        data["tag"],
        tuple(data["player_ids"]),
        data["request_id"],
        data["ruleset"],
        int(data["stake"]),
        tuple(sorted(data["ruleset_options"].items())),
        tuple((int(a), str(b), str(c)) for a, b, c in data["bankrupt"]),
        int(data.get("fee_per_hand", 0)),
    )


def _seat_key(player_id: str, table_id: str) -> str:
    return f"{player_id}/{table_id}"


class TableRecords:
    """Allocated tables and live seats in ``store``."""

    def __init__(self, store: Records) -> None:
        self.store = store

    def table(self, table_id: str) -> AllocatedTable | None:
        rec = self.store.get(TABLES, table_id) if table_id else None
        return None if rec is None else _table(table_id, rec.value)

    def put_table(self, table: AllocatedTable) -> None:
        self.store.put(TABLES, table.table_id, records.dump(_body(table)))

    def update_table(
        self, table_id: str, fn: Callable[[AllocatedTable | None], tuple[AllocatedTable | None, R]]
    ) -> R:
        def apply(raw: bytes | None) -> tuple[bytes | None, R]:
            new, result = fn(None if raw is None else _table(table_id, raw))
            return (None if new is None else records.dump(_body(new))), result

        return self.store.update(TABLES, table_id, apply)

    def pending(self) -> list[tuple[str, list[str]]]:
        out = []
        for _, rec in self.store.scan(PENDING):
            data = records.load(rec.value)
            out.append((data["tag"], data["player_ids"]))
        return out

    def seat(self, table_id: str, player_ids: Iterable[str]) -> None:
        for pid in player_ids:
            self.store.put(LIVE_SEATS, _seat_key(pid, table_id), records.dump({}))

    def unseat(self, table_id: str, player_ids: Iterable[str]) -> None:
        for pid in player_ids:
            self.store.delete(LIVE_SEATS, _seat_key(pid, table_id))

    def seated_at(self, player_id: str) -> list[str]:
        prefix = player_id + "/"
        return [key[len(prefix) :] for key, _ in self.store.scan(LIVE_SEATS, prefix)]
