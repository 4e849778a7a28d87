"""The 加倍卡 holds' repository: the index of the double cards held at each table, declared
here, implemented over the store by
:class:`services.matchmaking.storage.hold_records.HoldRecords`. (The ledger's own repository is
:class:`.books.LedgerStore`.)

* ``mm_double_card_holds/<table id>/<hand, 7 digits>/<player id>`` — a
  :class:`~.double_cards.Hold` (compact JSON), written before the hold moves in the ledger so
  TableFinished finds every hold of its table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from services.matchmaking.domain.economy.double_cards import Hold


class HoldRepository(Protocol):
    def keep_hold(self, hold: Hold) -> None:
        """Index a hold (written again by a retry: the same record)."""

    def holds_at(self, table_id: str) -> Sequence[Hold]:
        """The holds indexed at ``table_id``."""
