"""Seat tokens: ``st1.<table id>.<seat>.<HMAC-SHA256>``, signed with the gateway's secret.

A token names one table and one seat (``s`` for a spectator); it is checked on every call. A
forged or malformed token is UNAUTHENTICATED; a valid token for another table (or another seat
than the request names) is PERMISSION_DENIED.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from shared.errors import PermissionDenied, Unauthenticated

PREFIX = "st1"
SPECTATOR = "s"


def _mac(secret: bytes, table_id: str, seat: str) -> str:
    digest = hmac.new(secret, f"{PREFIX}|{table_id}|{seat}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:18]).decode().rstrip("=")


def sign_seat_token(secret: bytes, table_id: str, seat: int | None) -> str:
    """The token of ``seat`` (None: a spectator) at ``table_id``."""
    who = SPECTATOR if seat is None else str(seat)
    return f"{PREFIX}.{table_id}.{who}.{_mac(secret, table_id, who)}"


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
    if not hmac.compare_digest(mac, _mac(secret, tid, who)):
        raise Unauthenticated("seat_token signature does not verify", field="seat_token")
    if tid != table_id:
        raise PermissionDenied(
            f"seat_token is for table {tid!r}, not {table_id!r}", field="seat_token"
        )
    return None if who == SPECTATOR else int(who)
