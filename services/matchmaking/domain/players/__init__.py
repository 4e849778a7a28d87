"""Players and identity (身份): who a player is, the sessions that prove it, where they wait.

* :mod:`.accounts` — player records: registration by identity, display names, bots.
* :mod:`.tokens` — matchmaking's session-signing key.
* :mod:`.presence` — the one queue ticket or room that holds a player.
* :mod:`.desk` — the facade's identity desk: sign-in, guests, sessions.

* :mod:`.issuers` — the OpenID Connect issuers a deployment trusts (typed configuration).
* :mod:`.oidc` — ID-token verification against an issuer's JWKS (PyJWT's ``PyJWKClient``).
* :mod:`.sessions` — session records in the store: sign-in, refresh (rotated, single use),
  revocation of one session or all of a player's (on every replica at once).
* :mod:`.guests` — guest players (a deployment setting): no grant, no ledger account.

The session token itself (an EdDSA JWT any replica and the gateway verify without the store) is
:mod:`infra.session_tokens`. The development issuer of ``mahjong run`` lives outside the
product: :mod:`devkit.dev_issuer`.
"""
