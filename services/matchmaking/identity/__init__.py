"""Identity (身份): who a player is, and the sessions that prove it.

* :mod:`.issuers` — the OpenID Connect issuers a deployment trusts (typed configuration).
* :mod:`.oidc` — ID-token verification against an issuer's JWKS (PyJWT's ``PyJWKClient``).
* :mod:`.sessions` — session records in the store: sign-in, refresh (rotated, single use),
  revocation of one session or all of a player's (on every replica at once).
* :mod:`.guests` — guest players (a deployment setting): no grant, no ledger account.
* :mod:`.dev_issuer` — the development issuer of ``mahjong run`` and ``mahjong login``.

The session token itself (an EdDSA JWT any replica and the gateway verify without the store) is
:mod:`infra.session_tokens`; matchmaking's signing key is :mod:`services.matchmaking.tokens`.
"""
