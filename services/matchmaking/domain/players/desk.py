"""The identity part of the matchmaking facade: sign-in, guests, sessions, display names.

A part of :class:`~services.matchmaking.service.Matchmaking` (like the room and tournament
desks), given the store, the clock and the configuration. Every other part of the facade
authenticates through :meth:`IdentityDesk.authenticate` (a signed-in member, never a guest) or
:meth:`IdentityDesk.authenticate_session` (anyone with a live session).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import structlog

from infra.session_tokens import SessionClaims, SessionSigner, SessionVerifier
from services.matchmaking.domain.clock import Clock
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.operations import suspensions
from services.matchmaking.domain.players import accounts, guests, tokens
from services.matchmaking.domain.players.oidc import IdTokenVerifier
from services.matchmaking.domain.players.repository import PlayerRepository
from services.matchmaking.domain.players.sessions import Issued, Sessions
from services.matchmaking.domain.ports import Records
from shared.errors import PermissionDenied, Unauthenticated

log = structlog.get_logger("mahjong.matchmaking.identity")


@dataclass(frozen=True, slots=True)
class SignedIn:
    player: accounts.Player
    session: Issued
    created: bool  # this sign-in created the player (and made the welcome grant)


def _token_name(name: str) -> str:
    """A display name from the ID token's ``name``: trimmed to the limit, control characters
    dropped; a generated one when nothing is left."""
    clean = "".join(c for c in name if ord(c) >= 32).strip()[: accounts.MAX_NAME].strip()
    return clean or f"Player-{secrets.token_hex(2)}"


class IdentityDesk:
    """Sign-in and sessions (see the module docstring)."""

    def __init__(
        self,
        store: Records,
        players: PlayerRepository,
        clock: Clock,
        config: Any,
        suspended: suspensions.SuspensionRepository | None = None,
    ) -> None:
        """``store``: the ledger's (the welcome grant); ``players``: the players' records.
        ``config``: the facade's MatchmakingConfig (issuers, guests, session lifetimes and
        key, the welcome grant). ``suspended``: the suspensions, whose players hold no session
        (PERMISSION_DENIED ``PLAYER_SUSPENDED``)."""
        self.store = store
        self.players = players
        self.clock = clock
        self.config = config
        key = tokens.session_key(players, config.session_key_file)
        signer = SessionSigner(key)
        self.id_tokens = IdTokenVerifier(config.issuers)
        self.sessions = Sessions(
            players,
            signer,
            SessionVerifier([signer.public_key]),
            clock,
            config.session_lifetime_seconds,
            config.refresh_lifetime_seconds,
            None if suspended is None else self._refuse_suspended(suspended),
        )

    def _refuse_suspended(self, repo: suspensions.SuspensionRepository):
        def refuse(player_id: str) -> None:
            suspensions.refuse(repo, player_id, int(self.clock() * 1000))

        return refuse

    # --- signing in ------------------------------------------------------------------------
    def sign_in(self, id_token: str, display_name: str = "") -> SignedIn:
        """Sign in with an ID token of a configured issuer; the identity's first sign-in makes
        its player and the welcome grant, once, whichever replica answers."""
        name = accounts.validate_display_name(display_name) if display_name.strip() else ""
        identity = self.id_tokens.verify(id_token)
        now = self.clock()
        key = accounts.identity_key(identity.issuer, identity.subject)

        def welcome(player_id: str) -> None:
            # Before the player record exists, and idempotent by the identity: a replica that
            # stops in between leaves the next sign-in to finish, never a second grant.
            ledger.welcome_grant(
                self.store,
                player_id,
                key,
                self.config.starting_silver,
                self.config.free_room_cards,
                now,
            )

        player, created = accounts.player_for_identity(
            self.players,
            identity.issuer,
            identity.subject,
            name or _token_name(identity.name),
            now,
            welcome,
        )
        if created:
            log.info("player_created", player=player.player_id, issuer=identity.issuer)
        issued = self.sessions.start(player.player_id, guest=False, operator=identity.operator)
        return SignedIn(player, issued, created)

    def sign_in_as_guest(self, display_name: str = "") -> SignedIn:
        guests.check_allowed(self.config.allow_guests)
        player = guests.create_guest(self.players, display_name, self.clock())
        return SignedIn(player, self.sessions.start(player.player_id, guest=True), True)

    def refresh_session(self, refresh_token: str) -> tuple[accounts.Player, Issued]:
        issued = self.sessions.refresh(refresh_token)
        return self._player_of(issued.player_id), issued

    def sign_out(self, token: str, all_sessions: bool = False) -> int:
        _, claims = self.authenticate_session(token)
        if all_sessions:
            return self.sessions.end_all(claims.player_id)
        return self.sessions.end(claims)

    def set_display_name(self, token: str, display_name: str) -> accounts.Player:
        player, _ = self.authenticate_session(token)
        return accounts.rename(self.players, player.player_id, display_name)

    # --- authentication --------------------------------------------------------------------
    def peek_session(self, token: str) -> str | None:
        """The player id a session token names, verified by signature only (no store read):
        for flood control before anything else. None for a missing or forged token."""
        return self.sessions.peek(token)

    def authenticate_session(self, token: str) -> tuple[accounts.Player, SessionClaims]:
        """The player of a live session (a guest's too) and the session's claims."""
        claims = self.sessions.check(token)
        return self._player_of(claims.player_id), claims

    def authenticate_operator(self, token: str) -> str:
        """Who acts, for the audit log (``session:<player id> <issuer>#<subject>``), when
        ``token`` is a live operator's session (signed in with the operator role): the web
        console's operator RPCs. A forged, expired or ended token is UNAUTHENTICATED; a
        player's session PERMISSION_DENIED ``NOT_OPERATOR``."""
        claims = self.sessions.check(token)
        record = self.sessions.record(claims)
        if record is None:
            raise Unauthenticated("the session has ended: sign in again", field="session_token")
        if not record.operator:
            raise PermissionDenied(
                "this session is a player's: the operator's console needs a sign-in with the "
                "operator role from the studio's issuer",
                reason="NOT_OPERATOR",
                field="session_token",
            )
        player = self._player_of(claims.player_id)
        return f"session:{player.player_id} {player.issuer}#{player.subject}"

    def authenticate(self, token: str) -> accounts.Player:
        """The signed-in member a session token proves (guests are PERMISSION_DENIED): what
        every seat, room, tournament and purchase call starts with."""
        return guests.refuse_guest(self.authenticate_session(token)[0])

    def _player_of(self, player_id: str) -> accounts.Player:
        player = accounts.find_player(self.players, player_id)
        if player is None:
            raise Unauthenticated(
                f"session names no known player {player_id}", field="session_token"
            )
        return player
