"""Suspensions: an operator keeps a player from playing, with a reason, until lifted or until an
end time.

A suspension is a record ``mm_suspensions/<player id>`` (:class:`Suspension`, v1). While it is in
force (:meth:`Suspension.in_force`) every call made with the player's session, a sign-in, a
refresh and the gateway's CheckSession answer PERMISSION_DENIED ``PLAYER_SUSPENDED``
(:func:`refuse`); suspending also ends every session of the player at once. An end time passed
lifts it by itself; lifting it early deletes the record.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Protocol

from services.matchmaking.domain import records
from shared.audit import check_reason
from shared.errors import InvalidArgument, PermissionDenied

__all__ = ["Suspension", "SuspensionRepository", "check_reason", "check_until", "current", "refuse"]

VERSION = 1
MAX_YEARS_MS = 100 * 365 * 24 * 3600 * 1000  # an end time further out than this is a mistake


@dataclass(frozen=True, slots=True)
class Suspension:
    player_id: str
    reason: str
    since_ms: int
    until_ms: int  # 0 = until lifted
    by: str  # the operator's certificate subject
    version: int = VERSION

    def in_force(self, now_ms: int) -> bool:
        return self.until_ms == 0 or now_ms < self.until_ms

    def dump(self) -> bytes:
        return records.dump(asdict(self))

    @classmethod
    def load(cls, raw: bytes | None) -> Suspension | None:
        data = records.load(raw)
        return cls(**data) if data else None


class SuspensionRepository(Protocol):
    def suspension(self, player_id: str) -> Suspension | None: ...

    def keep_suspension(self, suspension: Suspension) -> None: ...

    def lift_suspension(self, player_id: str) -> bool: ...


def check_until(until_ms: int, now_ms: int) -> int:
    """An end time: 0 (until lifted) or a moment in the future, within a hundred years."""
    if until_ms == 0:
        return 0
    if until_ms <= now_ms:
        raise InvalidArgument(
            f"until_unix_ms {until_ms} is not in the future (now {now_ms})", field="until_unix_ms"
        )
    if until_ms - now_ms > MAX_YEARS_MS:
        raise InvalidArgument(
            f"until_unix_ms {until_ms} is more than 100 years away", field="until_unix_ms"
        )
    return until_ms


def current(repo: SuspensionRepository, player_id: str, now_ms: int) -> Suspension | None:
    """The player's suspension in force now (None: none, or it has ended)."""
    found = repo.suspension(player_id)
    return found if found is not None and found.in_force(now_ms) else None


def refuse(repo: SuspensionRepository, player_id: str, now_ms: int) -> None:
    """PERMISSION_DENIED ``PLAYER_SUSPENDED`` while the player is suspended."""
    found = current(repo, player_id, now_ms)
    if found is None:
        return
    until = "until lifted" if found.until_ms == 0 else f"until {found.until_ms} (unix ms)"
    raise PermissionDenied(
        f"player {player_id} is suspended {until}: {found.reason}",
        reason="PLAYER_SUSPENDED",
        player_id=player_id,
        until_unix_ms=found.until_ms,
    )
