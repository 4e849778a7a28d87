"""HMAC signatures for bearer tokens, and the signing secret kept in the store.

Services sign their own token formats (matchmaking's player tokens, the gateway's seat tokens)
with :func:`signature`; :func:`stored_secret` gives every replica sharing a store the same
secret, generated once, so tokens survive restarts.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import secrets

from infra.store.base import AlreadyExists, Store


def signature(secret: bytes, message: str) -> str:
    """URL-safe HMAC-SHA256 of ``message`` (144 bits, unpadded base64)."""
    digest = hmac.new(secret, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:18]).decode().rstrip("=")


def verify_signature(secret: bytes, message: str, candidate: str) -> bool:
    """Constant-time check of a signature made by :func:`signature`. A candidate that is not
    ASCII (so no signature) is False, not a TypeError from ``hmac.compare_digest``."""
    if not candidate.isascii():
        return False
    return hmac.compare_digest(candidate, signature(secret, message))


def stored_secret(store: Store, namespace: str, key: str) -> bytes:
    """The secret at ``namespace/key``, created (32 random bytes) by the first caller."""
    rec = store.get(namespace, key)
    if rec is None:
        # AlreadyExists: another replica won the race; use its secret.
        with contextlib.suppress(AlreadyExists):
            store.create(namespace, key, secrets.token_bytes(32))
        rec = store.get(namespace, key)
    assert rec is not None
    return rec.value
