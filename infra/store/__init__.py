"""Store backends behind one interface (:class:`infra.store.base.Store`).

``open_store(url)``: ``memory://``, ``sqlite:///relative/file.db``, ``sqlite:////absolute/file.db``
or ``sqlite://:memory:`` for a throw-away database, ``postgresql://user@host:port/dbname`` (or
``postgres://``) for a cluster. The embedded default is SQLite under ``.data/``. Show a URL only
through :func:`redact_url` (it hides a password).
"""

from __future__ import annotations

from infra.store.base import (
    AlreadyExists,
    Conflict,
    Record,
    Store,
    StoreError,
    StoreUnavailable,
)
from infra.store.urls import redact_url

DEFAULT_STORE_URL = "sqlite:///.data/mahjong.db"
DEFAULT_POOL_SIZE = 8
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(url: str = DEFAULT_STORE_URL, *, pool_size: int = DEFAULT_POOL_SIZE) -> Store:
    """Open a store by URL; raises ValueError for an unknown scheme. ``pool_size``: the most
    connections a PostgreSQL store opens (the others keep one connection)."""
    if url == "memory://" or url == "memory":
        from infra.store.memory import MemoryStore

        return MemoryStore()
    if url.startswith("sqlite://"):
        from infra.store.sqlite import SqliteStore

        # sqlite:///rel/path.db, sqlite:////abs/path.db, sqlite://:memory:
        path = url[len("sqlite://") :]
        path = path[1:] if path.startswith("/") else path
        if not path:
            raise ValueError(f"store URL {url!r} names no file")
        return SqliteStore(path)
    if url.startswith(POSTGRES_SCHEMES):
        from infra.store.postgres import PostgresStore

        return PostgresStore(url, pool_size=pool_size)
    raise ValueError(
        f"unknown store URL {redact_url(url)!r}; use memory://, sqlite:///path or "
        "postgresql://user@host/dbname"
    )


__all__ = [
    "DEFAULT_POOL_SIZE",
    "DEFAULT_STORE_URL",
    "AlreadyExists",
    "Conflict",
    "Record",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "open_store",
    "redact_url",
]
