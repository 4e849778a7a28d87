"""ID-token verification (services/matchmaking/domain/players/oidc.py) against real issuers served
over HTTP on loopback (DevIssuerServer): genuine tokens of RS256, ES256 and EdDSA issuers verify;
every forgery or stale token is UNAUTHENTICATED with a reason and a message naming the problem;
an unknown kid fetches the JWKS again, at most once per refetch interval (PyJWKClient's
cooldown, driven here by a fake monotonic clock); several issuers each verify their own tokens
only."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from types import SimpleNamespace

import jwt
import jwt.jwks_client
import pytest
from cryptography.hazmat.primitives import serialization

from devkit.dev_issuer import DevIssuer, DevIssuerServer, SigningKey, new_key
from services.matchmaking.domain.players.oidc import IdTokenVerifier
from shared.errors import Unauthenticated


@pytest.fixture
def serve():
    """``serve(issuer)`` → a started DevIssuerServer, closed after the test."""
    servers: list[DevIssuerServer] = []

    def start(issuer: DevIssuer) -> DevIssuerServer:
        server = DevIssuerServer(issuer).start()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.close()


@pytest.fixture
def fake_monotonic(monkeypatch):
    """PyJWKClient's cooldown clock (``time.monotonic`` of jwt.jwks_client), moved by hand."""
    now = [1000.0]
    monkeypatch.setattr(
        jwt.jwks_client, "time", SimpleNamespace(monotonic=lambda: now[0], time=time.time)
    )

    def advance(seconds: float) -> None:
        now[0] += seconds

    return advance


def issuer_of(alg: str, name: str = "https://login.test", kid: str = "k1") -> DevIssuer:
    return DevIssuer.ephemeral(alg, kid, issuer=name, audience="mahjong-test")


def refused(verifier: IdTokenVerifier, token: str) -> Unauthenticated:
    with pytest.raises(Unauthenticated) as err:
        verifier.verify(token)
    assert err.value.code == "UNAUTHENTICATED" and err.value.details["field"] == "id_token"
    return err.value


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict, claims: dict, signature: bytes = b"") -> str:
    return ".".join(
        (b64(json.dumps(header).encode()), b64(json.dumps(claims).encode()), b64(signature))
    )


def claims_of(token: str) -> dict:
    return jwt.decode(token, options={"verify_signature": False})


@pytest.mark.parametrize("alg", ["RS256", "ES256", "EdDSA"])
def test_a_genuine_token_of_each_algorithm_verifies(serve, alg):
    issuer = issuer_of(alg)
    server = serve(issuer)
    verifier = IdTokenVerifier([server.config()])
    got = verifier.verify(issuer.id_token("alice-sub", "Alice"))
    assert (got.issuer, got.subject, got.name) == ("https://login.test", "alice-sub", "Alice")
    assert server.jwks_requests == 1
    assert verifier.verify(issuer.id_token("bob-sub", "Bob")).subject == "bob-sub"
    assert server.jwks_requests == 1  # the key set is cached


def test_a_signature_by_another_key_with_the_same_kid_is_refused(serve):
    issuer = issuer_of("ES256")
    verifier = IdTokenVerifier([serve(issuer).config()])
    impostor = SigningKey(new_key("ES256"), "k1")  # the kid the JWKS names, another key
    err = refused(verifier, issuer.id_token("alice", key=impostor))
    assert err.reason == "BAD_SIGNATURE" and "signature" in err.message
    # the same claims with the real key verify: only the signature was wrong
    assert verifier.verify(issuer.id_token("alice")).subject == "alice"


def test_an_expired_token_is_refused_past_the_leeway_only(serve):
    issuer = issuer_of("ES256")
    verifier = IdTokenVerifier([serve(issuer).config(leeway_seconds=60)])
    now = time.time()
    err = refused(verifier, issuer.id_token("alice", now=now - 700, lifetime=600))  # 100 s ago
    assert err.reason == "EXPIRED" and "expired" in err.message
    # expired 30 s ago: within the 60 s of clock skew tolerated
    assert verifier.verify(issuer.id_token("alice", now=now - 630, lifetime=600)).subject


def test_a_token_not_valid_yet_is_refused(serve):
    issuer = issuer_of("ES256")
    verifier = IdTokenVerifier([serve(issuer).config(leeway_seconds=60)])
    now = int(time.time())
    err = refused(verifier, issuer.id_token("alice", iat=now, nbf=now + 600))
    assert err.reason == "NOT_YET_VALID" and "not valid yet" in err.message
    assert verifier.verify(issuer.id_token("alice", iat=now, nbf=now + 30)).subject  # skew


def test_a_token_for_another_audience_is_refused(serve):
    issuer = issuer_of("ES256")
    verifier = IdTokenVerifier([serve(issuer).config()])
    err = refused(verifier, issuer.id_token("alice", aud="another-client"))
    assert err.reason == "WRONG_AUDIENCE" and "'mahjong-test'" in err.message
    err = refused(verifier, issuer.id_token("alice", aud=["another-client", "x"]))
    assert err.reason == "WRONG_AUDIENCE"


def test_a_token_of_an_issuer_not_configured_is_refused(serve):
    trusted = issuer_of("ES256", "https://login.test")
    stranger = issuer_of("ES256", "https://evil.test")
    verifier = IdTokenVerifier([serve(trusted).config()])
    serve(stranger)
    err = refused(verifier, stranger.id_token("alice"))
    assert err.reason == "UNKNOWN_ISSUER" and "'https://evil.test'" in err.message
    assert "not configured" in err.message
    # the trusted issuer's own key, another iss claim: still no configured issuer
    err = refused(verifier, trusted.id_token("alice", iss="https://login.test/"))
    assert err.reason == "UNKNOWN_ISSUER"
    payload = claims_of(trusted.id_token("alice"))
    del payload["iss"]
    no_iss = jwt.encode(payload, trusted.keys[0].key, algorithm="ES256", headers={"kid": "k1"})
    assert refused(verifier, no_iss).reason == "UNKNOWN_ISSUER"


def test_alg_none_is_refused(serve):
    issuer = issuer_of("ES256")
    verifier = IdTokenVerifier([serve(issuer).config()])
    token = unsigned({"alg": "none", "kid": "k1", "typ": "JWT"}, claims_of(issuer.id_token("a")))
    err = refused(verifier, token)
    assert err.reason == "ALGORITHM_REFUSED" and "'none'" in err.message
    token = unsigned({"alg": "None", "kid": "k1"}, claims_of(issuer.id_token("a")))
    assert refused(verifier, token).reason == "ALGORITHM_REFUSED"


@pytest.mark.parametrize("alg", ["RS256", "ES256", "EdDSA"])
def test_hs256_keyed_with_the_public_key_is_refused(serve, alg):
    issuer = issuer_of(alg)
    verifier = IdTokenVerifier([serve(issuer).config()])
    public_pem = (
        issuer.keys[0]
        .key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    payload = claims_of(issuer.id_token("alice"))
    # PyJWT refuses to HMAC with a PEM key itself; the forger computes it by hand
    header = b64(json.dumps({"alg": "HS256", "kid": "k1", "typ": "JWT"}).encode())
    body = b64(json.dumps(payload).encode())
    mac = hmac.new(public_pem, f"{header}.{body}".encode(), hashlib.sha256).digest()
    err = refused(verifier, f"{header}.{body}.{b64(mac)}")
    assert err.reason == "ALGORITHM_REFUSED" and "'HS256'" in err.message


def test_a_header_alg_other_than_the_keys_is_refused(serve):
    issuer = issuer_of("RS256")
    verifier = IdTokenVerifier([serve(issuer).config()])
    # an ES256 token naming the RSA key's kid: the key's own algorithm decides
    other = SigningKey(new_key("ES256"), "k1")
    err = refused(verifier, issuer.id_token("alice", key=other))
    assert err.reason == "ALGORITHM_REFUSED" and "RS256" in err.message


def test_a_token_without_sub_is_refused(serve):
    issuer = issuer_of("ES256")
    verifier = IdTokenVerifier([serve(issuer).config()])
    payload = claims_of(issuer.id_token("alice"))
    del payload["sub"]
    token = jwt.encode(payload, issuer.keys[0].key, algorithm="ES256", headers={"kid": "k1"})
    err = refused(verifier, token)
    assert err.reason == "INVALID_TOKEN" and '"sub"' in err.message
    err = refused(verifier, issuer.id_token(""))
    assert err.reason == "INVALID_TOKEN" and "sub" in err.message
    err = refused(verifier, issuer.id_token("x" * 256))
    assert err.reason == "INVALID_TOKEN" and "sub" in err.message


def test_malformed_and_missing_tokens_are_refused(serve):
    verifier = IdTokenVerifier([serve(issuer_of("ES256")).config()])
    assert refused(verifier, "").reason == "MISSING_TOKEN"
    assert refused(verifier, "not.a.jwt").reason == "MALFORMED_TOKEN"
    assert refused(verifier, "x" * 20_000).reason == "MALFORMED_TOKEN"


def test_after_a_key_rotation_the_unknown_kid_fetches_the_jwks_again(serve, fake_monotonic):
    issuer = issuer_of("ES256")
    server = serve(issuer)
    verifier = IdTokenVerifier([server.config(refetch_seconds=30)])
    assert verifier.verify(issuer.id_token("alice")).subject == "alice"
    assert server.jwks_requests == 1
    issuer.rotate(kid="k2")  # the new key signs; both are published
    fake_monotonic(31)  # past the cooldown the first fetch started
    assert verifier.verify(issuer.id_token("alice")).subject == "alice"
    assert server.jwks_requests == 2  # fetched again for k2
    old = issuer.id_token("bob", key=issuer.keys[1])  # the old key still published
    assert verifier.verify(old).subject == "bob"
    assert server.jwks_requests == 2


def test_a_rotated_key_within_the_cooldown_waits_for_it(serve, fake_monotonic):
    """The documented trade-off (PyJWKClient: every fetch starts the cooldown): a kid first
    seen within ``refetch`` seconds of the last fetch is refused until the interval passes."""
    issuer = issuer_of("EdDSA")
    server = serve(issuer)
    verifier = IdTokenVerifier([server.config(refetch_seconds=30)])
    verifier.verify(issuer.id_token("alice"))
    issuer.rotate(kid="k2")
    fake_monotonic(5)
    err = refused(verifier, issuer.id_token("alice"))
    assert err.reason == "UNKNOWN_KID" and "'k2'" in err.message
    assert server.jwks_requests == 1
    fake_monotonic(26)
    assert verifier.verify(issuer.id_token("alice")).subject == "alice"
    assert server.jwks_requests == 2


def test_a_flood_of_unknown_kids_fetches_at_most_once_per_interval(serve, fake_monotonic):
    issuer = issuer_of("ES256")
    server = serve(issuer)
    verifier = IdTokenVerifier([server.config(refetch_seconds=30)])
    verifier.verify(issuer.id_token("alice"))
    assert server.jwks_requests == 1

    def flood(n: int) -> None:
        for _ in range(n):
            fake = SigningKey(issuer.keys[0].key, uuid.uuid4().hex)
            assert refused(verifier, issuer.id_token("alice", key=fake)).reason == "UNKNOWN_KID"

    flood(200)  # within the cooldown of the first fetch: no request at all
    assert server.jwks_requests == 1
    for interval in range(1, 4):
        fake_monotonic(30.5)
        flood(100)  # one request at the first unknown kid of each interval, then none
        assert server.jwks_requests == 1 + interval
    assert verifier.verify(issuer.id_token("alice")).subject == "alice"  # k1 still cached
    assert server.jwks_requests == 4


def test_a_flood_with_the_real_clock_costs_one_fetch(serve):
    """Without the fake clock: the default 30 s refetch interval, 300 made-up kids as fast as
    they come → the first fetch only."""
    issuer = issuer_of("ES256")
    server = serve(issuer)
    verifier = IdTokenVerifier([server.config()])
    for _ in range(300):
        fake = SigningKey(issuer.keys[0].key, uuid.uuid4().hex)
        assert refused(verifier, issuer.id_token("alice", key=fake)).reason == "UNKNOWN_KID"
    assert server.jwks_requests == 1


def test_two_issuers_each_verify_their_own_tokens_only(serve):
    a = issuer_of("RS256", "https://a.test", kid="k1")
    b = issuer_of("EdDSA", "https://b.test", kid="k1")  # the same kid, another key
    server_a, server_b = serve(a), serve(b)
    verifier = IdTokenVerifier([server_a.config(), server_b.config()])
    got_a, got_b = verifier.verify(a.id_token("same")), verifier.verify(b.id_token("same"))
    assert (got_a.issuer, got_a.subject) == ("https://a.test", "same")
    assert (got_b.issuer, got_b.subject) == ("https://b.test", "same")  # another identity
    # A's key signing a token that claims to be B's: B's key set decides, and refuses it
    forged = a.id_token("victim", iss="https://b.test")
    err = refused(verifier, forged)
    assert err.reason == "ALGORITHM_REFUSED"  # RS256 header, B's k1 is an EdDSA key
    same_alg = issuer_of("EdDSA", "https://c.test", kid="k1")
    forged = same_alg.id_token("victim", iss="https://b.test", aud="mahjong-test")
    assert refused(verifier, forged).reason == "BAD_SIGNATURE"
    # an issuer's algorithms are its own: ES256 is refused where only RS256 is configured
    only_es = issuer_of("ES256", "https://d.test")
    verifier = IdTokenVerifier([serve(only_es).config(algorithms=("RS256",))])
    assert refused(verifier, only_es.id_token("x")).reason == "ALGORITHM_REFUSED"
    assert server_a.jwks_requests == 1 and server_b.jwks_requests == 1
