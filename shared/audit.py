"""The audit log's entry, one contract for every service that appends to it (matchmaking's
console and grants, the gateway's EndTable): who acted (the SPIFFE ID and common name of the
caller's certificate), what (the RPC), on what (a player id, ``player/session``, a table id),
when, why (the reason given) and the result (``OK`` or the refusal's status code, with its
message). Entries go to the store's append-only log :data:`AUDIT_LOG` and are never changed."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from shared.errors import InvalidArgument

VERSION = 1
AUDIT_LOG = "mm_audit"  # the store's log (one for the deployment: the services share a store)
OK = "OK"
MAX_TEXT = 500  # characters kept of a reason or a detail


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
        return json.dumps(asdict(self), separators=(",", ":"), ensure_ascii=False).encode()

    @classmethod
    def load(cls, raw: bytes) -> AuditEntry:
        data = json.loads(raw)
        if data.get("version") != VERSION:
            raise ValueError(f"audit entry version {data.get('version')} is not {VERSION}")
        return cls(**data)


def clip(text: str) -> str:
    """What is kept of a free text: at most :data:`MAX_TEXT` characters, no control ones."""
    clean = "".join(c if ord(c) >= 32 else " " for c in text)
    return clean if len(clean) <= MAX_TEXT else clean[: MAX_TEXT - 1] + "…"


def entry(
    at_ms: int, actor: str, action: str, target: str, reason: str, result: str, detail: str
) -> AuditEntry:
    """An entry with its free texts clipped."""
    return AuditEntry(at_ms, clip(actor), action, clip(target), clip(reason), result, clip(detail))


def check_reason(reason: str) -> str:
    """Why an operator changes something: required, 1-500 characters once trimmed."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidArgument("reason is required: say why", field="reason")
    if len(reason) > MAX_TEXT:
        raise InvalidArgument(
            f"reason has {len(reason)} characters; at most {MAX_TEXT}", field="reason"
        )
    return reason
