"""One store of each backend for the parametrized suites (the store contract, the wall's
repository, the ledger): ``memory``, ``sqlite`` (a file, so WAL and the cross-connection lock
are exercised) and ``postgres`` (a fresh schema on the test server, tests/support/postgres.py).

A :class:`Backend` opens any number of stores on the same data (as replicas would): for memory
that is the one store object, which has no second process to share with."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from infra.store import Conflict, Store, open_store
from infra.store.metrics import OPERATIONS

KINDS = ("memory", "sqlite", "postgres")
SHARED_KINDS = ("sqlite", "postgres")  # that several processes can open


@dataclass
class Backend:
    kind: str
    url: str
    opened: list[Store] = field(default_factory=list)

    def open(self, **kwargs) -> Store:
        if self.kind == "memory" and self.opened:
            return self.opened[0]
        store = open_store(self.url, **kwargs)
        self.opened.append(store)
        return store

    def close(self) -> None:
        for store in reversed(self.opened):
            store.close()
        self.opened.clear()


def backend_for(request, tmp_path) -> Backend:
    """The backend ``request.param`` names; the PostgreSQL one only when the test server is
    reachable (else the test skips, or fails under CI=true)."""
    kind = request.param
    if kind == "memory":
        return Backend(kind, "memory://")
    if kind == "sqlite":
        return Backend(kind, f"sqlite:///{tmp_path}/store.db")
    return Backend(kind, request.getfixturevalue("postgres_url"))


class CountingStore:
    """``store`` with every operation it is asked for counted (``calls``, by name: each is one
    store transaction on every backend) and its Conflicts (``conflicts``); a stand-in for the
    store wherever a caller only calls its operations."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.calls: Counter[str] = Counter()
        self.conflicts = 0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.store, name)
        if name not in OPERATIONS:
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            try:
                return attr(*args, **kwargs)
            except Conflict:
                self.conflicts += 1
                raise

        return counted

    def taken(self) -> Counter[str]:
        """The counts so far, then zero again."""
        calls, self.calls = self.calls, Counter()
        return calls
