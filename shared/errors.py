"""Domain errors, one per gRPC status code a caller can act on.

Domain code (no gRPC imports) raises these; the server bootstrap's interceptor
(:mod:`infra.server`) turns each into its status code with the message and details, so
servicers stay thin and every service answers bad input the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class DomainError(Exception):
    """Base class. ``code`` is the gRPC status code name; ``details`` are key/value facts
    (field names, seats, tiles) sent as google.rpc.ErrorInfo metadata."""

    code = "UNKNOWN"
    reason = "DOMAIN_ERROR"

    def __init__(self, message: str, *, reason: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        if reason:
            self.reason = reason
        self.details = {k: str(v) for k, v in details.items()}


class InvalidArgument(DomainError):
    """Malformed input: bad tiles, impossible melds, unknown ruleset, out-of-range seat."""

    code = "INVALID_ARGUMENT"
    reason = "INVALID_ARGUMENT"


class FailedPrecondition(DomainError):
    """Well-formed but illegal now: out of turn, illegal action, empty wall."""

    code = "FAILED_PRECONDITION"
    reason = "ILLEGAL_NOW"


class NotFound(DomainError):
    code = "NOT_FOUND"
    reason = "NOT_FOUND"


class AlreadyExists(DomainError):
    code = "ALREADY_EXISTS"
    reason = "ALREADY_EXISTS"


class PermissionDenied(DomainError):
    """A token for another seat or table."""

    code = "PERMISSION_DENIED"
    reason = "PERMISSION_DENIED"


class Unauthenticated(DomainError):
    code = "UNAUTHENTICATED"
    reason = "UNAUTHENTICATED"


class Aborted(DomainError):
    """A stale sequence number or a lost race: nothing was applied; retry with fresh state."""

    code = "ABORTED"
    reason = "STALE"


class ResourceExhausted(DomainError):
    code = "RESOURCE_EXHAUSTED"
    reason = "RESOURCE_EXHAUSTED"


class Unavailable(DomainError):
    code = "UNAVAILABLE"
    reason = "UNAVAILABLE"


def _error_classes() -> dict[str, type[DomainError]]:
    out: dict[str, type[DomainError]] = {}
    todo = [DomainError]
    while todo:
        cls = todo.pop()
        out.setdefault(cls.code, cls)
        todo.extend(cls.__subclasses__())
    return out


ERROR_CLASSES = _error_classes()
"""The domain error class of each status code name (a kept refusal is raised again as one)."""


@dataclass(frozen=True)
class Refusal:
    """A refused request as kept for its request id: the same error is raised again."""

    code: str
    message: str
    reason: str
    details: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def of(exc: DomainError) -> Refusal:
        return Refusal(exc.code, exc.message, exc.reason, dict(exc.details))

    def raise_again(self) -> None:
        cls = ERROR_CLASSES.get(self.code, DomainError)
        raise cls(self.message, reason=self.reason, **self.details)

    def as_dict(self) -> dict[str, Any]:
        """The refusal as a JSON object of the records that keep it."""
        return {
            "code": self.code,
            "message": self.message,
            "reason": self.reason,
            "details": self.details,
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Refusal:
        details = d.get("details", {})
        return Refusal(
            str(d["code"]),
            str(d["message"]),
            str(d["reason"]),
            {str(k): str(v) for k, v in details.items()},
        )
