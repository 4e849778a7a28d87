"""The development issuer (开发签发方): an OpenID Connect issuer of one's own, for ``mahjong run``,
``mahjong login NAME`` and tests — never for production
(:func:`~services.matchmaking.domain.players.issuers.refuse_dev_issuer`).

* Its key (ES256 by default) is kept in ``.data/dev-issuer/key.pem``, made on first use.
* :class:`DevIssuerServer` serves, on loopback, what a real issuer serves and one thing it
  would not: ``GET /jwks.json`` (its key set, what matchmaking fetches),
  ``GET /.well-known/openid-configuration``, and ``GET /token?name=NAME`` — an ID token for the
  subject ``NAME``, no password asked (so a browser's web table or a script signs in as anyone:
  development only); ``&role=operator`` adds ``roles: ["operator"]`` (an operator's sign-in
  for the web console). CORS allows the local web origins.
* :meth:`DevIssuer.id_token` mints a token directly (``mahjong login NAME`` prints one).

The subject is the name: signing in as ``Alice`` twice is the same player.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from services.matchmaking.domain.players.issuers import DEV_ISSUER, OPERATOR_ROLE, Issuer

ROLES_CLAIM = "roles"  # the claim naming a token's roles (matchmaking's issuer ``roles=``)

DEV_AUDIENCE = "mahjong-dev"
DEFAULT_ROOT = Path(".data") / "dev-issuer"
DEFAULT_PORT = 8059
TOKEN_SECONDS = 600
_JWK = {"RS256": RSAAlgorithm, "ES256": ECAlgorithm, "EdDSA": OKPAlgorithm}


def new_key(alg: str):
    if alg == "RS256":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    if alg == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    raise ValueError(f"unsupported algorithm {alg!r}")


def algorithm_of(key) -> str:
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return "ES256"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise ValueError(f"unsupported key type {type(key).__name__}")


@dataclass
class SigningKey:
    """One key of an issuer: its private key, algorithm and kid."""

    key: Any
    kid: str

    @property
    def alg(self) -> str:
        return algorithm_of(self.key)

    def jwk(self) -> dict:
        out = _JWK[self.alg].to_jwk(self.key.public_key(), as_dict=True)
        return {**out, "kid": self.kid, "alg": self.alg, "use": "sig"}


class DevIssuer:
    """An issuer's keys (the first signs; all are published) and its token minting."""

    def __init__(
        self,
        keys: Iterable[SigningKey],
        issuer: str = DEV_ISSUER,
        audience: str = DEV_AUDIENCE,
    ) -> None:
        self.keys = list(keys)
        self.issuer = issuer
        self.audience = audience

    @classmethod
    def ephemeral(cls, alg: str = "ES256", kid: str = "k1", **kwargs) -> DevIssuer:
        """An issuer with a fresh key in memory (tests)."""
        return cls([SigningKey(new_key(alg), kid)], **kwargs)

    @classmethod
    def at(cls, root: Path = DEFAULT_ROOT) -> DevIssuer:
        """The development issuer whose key is kept under ``root`` (made on first use, readable
        by its owner only)."""
        path = root / "key.pem"
        if not path.exists():
            root.mkdir(parents=True, exist_ok=True)
            pem = new_key("ES256").private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(pem)
            except FileExistsError:
                pass  # made meanwhile by another process: use that one
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        pub = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )

        return cls([SigningKey(key, "dev-" + hashlib.sha256(pub).hexdigest()[:12])])

    def rotate(self, alg: str | None = None, kid: str | None = None) -> SigningKey:
        """A new signing key, published alongside the old ones (a key rotation)."""
        new = SigningKey(new_key(alg or self.keys[0].alg), kid or f"k{len(self.keys) + 1}")
        self.keys.insert(0, new)
        return new

    def jwks(self) -> dict:
        return {"keys": [k.jwk() for k in self.keys]}

    def config(self, jwks_url: str, **kwargs) -> Issuer:
        """This issuer as matchmaking configures it (its key set at ``jwks_url``; its tokens'
        ``roles`` claim grants the operator role)."""
        return Issuer(
            self.issuer, self.audience, jwks_url, **{"roles_claim": ROLES_CLAIM, **kwargs}
        )

    def id_token(
        self,
        subject: str,
        name: str = "",
        *,
        lifetime: int = TOKEN_SECONDS,
        now: float | None = None,
        key: SigningKey | None = None,
        headers: dict | None = None,
        **claims: Any,
    ) -> str:
        """An ID token for ``subject`` (the claims overridable: a test forges with them)."""
        at = int(time.time() if now is None else now)
        signing = key or self.keys[0]
        payload = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": subject,
            "iat": at,
            "nbf": at,
            "exp": at + lifetime,
            "name": name or subject,
            **claims,
        }
        return jwt.encode(
            payload,
            signing.key,
            algorithm=signing.alg,
            headers={"kid": signing.kid, **(headers or {})},
        )


class DevIssuerServer:
    """Serves a :class:`DevIssuer` over HTTP on ``host:port`` (0 = a free port) in a thread;
    ``requests`` counts the key-set fetches (tests of the refetch limit)."""

    def __init__(
        self,
        issuer: DevIssuer,
        host: str = "127.0.0.1",
        port: int = 0,
        cors_origins: Iterable[str] = (),
    ) -> None:
        self.issuer = issuer
        self.jwks_requests = 0
        self._origins = frozenset(cors_origins)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                outer._get(self)

        self._http = ThreadingHTTPServer((host, port), Handler)
        self._http.daemon_threads = True
        self.host, self.port = self._http.server_address[:2]
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="dev-issuer", daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def jwks_url(self) -> str:
        return self.base_url + "/jwks.json"

    def config(self, **kwargs) -> Issuer:
        return self.issuer.config(self.jwks_url, **kwargs)

    def start(self) -> DevIssuerServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> DevIssuerServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _get(self, req: BaseHTTPRequestHandler) -> None:
        url = urlparse(req.path)
        if url.path == "/jwks.json":
            self.jwks_requests += 1
            body: dict = self.issuer.jwks()
        elif url.path == "/.well-known/openid-configuration":
            body = {
                "issuer": self.issuer.issuer,
                "jwks_uri": self.jwks_url,
                "id_token_signing_alg_values_supported": sorted({k.alg for k in self.issuer.keys}),
                "token_endpoint": self.base_url + "/token",
            }
        elif url.path == "/token":
            query = parse_qs(url.query)
            name = (query.get("name") or [""])[0].strip()
            role = (query.get("role") or [""])[0]
            if not name or len(name) > 64:
                self._send(req, 400, {"error": "name must be 1-64 characters: /token?name=NAME"})
                return
            if role not in ("", OPERATOR_ROLE):
                self._send(req, 400, {"error": f"role must be {OPERATOR_ROLE!r} or absent"})
                return
            roles = {ROLES_CLAIM: [role]} if role else {}
            token = self.issuer.id_token(name, name, **roles)
            body = {"id_token": token, "audience": self.issuer.audience}
        else:
            self._send(req, 404, {"error": f"no {url.path}"})
            return
        self._send(req, 200, body)

    def _send(self, req: BaseHTTPRequestHandler, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        req.send_header("Cache-Control", "no-store")
        origin = req.headers.get("Origin", "")
        if origin in self._origins:
            req.send_header("Access-Control-Allow-Origin", origin)
        req.end_headers()
        req.wfile.write(data)
