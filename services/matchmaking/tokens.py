"""Player tokens: ``<player id>.<HMAC-SHA256 signature>``, verified on every call.

The signing secret comes from configuration, or is generated once and kept in the store, so
tokens stay valid across restarts and across replicas sharing the store.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import secrets

from shared.errors import Unauthenticated
from shared.store.base import AlreadyExists, Store

_SECRET_NS = "mm_config"
_SECRET_KEY = "token_secret"


def load_or_create_secret(store: Store) -> bytes:
    """The store's token secret, created on first use (one per deployment)."""
    rec = store.get(_SECRET_NS, _SECRET_KEY)
    if rec is not None:
        return rec.value
    # AlreadyExists: another replica won the race; use its secret.
    with contextlib.suppress(AlreadyExists):
        store.create(_SECRET_NS, _SECRET_KEY, secrets.token_bytes(32))
    rec = store.get(_SECRET_NS, _SECRET_KEY)
    assert rec is not None
    return rec.value


def _signature(secret: bytes, player_id: str) -> str:
    mac = hmac.new(secret, b"player:" + player_id.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:18]).decode().rstrip("=")


def sign_player_token(secret: bytes, player_id: str) -> str:
    """The token a registered player presents on every call."""
    return f"{player_id}.{_signature(secret, player_id)}"


def verify_player_token(secret: bytes, token: str) -> str:
    """The player id a token proves; :class:`Unauthenticated` for a missing or forged token."""
    if not token:
        raise Unauthenticated("player_token is missing", field="player_token")
    player_id, dot, signature = token.rpartition(".")
    if not dot or not player_id:
        raise Unauthenticated("player_token is malformed", field="player_token")
    if not hmac.compare_digest(signature, _signature(secret, player_id)):
        raise Unauthenticated("player_token signature does not verify", field="player_token")
    return player_id
