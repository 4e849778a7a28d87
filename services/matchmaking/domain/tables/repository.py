"""The tables' repository (牌桌): the tables matchmaking allocated on gateways and where each
player sits now, declared here, implemented over the store by
:class:`services.matchmaking.storage.table_records.TableRecords`.

The records it keeps (encodings: compact JSON):

* ``mm_tables/<table id>`` — an :class:`~.allocated.AllocatedTable` (without its id).
* ``mm_tables_pending/<sealed request id>`` — ``{tag, player_ids}`` of a table being created
  (written by :class:`services.matchmaking.storage.table_claims.RecordingAllocator`).
* ``mm_live_seats/<player id>/<table id>`` — an empty index record per human's live seat
  (:mod:`.live_seats`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from services.matchmaking.domain.tables.allocated import AllocatedTable

R = TypeVar("R")


class TableRepository(Protocol):
    """Allocated tables, the ones being allocated, and the live-seat index."""

    def table(self, table_id: str) -> AllocatedTable | None: ...

    def put_table(self, table: AllocatedTable) -> None: ...

    def update_table(
        self, table_id: str, fn: Callable[[AllocatedTable | None], tuple[AllocatedTable | None, R]]
    ) -> R:
        """Atomic read-modify-write (``fn`` may run more than once): the new table or None to
        leave it, and the result."""

    def pending(self) -> Sequence[tuple[str, list[str]]]:
        """The tables being allocated, as (tag, player ids by seat)."""

    def seat(self, table_id: str, player_ids: Iterable[str]) -> None:
        """Index ``player_ids`` as seated at ``table_id``."""

    def unseat(self, table_id: str, player_ids: Iterable[str]) -> None: ...

    def seated_at(self, player_id: str) -> list[str]:
        """The ids of the tables where the player sits now."""
