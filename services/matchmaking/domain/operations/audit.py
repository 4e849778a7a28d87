"""The audit log: every operator action and every ledger grant, appended once, never changed.

Its entry is :class:`shared.audit.AuditEntry` (v1), shared with the gateway's EndTable. The log
is append-only (:class:`AuditLog`: the store's log ``mm_audit``); matchmaking's only writer is
:meth:`.console.OperatorDesk.act`, around an action — no RPC appends to it directly.
"""

from __future__ import annotations

from typing import Protocol

from shared.audit import OK, AuditEntry, clip
from shared.errors import InvalidArgument

__all__ = ["OK", "AuditEntry", "AuditLog", "clip", "page"]
MAX_PAGE = 1000
DEFAULT_PAGE = 100


class AuditLog(Protocol):
    """Where entries go: appended in order, numbered 1, 2, …, read back a page at a time."""

    def append(self, entry: AuditEntry) -> int: ...

    def read(self, after: int, limit: int) -> list[tuple[int, AuditEntry]]: ...


def page(log: AuditLog, after: int, limit: int) -> tuple[list[tuple[int, AuditEntry]], int]:
    """Entries after sequence ``after`` (0 = from the start), at most ``limit`` (1-1000; 0 =
    100), and the ``after`` of the next page (0 when this one is the last)."""
    if after < 0:
        raise InvalidArgument(f"after_sequence {after} is negative", field="after_sequence")
    if limit < 0 or limit > MAX_PAGE:
        raise InvalidArgument(f"limit {limit} is not in 1-{MAX_PAGE}", field="limit")
    size = limit or DEFAULT_PAGE
    found = log.read(after, size + 1)
    if len(found) > size:
        return found[:size], found[size - 1][0]
    return found, 0
