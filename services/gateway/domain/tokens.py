"""Seat tokens: ``st1.<table id>.<seat>.<signature>``, signed with the gateway's secret.

The signature is :func:`shared.signing.signature` (HMAC-SHA256, the same signer matchmaking's
player tokens use) of ``st1|<table id>|<seat>``. A token names one table and one seat (``s``
for a spectator); it is checked on every call. A forged or malformed token is
UNAUTHENTICATED; a valid token for another table (or another seat than the request names) is
PERMISSION_DENIED.
"""

from __future__ import annotations

from shared.errors import PermissionDenied, Unauthenticated
from shared.signing import signature, verify_signature

PREFIX = "st1"
SPECTATOR = "s"


def _message(table_id: str, seat: str) -> str:
    return f"{PREFIX}|{table_id}|{seat}"


def sign_seat_token(secret: bytes, table_id: str, seat: int | None) -> str:
    """The token of ``seat`` (None: a spectator) at ``table_id``."""
    who = SPECTATOR if seat is None else str(seat)
    return f"{PREFIX}.{table_id}.{who}.{signature(secret, _message(table_id, who))}"


def verify_seat_token(secret: bytes, token: str, table_id: str) -> int | None:
    """The seat a token proves at ``table_id`` (None for a spectator)."""
    if not token:
        raise Unauthenticated("seat_token is missing", field="seat_token")
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != PREFIX:
        raise Unauthenticated("seat_token is malformed", field="seat_token")
    _, tid, who, mac = parts
    if who != SPECTATOR and who not in ("0", "1", "2", "3"):
        raise Unauthenticated("seat_token is malformed", field="seat_token")
    if not verify_signature(secret, _message(tid, who), mac):
        raise Unauthenticated("seat_token signature does not verify", field="seat_token")
    if tid != table_id:
        raise PermissionDenied(
            f"seat_token is for table {tid!r}, not {table_id!r}", field="seat_token"
        )
    return None if who == SPECTATOR else int(who)
