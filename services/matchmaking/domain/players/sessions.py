"""Sessions (会话): a signed session token for an hour, a refresh token for longer, both ended
by signing out — on every replica at once, because the store holds them.

* A session is a record ``mm_sessions/<player id>/<session id>`` (:class:`SessionRecord`, kept
  by the players' repository).
  The session token (:mod:`infra.session_tokens`) names both ids; :meth:`Sessions.check`
  verifies its signature and expiry (no store read), then that the record still exists.
* The refresh token ``r1.<player id>.<session id>.<secret>`` is kept only as the secret's
  SHA-256. Refreshing rotates it: the presented one stops working, a new one is answered.
  Presenting a spent refresh token again (a stolen copy, or the legitimate one after the thief
  used it) ends the whole session (RFC 6819 §5.2.2.3 reuse detection).
* Signing out deletes the record (or every record of the player): any token naming it is then
  refused by every replica and by the gateway's CheckSession.
* A player keeps at most :data:`MAX_SESSIONS` sessions: the oldest end first, so repeated
  sign-ins cannot fill the store.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from infra.session_tokens import SessionClaims, SessionSigner, SessionVerifier
from services.matchmaking.domain import records
from services.matchmaking.domain.clock import Clock
from services.matchmaking.domain.players.repository import PlayerRepository
from shared.errors import Unauthenticated

VERSION = 1
MAX_SESSIONS = 32
MAX_SPENT = 16  # spent refresh hashes remembered per session (reuse detection)
DEFAULT_LIFETIME_SECONDS = 3600
DEFAULT_REFRESH_LIFETIME_SECONDS = 30 * 24 * 3600
REFRESH_PREFIX = "r1"
MAX_REFRESH_CHARS = 256


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A live session as stored (v1). ``refresh_hash`` is the SHA-256 (hex) of the current
    refresh token's secret; ``spent`` those of refresh tokens already used."""

    player_id: str
    session_id: str
    guest: bool
    created_ms: int
    expires_ms: int  # the current session token's expiry
    refresh_hash: str
    refresh_expires_ms: int
    generation: int = 0  # refreshes so far
    spent: tuple[str, ...] = ()
    version: int = VERSION
    # Signed in with the operator role of an issuer that grants it: the web console's
    # operator RPCs accept this session (refreshing keeps it; revoking ends it like any).
    operator: bool = False

    @classmethod
    def load(cls, raw: bytes | None) -> SessionRecord | None:
        data = records.load(raw)
        if not data:
            return None
        data["spent"] = tuple(data.get("spent", ()))
        return cls(**data)

    def dump(self) -> bytes:
        return records.dump(asdict(self))


@dataclass(frozen=True, slots=True)
class Issued:
    """What a sign-in or a refresh answers (the proto's Session)."""

    session_token: str
    expires_ms: int
    refresh_token: str
    refresh_expires_ms: int
    session_id: str
    player_id: str
    guest: bool
    operator: bool = False


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _ended() -> Unauthenticated:
    return Unauthenticated(
        "the session has ended (signed out or revoked): sign in again",
        reason="SESSION_ENDED",
        field="session_token",
    )


class Sessions:
    """Session records (in ``players``), tokens signed by ``signer`` and checked by ``verifier``
    (its public keys; the signer's among them), time from ``clock``."""

    def __init__(
        self,
        players: PlayerRepository,
        signer: SessionSigner,
        verifier: SessionVerifier,
        clock: Clock,
        lifetime_seconds: int = DEFAULT_LIFETIME_SECONDS,
        refresh_lifetime_seconds: int = DEFAULT_REFRESH_LIFETIME_SECONDS,
        refuse: Callable[[str], None] | None = None,
    ) -> None:
        """``refuse``: raises for a player who may not hold a session now (a suspended one,
        :mod:`~services.matchmaking.domain.operations.suspensions`), before any record is
        read or written."""
        self.players = players
        self.refuse = refuse or (lambda player_id: None)
        self.signer = signer
        self.verifier = verifier
        self.clock = clock
        self.lifetime_seconds = lifetime_seconds
        self.refresh_lifetime_seconds = refresh_lifetime_seconds

    # --- tokens ----------------------------------------------------------------------------
    def _sign(self, player_id: str, session_id: str, guest: bool, now: float) -> tuple[str, int]:
        issued = int(now)
        expires = issued + self.lifetime_seconds
        token = self.signer.sign(SessionClaims(player_id, session_id, guest, issued, expires))
        return token, expires * 1000

    def peek(self, token: str) -> str | None:
        """The player id of a genuine unexpired session token, without a store read (flood
        control); None for anything else. A signed-out session still peeks: the store says."""
        return self.verifier.peek(token, self.clock())

    def check(self, token: str) -> SessionClaims:
        """The claims of a live session: signature and expiry, then its record in the store."""
        claims = self.verifier.verify(token, self.clock())
        self.refuse(claims.player_id)
        if not self.players.has_session(claims.player_id, claims.session_id):
            raise _ended()
        return claims

    # --- lifecycle -------------------------------------------------------------------------
    def start(self, player_id: str, guest: bool, operator: bool = False) -> Issued:
        """A new session for the player (ending its oldest beyond :data:`MAX_SESSIONS`);
        ``operator``: an operator's session (:attr:`SessionRecord.operator`)."""
        self.refuse(player_id)
        now = self.clock()
        now_ms = int(now * 1000)
        self._prune(player_id, now_ms)
        session_id = "s-" + uuid.uuid4().hex
        secret = secrets.token_urlsafe(32)
        token, expires_ms = self._sign(player_id, session_id, guest, now)
        rec = SessionRecord(
            player_id,
            session_id,
            guest,
            now_ms,
            expires_ms,
            _hash(secret),
            now_ms + self.refresh_lifetime_seconds * 1000,
            operator=operator,
        )
        self.players.add_session(rec)
        return self._issued(rec, token, secret)

    def _issued(self, rec: SessionRecord, token: str, secret: str) -> Issued:
        refresh = f"{REFRESH_PREFIX}.{rec.player_id}.{rec.session_id}.{secret}"
        return Issued(
            token,
            rec.expires_ms,
            refresh,
            rec.refresh_expires_ms,
            rec.session_id,
            rec.player_id,
            rec.guest,
            rec.operator,
        )

    def _prune(self, player_id: str, now_ms: int) -> None:
        live = []
        for session_id, rec in self.players.sessions(player_id):
            if rec is None or rec.refresh_expires_ms <= now_ms:
                self.players.end_session(player_id, session_id)
            else:
                live.append((rec.created_ms, session_id))
        for _, session_id in sorted(live)[: max(len(live) - MAX_SESSIONS + 1, 0)]:
            self.players.end_session(player_id, session_id)

    def refresh(self, refresh_token: str) -> Issued:
        """A new session token and refresh token for a current refresh token (which stops
        working). A spent one ends the session; anything else is UNAUTHENTICATED."""
        player_id, session_id, secret = self._parse_refresh(refresh_token)
        self.refuse(player_id)
        now = self.clock()
        now_ms = int(now * 1000)
        presented = _hash(secret)
        new_secret = secrets.token_urlsafe(32)

        def rotate(rec: SessionRecord | None):
            if rec is None:
                return None, ("ended", None)
            if hmac.compare_digest(rec.refresh_hash, presented):
                if rec.refresh_expires_ms <= now_ms:
                    return None, ("expired", None)
                token, expires_ms = self._sign(player_id, session_id, rec.guest, now)
                new = replace(
                    rec,
                    expires_ms=expires_ms,
                    refresh_hash=_hash(new_secret),
                    generation=rec.generation + 1,
                    spent=(*rec.spent, rec.refresh_hash)[-MAX_SPENT:],
                )
                return new, ("ok", (new, token))
            if any(hmac.compare_digest(h, presented) for h in rec.spent):
                return None, ("reused", None)
            return None, ("forged", None)

        outcome, got = self.players.update_session(player_id, session_id, rotate)
        if outcome == "reused":
            self.players.end_session(player_id, session_id)
            raise Unauthenticated(
                "refresh_token was already used: the session has ended (sign in again)",
                reason="REFRESH_TOKEN_REUSED",
                field="refresh_token",
            )
        if outcome == "ended":
            raise Unauthenticated(
                "the session has ended: sign in again",
                reason="SESSION_ENDED",
                field="refresh_token",
            )
        if outcome == "expired":
            self.players.end_session(player_id, session_id)
            raise Unauthenticated(
                "refresh_token has expired: sign in again", reason="EXPIRED", field="refresh_token"
            )
        if outcome == "forged":
            raise Unauthenticated(
                "refresh_token does not verify", reason="BAD_SIGNATURE", field="refresh_token"
            )
        rec, token = got
        return self._issued(rec, token, new_secret)

    @staticmethod
    def _parse_refresh(token: str) -> tuple[str, str, str]:
        parts = token.split(".") if 0 < len(token) <= MAX_REFRESH_CHARS else []
        if len(parts) != 4 or parts[0] != REFRESH_PREFIX or not all(parts[1:]):
            raise Unauthenticated(
                "refresh_token is missing or malformed",
                reason="MALFORMED_TOKEN",
                field="refresh_token",
            )
        if any(not p.isascii() or "/" in p for p in parts):
            raise Unauthenticated(
                "refresh_token is malformed", reason="MALFORMED_TOKEN", field="refresh_token"
            )
        return parts[1], parts[2], parts[3]

    def end(self, claims: SessionClaims) -> int:
        """End one session (signing out); 1 when it was live."""
        return int(self.players.end_session(claims.player_id, claims.session_id))

    def end_all(self, player_id: str) -> int:
        """End every session of the player, on every device; how many there were."""
        ids = [session_id for session_id, _ in self.players.sessions(player_id)]
        return sum(int(self.players.end_session(player_id, session_id)) for session_id in ids)

    def record(self, claims: SessionClaims) -> SessionRecord | None:
        return self.players.session(claims.player_id, claims.session_id)
