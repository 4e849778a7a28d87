"""Seat tokens: ``st1.<table id>.<who>.<signature>``, signed with the gateway's secret.

The signature is :func:`infra.signing.signature` (HMAC-SHA256, the same signer matchmaking's
player tokens use) of ``st1|<table id>|<who>``. ``who`` is a seat (``0`` … ``3``) or a spectator:
``s`` and the spectator's own id (16 hex digits, random), so every spectator of a table holds a
token of its own. A token names one table and one seat or spectator; it is checked on every
call. A forged or malformed token is UNAUTHENTICATED; a valid token for another table (or
another seat than the request names) is PERMISSION_DENIED.

Whether a spectator's token is still admitted (not revoked) is the table's to say (the
gateway's ``tables.spectators``): the signature proves only that the gateway issued it.
``st1.<table>.s.…`` — one token shared by every spectator of a table, as issued before
spectators had tokens of their own — reads as a spectator without an id, which no table admits.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from infra.signing import signature, verify_signature
from shared.errors import PermissionDenied, Unauthenticated

PREFIX = "st1"
SPECTATOR = "s"
SPECTATOR_ID_HEX = 16  # 64 random bits: one spectator cannot guess another's id
_SEATS = ("0", "1", "2", "3")
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class SeatToken:
    """What a verified token proves: its table and its seat, or (``seat`` None) the spectator
    ``spectator_id`` ("" for the shared spectator token of earlier releases)."""

    table_id: str
    seat: int | None
    spectator_id: str = ""


def _message(table_id: str, who: str) -> str:
    return f"{PREFIX}|{table_id}|{who}"


def _signed(secret: bytes, table_id: str, who: str) -> str:
    return f"{PREFIX}.{table_id}.{who}.{signature(secret, _message(table_id, who))}"


def sign_seat_token(secret: bytes, table_id: str, seat: int) -> str:
    """The token of ``seat`` at ``table_id``."""
    return _signed(secret, table_id, str(seat))


def new_spectator_id() -> str:
    """A new spectator's id: random, so spectators' tokens differ and none can be guessed."""
    return secrets.token_hex(SPECTATOR_ID_HEX // 2)


def sign_spectator_token(secret: bytes, table_id: str, spectator_id: str) -> str:
    """The token of the spectator ``spectator_id`` (:func:`new_spectator_id`) at ``table_id``."""
    return _signed(secret, table_id, SPECTATOR + spectator_id)


def _is_spectator(who: str) -> bool:
    rest = who[len(SPECTATOR) :]
    return who.startswith(SPECTATOR) and (
        rest == "" or (len(rest) == SPECTATOR_ID_HEX and set(rest) <= _HEX)
    )


def read_seat_token(secret: bytes, token: str, table_id: str) -> SeatToken:
    """The seat or spectator a token proves at ``table_id``, its signature checked."""
    if not token:
        raise Unauthenticated("seat_token is missing", field="seat_token")
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != PREFIX:
        raise Unauthenticated("seat_token is malformed", field="seat_token")
    _, tid, who, mac = parts
    if who not in _SEATS and not _is_spectator(who):
        raise Unauthenticated("seat_token is malformed", field="seat_token")
    if not verify_signature(secret, _message(tid, who), mac):
        raise Unauthenticated("seat_token signature does not verify", field="seat_token")
    if tid != table_id:
        raise PermissionDenied(
            f"seat_token is for table {tid!r}, not {table_id!r}", field="seat_token"
        )
    if who in _SEATS:
        return SeatToken(tid, int(who))
    return SeatToken(tid, None, who[len(SPECTATOR) :])


def verify_seat_token(secret: bytes, token: str, table_id: str) -> int | None:
    """The seat a token proves at ``table_id`` (None for a spectator)."""
    return read_seat_token(secret, token, table_id).seat
