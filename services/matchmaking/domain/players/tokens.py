"""Matchmaking's session-signing key (the old HMAC player tokens are gone: issue 21).

Session tokens are EdDSA JWTs (:mod:`infra.session_tokens`). The Ed25519 private key comes
from ``--session-key FILE`` (a PEM, e.g. a mounted Secret; the gateway is given the matching
public key with ``--session-public-key``), or, when none is configured, is generated once and
kept in the store, so every replica sharing the store signs with the same key and tokens
survive restarts. :func:`write_key_pair` makes such a pair of files (``mahjong run``).
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from infra import session_tokens
from services.matchmaking.domain.players.repository import PlayerRepository


def stored_key(players: PlayerRepository) -> Ed25519PrivateKey:
    """The store's session key, created by the first replica that asks (one per deployment)."""
    pem = players.session_key_pem()
    if pem is None:
        pem = session_tokens.private_pem(session_tokens.new_private_key())
        stored = players.keep_session_key_pem(pem)  # or the race winner's key
        return session_tokens.load_private_pem(stored)
    return session_tokens.load_private_pem(pem)


def session_key(players: PlayerRepository, path: str = "") -> Ed25519PrivateKey:
    """The key in the PEM file at ``path``, or the store's when ``path`` is empty."""
    if path:
        return session_tokens.load_private_pem(Path(path).read_bytes())
    return stored_key(players)


def write_key_pair(private_path: Path, public_path: Path) -> None:
    """A new key pair as PEM files (the private one readable by its owner only), unless the
    private file exists already: then only its public half is (re)written."""
    private_path.parent.mkdir(parents=True, exist_ok=True)
    if private_path.exists():
        key = session_tokens.load_private_pem(private_path.read_bytes())
    else:
        key = session_tokens.new_private_key()
        fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(session_tokens.private_pem(key))
    public_path.write_bytes(session_tokens.public_pem(key.public_key()))
