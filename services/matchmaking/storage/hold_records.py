"""The 加倍卡 holds' repository over the service's store
(:class:`~services.matchmaking.domain.economy.repository.HoldRepository`)."""

from __future__ import annotations

from dataclasses import asdict

from services.matchmaking.domain import records
from services.matchmaking.domain.economy.double_cards import Hold
from services.matchmaking.domain.ports import Records

HOLDS = "mm_double_card_holds"


class HoldRecords:
    """The 加倍卡 hold index in ``store``."""

    def __init__(self, store: Records) -> None:
        self.store = store

    def keep_hold(self, hold: Hold) -> None:
        self.store.put(HOLDS, hold.key, records.dump(asdict(hold)))

    def holds_at(self, table_id: str) -> list[Hold]:
        return [
            Hold(**records.load(rec.value)) for _, rec in self.store.scan(HOLDS, f"{table_id}/")
        ]
