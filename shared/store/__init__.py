"""Store backends behind one interface (:class:`shared.store.base.Store`).

``open_store(url)``: ``memory://``, ``sqlite:///relative/file.db``, ``sqlite:////absolute/file.db``
or ``sqlite://:memory:`` for a throw-away database. The embedded default is SQLite under ``.data/``.
"""

from __future__ import annotations

from shared.store.base import AlreadyExists, Conflict, Record, Store, StoreError

DEFAULT_STORE_URL = "sqlite:///.data/mahjong.db"


def open_store(url: str = DEFAULT_STORE_URL) -> Store:
    """Open a store by URL; raises ValueError for an unknown scheme."""
    if url == "memory://" or url == "memory":
        from shared.store.memory import MemoryStore

        return MemoryStore()
    if url.startswith("sqlite://"):
        from shared.store.sqlite import SqliteStore

        # sqlite:///rel/path.db, sqlite:////abs/path.db, sqlite://:memory:
        path = url[len("sqlite://") :]
        path = path[1:] if path.startswith("/") else path
        if not path:
            raise ValueError(f"store URL {url!r} names no file")
        return SqliteStore(path)
    raise ValueError(f"unknown store URL {url!r}; use memory:// or sqlite:///path")


__all__ = [
    "DEFAULT_STORE_URL",
    "AlreadyExists",
    "Conflict",
    "Record",
    "Store",
    "StoreError",
    "open_store",
]
