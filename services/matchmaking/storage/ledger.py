"""The ledger's books for a service's store: the backend of its kind (memory, SQLite,
PostgreSQL: one file each), opened once per store object, its tables created the first time."""

from __future__ import annotations

import threading
import weakref

from infra.store.base import Store
from services.matchmaking.domain.economy.books import LedgerStore

_ledgers: weakref.WeakKeyDictionary[Store, LedgerStore] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def ledger_for(store: Store) -> LedgerStore:
    """The ledger kept in ``store``'s database (its tables created the first time), one per
    store object."""
    with _lock:
        found = _ledgers.get(store)
        if found is not None:
            return found
        from infra.store.memory import MemoryStore
        from infra.store.sqlite import SqliteStore

        if isinstance(store, MemoryStore):
            from services.matchmaking.storage.ledger_memory import MemoryLedger

            made: LedgerStore = MemoryLedger()
        elif isinstance(store, SqliteStore):
            from services.matchmaking.storage.ledger_sqlite import SqliteLedger

            made = SqliteLedger(store)
        else:
            from infra.store.postgres import PostgresStore

            if not isinstance(store, PostgresStore):
                raise TypeError(f"no ledger backend for {type(store).__name__}")
            from services.matchmaking.storage.ledger_postgres import PostgresLedger

            made = PostgresLedger(store)
        _ledgers[store] = made
        return made
