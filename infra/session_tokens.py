"""Session tokens (会话令牌): EdDSA JWTs that matchmaking signs at sign-in and every replica of
matchmaking and the gateway verify without a store read.

Why this shape: a session is checked on every player call and on the gateway's JoinSeat; an
HMAC token would need the secret on the gateway (which could then mint sessions), and an opaque
token would need a store read just to learn whose it is. An Ed25519 signature verifies in tens
of microseconds from a public key alone, so the gateway holds only the public key, and flood
control can read a token's player before any store read (:meth:`SessionVerifier.peek`).
Liveness (sign-out, revocation) is the store's: matchmaking checks its session record on
every call (and answers the gateway's CheckSession), so a revocation holds on every replica at
once. Header ``alg`` EdDSA and ``kid`` (the key's fingerprint) only: a token of any other
algorithm (``none``, HS256 keyed with the public key) or of an unknown key is refused.

Claims: ``iss`` :data:`ISSUER`, ``aud`` :data:`AUDIENCE`, ``sub`` the player id, ``sid`` the
session id, ``gst`` a guest, ``iat``/``exp`` (unix seconds).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from shared.errors import Unauthenticated

ISSUER = "mahjong-matchmaking"
AUDIENCE = "mahjong"
ALGORITHM = "EdDSA"
FIELD = "session_token"
MAX_TOKEN_CHARS = 2048
LEEWAY_SECONDS = 5  # replicas' clocks may differ a little


@dataclass(frozen=True, slots=True)
class SessionClaims:
    """What a session token says (verified): whose session, which one, until when."""

    player_id: str
    session_id: str
    guest: bool
    issued_at: int  # unix seconds
    expires_at: int  # unix seconds


def key_id(public_key: Ed25519PublicKey) -> str:
    """The key's fingerprint: 16 URL-safe characters of the SHA-256 of its raw bytes."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.urlsafe_b64encode(hashlib.sha256(raw).digest()[:12]).decode()


def new_private_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def private_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def public_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def load_private_pem(pem: bytes) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("the session key is not an Ed25519 private key")
    return key


def load_public_pems(pem: bytes) -> list[Ed25519PublicKey]:
    """Every public key of a PEM file (one, or several during a key rotation)."""
    keys = []
    marker = b"-----END PUBLIC KEY-----"
    for block in pem.split(marker)[:-1]:
        key = serialization.load_pem_public_key(block + marker)
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("a session public key is not an Ed25519 key")
        keys.append(key)
    if not keys:
        raise ValueError("no PUBLIC KEY block in the session public key file")
    return keys


class SessionSigner:
    """Signs session tokens with matchmaking's private key."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = private_key.public_key()
        self.kid = key_id(self.public_key)

    def sign(self, claims: SessionClaims) -> str:
        payload = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": claims.player_id,
            "sid": claims.session_id,
            "gst": claims.guest,
            "iat": claims.issued_at,
            "exp": claims.expires_at,
        }
        return jwt.encode(payload, self._key, algorithm=ALGORITHM, headers={"kid": self.kid})


def _refused(message: str, reason: str) -> Unauthenticated:
    return Unauthenticated(message, reason=reason, field=FIELD)


class SessionVerifier:
    """Verifies session tokens against matchmaking's public keys (several during a rotation),
    statelessly: the signature, the claims and the expiry at ``now`` (the caller's clock)."""

    def __init__(self, public_keys: Iterable[Ed25519PublicKey]) -> None:
        self._keys = {key_id(k): k for k in public_keys}
        if not self._keys:
            raise ValueError("a session verifier needs at least one public key")

    def verify(self, token: str, now: float) -> SessionClaims:
        """The claims of a genuine, unexpired token; :class:`Unauthenticated` otherwise."""
        if not token:
            raise _refused("session_token is missing: sign in first", "MISSING_TOKEN")
        if len(token) > MAX_TOKEN_CHARS:
            raise _refused(f"session_token has {len(token)} characters", "MALFORMED_TOKEN")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise _refused("session_token is not a session token", "MALFORMED_TOKEN") from None
        if header.get("alg") != ALGORITHM:
            raise _refused(
                f"session_token's algorithm {header.get('alg')!r} is not {ALGORITHM}",
                "ALGORITHM_REFUSED",
            )
        key = self._keys.get(header.get("kid"))  # type: ignore[arg-type]
        if key is None:
            raise _refused("session_token was signed by an unknown key", "UNKNOWN_KID")
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[ALGORITHM],
                audience=AUDIENCE,
                issuer=ISSUER,
                options={
                    "verify_exp": False,
                    "verify_iat": False,
                    "require": ["sub", "sid", "iat", "exp"],
                },
            )
        except jwt.InvalidSignatureError:
            raise _refused("session_token's signature does not verify", "BAD_SIGNATURE") from None
        except jwt.InvalidTokenError as exc:
            raise _refused(f"session_token refused: {exc}", "INVALID_TOKEN") from None
        sub, sid, exp, iat = claims["sub"], claims["sid"], claims["exp"], claims["iat"]
        if not (isinstance(sub, str) and isinstance(sid, str) and sub and sid):
            raise _refused("session_token names no player", "INVALID_TOKEN")
        if not (isinstance(exp, int) and isinstance(iat, int)):
            raise _refused("session_token's times are not integers", "INVALID_TOKEN")
        if exp + LEEWAY_SECONDS <= now:
            raise _refused("session_token has expired: refresh the session", "EXPIRED")
        return SessionClaims(sub, sid, bool(claims.get("gst")), iat, exp)

    def peek(self, token: str, now: float) -> str | None:
        """The player id of a genuine unexpired token, else None: no store read, no exception
        (flood control keys on it before anything else runs)."""
        try:
            return self.verify(token, now).player_id
        except Unauthenticated:
            return None
