"""Guests (游客): a deployment setting (``--allow-guests``; on in development, off by default).

A guest signs in without an issuer and gets a session like anyone, but no welcome grant and no
ledger account: guests play casual tables against bots only (the gateway's public tables), and
every matchmaking call that seats, spends or enters (queues, rooms, tournaments, purchases) is
PERMISSION_DENIED for them (:func:`refuse_guest`).
"""

from __future__ import annotations

import secrets

from services.matchmaking.domain.players import accounts
from services.matchmaking.domain.players.repository import PlayerRepository
from shared.errors import FailedPrecondition, PermissionDenied


def check_allowed(allow_guests: bool) -> None:
    if not allow_guests:
        raise FailedPrecondition(
            "guests are off on this deployment: sign in with an ID token (SignIn)",
            reason="GUESTS_OFF",
        )


def guest_name(display_name: str) -> str:
    """The guest's chosen name (validated), or a generated ``Guest-xxxx``."""
    if display_name.strip():
        return accounts.validate_display_name(display_name)
    return f"Guest-{secrets.token_hex(2)}"


def create_guest(players: PlayerRepository, display_name: str, now: float) -> accounts.Player:
    return accounts.create_player(players, guest_name(display_name), bot=False, now=now, guest=True)


def refuse_guest(player: accounts.Player) -> accounts.Player:
    """The player, unless a guest: guests get no seat, room, tournament or purchase here."""
    if player.guest:
        raise PermissionDenied(
            "a guest plays casual tables against bots only: sign in with an ID token for "
            "matchmaking",
            reason="GUEST",
        )
    return player
