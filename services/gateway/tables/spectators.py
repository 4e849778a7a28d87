"""The spectators a table admits: each holds a token of its own (its id signed into it,
:func:`services.gateway.domain.tokens.sign_spectator_token`) and is admitted by its record in the
store, ``gateway-spectator`` ``<table>/<spectator id>``.

- Counted: a table admits at most ``limit`` spectators (``--max-spectators-per-table``,
  GatewaySettings ``max_spectators_per_table``; 0 = any number); past it JoinSeat is
  RESOURCE_EXHAUSTED ``SPECTATOR_LIMIT``, and one leaving makes room. A spectator joining again
  with its own token is the same spectator, not counted twice.
- Revocable: Leave with a spectator's token revokes it (its record is deleted); every later call
  with it is UNAUTHENTICATED ``SPECTATOR_TOKEN_REVOKED``, and its open streams end so at their
  next event. The shared token of earlier releases (``st1.<table>.s.…``) is admitted nowhere.
- Across replicas: the owner of a live table writes the records fenced by the table's lease (a
  replica that lost the table can neither admit nor revoke anyone) and holds the ids in memory
  (:attr:`LiveTable.spectators`, read on every call); a replica taking the table over reads them
  from the store with the rest of the table (:func:`load`), so a revoked token stays revoked and
  the count goes on. A finished table has no owner (its lease is released, and any replica may
  load it read-only): its records are written without a fence and read from the store on every
  call, so what one replica revokes no other admits.

The records stay with the table's log (a finished table's replay is watched with them)."""

from __future__ import annotations

from infra.store import Store
from infra.store.base import Fence
from services.gateway.domain.tokens import new_spectator_id
from services.gateway.tables.live import LiveTable
from services.gateway.tables.records import SPECTATORS, SpectatorRecord
from shared.errors import ResourceExhausted, Unauthenticated

REVOKED = "SPECTATOR_TOKEN_REVOKED"


def _key(table_id: str, spectator_id: str) -> str:
    return f"{table_id}/{spectator_id}"


def load(store: Store, table: LiveTable) -> None:
    """The spectators of a table loaded from the store (taken over, or read-only)."""
    prefix = f"{table.id}/"
    with table.spectators_lock:
        table.spectators = {key[len(prefix) :] for key, _ in store.scan(SPECTATORS, prefix)}


def admit(store: Store, table: LiveTable, limit: int, fence: Fence | None, now_ms: int) -> str:
    """Admit a new spectator of ``table`` (at most ``limit``, 0 = any number): its id, its record
    written (fenced by ``fence``: the table's lease, None for a finished table)."""
    with table.spectators_lock:  # the count and the new record together: the limit is exact
        held = len(table.spectators)
        if limit and held >= limit:
            raise ResourceExhausted(
                f"table {table.id} has {held} spectators, the most it admits "
                f"(--max-spectators-per-table {limit}); watch again once one leaves",
                reason="SPECTATOR_LIMIT",
                limit=limit,
            )
        spectator_id = new_spectator_id()
        store.create(
            SPECTATORS, _key(table.id, spectator_id), SpectatorRecord(now_ms).encode(), fence=fence
        )
        table.spectators.add(spectator_id)
        return spectator_id


def revoke(store: Store, table: LiveTable, spectator_id: str, fence: Fence | None) -> None:
    """Revoke a spectator's token: its record deleted (fenced by ``fence``), then forgotten
    here. Revoking a token already revoked changes nothing."""
    if not spectator_id:
        return
    with table.spectators_lock:
        store.delete(SPECTATORS, _key(table.id, spectator_id), fence=fence)
        table.spectators.discard(spectator_id)


def admitted(store: Store, table: LiveTable, spectator_id: str) -> bool:
    """Does ``table`` admit ``spectator_id``: its owner's memory for a live table, the store for
    a finished one (which any replica may hold)."""
    if not spectator_id:
        return False
    if table.live:
        return spectator_id in table.spectators
    return store.get(SPECTATORS, _key(table.id, spectator_id)) is not None


def still_admitted(table: LiveTable, spectator_id: str) -> bool:
    """For an open stream, checked from memory only (on the event loop, never the store): a
    live table's spectator must still be admitted; a finished table's replay was checked when
    it opened."""
    return not table.live or spectator_id in table.spectators


def revoked(spectator_id: str) -> Unauthenticated:
    """The refusal of a spectator token the table does not admit (any more)."""
    if not spectator_id:
        return Unauthenticated(
            "seat_token is the spectator token every spectator of a table shared before "
            "spectators had tokens of their own, no longer accepted: JoinSeat with "
            "spectator = true for a token of your own",
            reason=REVOKED,
            field="seat_token",
        )
    return Unauthenticated(
        "seat_token is a spectator token this table no longer admits (revoked when its "
        "spectator left): JoinSeat with spectator = true for a new one",
        reason=REVOKED,
        field="seat_token",
    )
