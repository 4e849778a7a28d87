"""The audit log: every operator action and every ledger grant, appended once, never changed.

An entry (:class:`AuditEntry`, v1) says who acted (the workload of the caller's certificate, or
a token's subject), what (the RPC), on what (a player id, ``player/session``), when, why (the
reason given) and the result (``OK`` or the refusal's status code, with its message). The log is
append-only (:class:`AuditLog`: the store's log ``mm_audit``); the only writer is
:meth:`.console.OperatorDesk.act`, around an action — no RPC appends to it directly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Protocol

from services.matchmaking.domain import records
from shared.errors import InvalidArgument

VERSION = 1
OK = "OK"
MAX_TEXT = 500  # characters kept of a reason or a detail
MAX_PAGE = 1000
DEFAULT_PAGE = 100


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One audited action as stored (v1)."""

    at_ms: int
    actor: str
    action: str
    target: str
    reason: str
    result: str  # OK, or a status code name (INVALID_ARGUMENT, NOT_FOUND, …)
    detail: str
    version: int = VERSION

    def dump(self) -> bytes:
        return records.dump(asdict(self))

    @classmethod
    def load(cls, raw: bytes) -> AuditEntry:
        data = records.load(raw)
        if data.get("version") != VERSION:
            raise ValueError(f"audit entry version {data.get('version')} is not {VERSION}")
        return cls(**data)


def clip(text: str) -> str:
    """What is kept of a free text: at most :data:`MAX_TEXT` characters, no control ones."""
    clean = "".join(c if ord(c) >= 32 else " " for c in text)
    return clean if len(clean) <= MAX_TEXT else clean[: MAX_TEXT - 1] + "…"


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
