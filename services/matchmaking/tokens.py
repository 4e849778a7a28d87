"""Player tokens: ``<player id>.<HMAC-SHA256 signature>``, verified on every call.

The signing secret comes from configuration, or is generated once and kept in the store, so
tokens stay valid across restarts and across replicas sharing the store.
"""

from __future__ import annotations

from shared.errors import Unauthenticated
from shared.signing import signature, stored_secret, verify_signature
from shared.store.base import Store

_SECRET_NS = "mm_config"
_SECRET_KEY = "token_secret"


def load_or_create_secret(store: Store) -> bytes:
    """The store's player-token secret, created on first use (one per deployment)."""
    return stored_secret(store, _SECRET_NS, _SECRET_KEY)


def sign_player_token(secret: bytes, player_id: str) -> str:
    """The token a registered player presents on every call."""
    return f"{player_id}.{signature(secret, 'player:' + player_id)}"


def verify_player_token(secret: bytes, token: str) -> str:
    """The player id a token proves; :class:`Unauthenticated` for a missing or forged token."""
    if not token:
        raise Unauthenticated("player_token is missing", field="player_token")
    player_id, dot, sig = token.rpartition(".")
    if not dot or not player_id:
        raise Unauthenticated("player_token is malformed", field="player_token")
    if not verify_signature(secret, "player:" + player_id, sig):
        raise Unauthenticated("player_token signature does not verify", field="player_token")
    return player_id
