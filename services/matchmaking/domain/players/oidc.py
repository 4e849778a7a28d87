"""OpenID Connect ID-token verification (ID 令牌校验) with PyJWT, per configured issuer.

A token is accepted only when all of these hold (issue 21 item 1):

* its unverified ``iss`` names a configured issuer (:mod:`.issuers`), and its header's ``alg``
  is one of that issuer's asymmetric algorithms (RS256, ES256, EdDSA; never ``none`` or HMAC);
* its ``kid`` names a key of the issuer's JWKS, fetched by PyJWT's ``PyJWKClient`` and cached;
  an unknown ``kid`` fetches the set again at most every ``refetch_seconds`` (30 s): a flood of
  made-up kids costs the issuer one request per 30 s per replica, not one per token;
* the signature verifies with that key, whose own algorithm is the header's;
* ``iss`` and ``aud`` are the issuer's, ``exp`` and ``nbf`` hold with ``leeway_seconds`` of
  clock skew, and ``sub``, ``iat`` and ``exp`` are present.

Anything else is UNAUTHENTICATED with a ``reason`` saying which check failed; an issuer whose
JWKS cannot be fetched is UNAVAILABLE (a retry may succeed), never a sign-in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import jwt
from jwt import PyJWKClient, PyJWKClientConnectionError, PyJWKClientError

from services.matchmaking.domain.players.issuers import OPERATOR_ROLE, Issuer
from shared.errors import Unauthenticated, Unavailable

MAX_TOKEN_CHARS = 16_384
MAX_SUBJECT_CHARS = 255
JWKS_LIFESPAN_SECONDS = 3600.0  # a cached key set is fetched again after this anyway
JWKS_TIMEOUT_SECONDS = 5.0
FIELD = "id_token"


@dataclass(frozen=True, slots=True)
class Identity:
    """Who an ID token says signed in: the pair (issuer, subject), and the name it suggests."""

    issuer: str
    subject: str
    name: str  # the token's ``name`` or ``preferred_username`` ("" when neither)
    operator: bool = False  # the issuer grants roles and the token names the operator role


def _refused(message: str, reason: str) -> Unauthenticated:
    return Unauthenticated(message, reason=reason, field=FIELD)


class IdTokenVerifier:
    """Verifies ID tokens of the configured issuers; one cached ``PyJWKClient`` per issuer.
    Thread-safe (the client locks its cache)."""

    def __init__(self, issuers: Iterable[Issuer], *, timeout: float = JWKS_TIMEOUT_SECONDS):
        self.issuers = {i.issuer: i for i in issuers}
        self._clients = {
            name: PyJWKClient(
                i.jwks_url,
                cache_jwk_set=True,
                lifespan=JWKS_LIFESPAN_SECONDS,
                timeout=timeout,
                cooldown_duration=i.refetch_seconds,
            )
            for name, i in self.issuers.items()
        }

    def verify(self, token: str) -> Identity:
        """The identity ``token`` proves; :class:`Unauthenticated` for anything not proven,
        :class:`Unavailable` when the issuer's keys cannot be fetched."""
        if not token:
            raise _refused("id_token is missing", "MISSING_TOKEN")
        if len(token) > MAX_TOKEN_CHARS:
            raise _refused(
                f"id_token has {len(token)} characters; at most {MAX_TOKEN_CHARS}",
                "MALFORMED_TOKEN",
            )
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.InvalidTokenError as exc:
            raise _refused(f"id_token is not a JWT: {exc}", "MALFORMED_TOKEN") from None
        iss = unverified.get("iss")
        issuer = self.issuers.get(iss) if isinstance(iss, str) else None
        if issuer is None:
            raise _refused(f"id_token's issuer {iss!r} is not configured here", "UNKNOWN_ISSUER")
        alg = header.get("alg")
        if alg not in issuer.algorithms:
            raise _refused(
                f"id_token's algorithm {alg!r} is not one of {list(issuer.algorithms)}",
                "ALGORITHM_REFUSED",
            )
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise _refused("id_token has no kid", "UNKNOWN_KID")
        try:
            key = self._clients[issuer.issuer].get_signing_key(kid)
        except PyJWKClientConnectionError as exc:
            raise Unavailable(
                f"the keys of issuer {issuer.issuer} are unreachable: {exc}",
                reason="JWKS_UNAVAILABLE",
            ) from None
        except PyJWKClientError:
            raise _refused(f"issuer {issuer.issuer} has no key {kid!r}", "UNKNOWN_KID") from None
        if key.algorithm_name != alg:
            raise _refused(
                f"key {kid!r} is a {key.algorithm_name} key, not {alg}", "ALGORITHM_REFUSED"
            )
        return self._decode(token, key.key, alg, issuer)

    @staticmethod
    def _decode(token: str, key, alg: str, issuer: Issuer) -> Identity:
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=issuer.audience,
                issuer=issuer.issuer,
                leeway=issuer.leeway_seconds,
                options={"require": ["iss", "aud", "sub", "exp", "iat"]},
            )
        except jwt.ExpiredSignatureError:
            raise _refused("id_token has expired", "EXPIRED") from None
        except jwt.ImmatureSignatureError:
            raise _refused(
                "id_token is not valid yet (nbf or iat ahead)", "NOT_YET_VALID"
            ) from None
        except jwt.InvalidAudienceError:
            raise _refused(
                f"id_token is not for audience {issuer.audience!r}", "WRONG_AUDIENCE"
            ) from None
        except jwt.InvalidIssuerError:
            raise _refused("id_token's issuer does not match", "UNKNOWN_ISSUER") from None
        except jwt.InvalidSignatureError:
            raise _refused("id_token's signature does not verify", "BAD_SIGNATURE") from None
        except jwt.InvalidTokenError as exc:
            raise _refused(f"id_token refused: {exc}", "INVALID_TOKEN") from None
        sub = claims["sub"]
        if not isinstance(sub, str) or not sub or len(sub) > MAX_SUBJECT_CHARS:
            raise _refused(
                f"id_token's sub must be 1-{MAX_SUBJECT_CHARS} characters", "INVALID_TOKEN"
            )
        name = claims.get("name") or claims.get("preferred_username") or ""
        roles = claims.get(issuer.roles_claim) if issuer.roles_claim else None
        operator = roles == OPERATOR_ROLE or (isinstance(roles, list) and OPERATOR_ROLE in roles)
        return Identity(issuer.issuer, sub, name if isinstance(name, str) else "", operator)
