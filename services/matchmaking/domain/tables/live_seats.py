"""Live seats (在座): the tables matchmaking allocated where each player sits now, and what
their silver must keep while they sit there (RULES-items §4: a seat needs silver ≥ the most one
hand can cost at its stake).

An index beside the allocations (namespace ``mm_live_seats``, key ``<player id>/<table id>``,
an empty versioned record): a player's seats are one prefix read, not a scan of every table. A
human's seat is indexed when its table is allocated (:func:`.allocated.record`) and
leaves it when the table finishes (TableFinished) or when the player goes bankrupt and a bot
takes the seat (:func:`.allocated.replace_seat`). Bots have no wallets: never indexed.

:func:`require_kept` (with :func:`.allocated.seat_needs`) is what spending checks
first (BuyItems, a tournament's silver entry fee): FailedPrecondition ``SILVER_HELD_BY_SEAT``
naming the table and the amount that must stay, when the spending would take the player's
silver below what their live seat needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.tables.repository import TableRepository
from shared.errors import FailedPrecondition

if TYPE_CHECKING:
    from services.matchmaking.domain.tables.allocated import AllocatedTable


def _humans(player_ids: Iterable[str]) -> list[str]:
    return [pid for pid in dict.fromkeys(player_ids) if pid and not ledger.is_bot(pid)]


def seat(tables: TableRepository, table_id: str, player_ids: Iterable[str]) -> None:
    """Index the humans of ``player_ids`` as seated at ``table_id``."""
    tables.seat(table_id, _humans(player_ids))


def unseat(tables: TableRepository, table_id: str, player_ids: Iterable[str]) -> None:
    """``player_ids`` sit at ``table_id`` no more (its end, or a bankrupt seat's bot)."""
    tables.unseat(table_id, _humans(player_ids))


def tables_of(tables: TableRepository, player_id: str) -> list[str]:
    """The tables where ``player_id`` sits now, by id."""
    return tables.seated_at(player_id)


@dataclass(frozen=True, slots=True)
class LiveSeat:
    """Where a player sits now: ``seat`` (0-3) of ``table``."""

    table: AllocatedTable
    seat: int


def seats_of(tables: TableRepository, player_id: str) -> list[LiveSeat]:
    """The live seats of ``player_id``, by table id: each indexed table whose seating still
    names them (a seat a bot took after 破产 is theirs no more)."""
    out = []
    for table_id in sorted(tables_of(tables, player_id)):
        table = tables.table(table_id)
        if table is not None and player_id in table.player_ids:
            out.append(LiveSeat(table, table.player_ids.index(player_id)))
    return out


@dataclass(frozen=True, slots=True)
class Held:
    """What a live seat needs kept: the most one hand at ``table_id`` can cost at ``stake``."""

    table_id: str
    stake: int
    silver: int


def require_kept(
    store: Records, player_id: str, spend: int, what: str, seat_needs: Held | None
) -> None:
    """Refuse spending ``spend`` silver (on ``what``; ``store``: the ledger's) that would
    take the player below what their live seat needs (``seat_needs``,
    :func:`.allocated.seat_needs`; None: not seated): FailedPrecondition ``SILVER_HELD_BY_SEAT``,
    nothing moves."""
    if spend <= 0 or seat_needs is None:
        return
    silver = ledger.balance(store, player_id)
    if silver - spend >= seat_needs.silver:
        return
    spare = max(0, silver - seat_needs.silver)
    raise FailedPrecondition(
        f"{what} costs {spend} silver, but {player_id} sits at table {seat_needs.table_id}, "
        f"whose seat needs {seat_needs.silver} silver kept (the most one hand can cost at stake "
        f"{seat_needs.stake}); {silver} held, at most {spare} may be spent while seated",
        reason="SILVER_HELD_BY_SEAT",
        table_id=seat_needs.table_id,
        must_keep=seat_needs.silver,
        spendable=spare,
    )
