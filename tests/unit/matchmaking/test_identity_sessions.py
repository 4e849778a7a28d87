"""Sessions (services/matchmaking/domain/players/sessions.py, infra/session_tokens.py) through the
matchmaking facade: a session is checked by signature, expiry (a ManualClock) and its store
record; refreshing rotates the single-use refresh token and presenting a spent one ends the
session; signing out one session or all holds for a second facade on the same store (another
replica); forged tokens (another key, another algorithm, altered claims) are refused; a player
keeps at most MAX_SESSIONS; the welcome grant is made once per identity, even when two facades
race on one store."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import uuid

import jwt
import pytest

from infra import session_tokens
from infra.session_tokens import SessionClaims, SessionSigner
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.players import sessions as sessions_mod
from services.matchmaking.storage import player_records
from shared.errors import PermissionDenied, Unauthenticated
from tests.support.identity import id_token, unique_subject
from tests.unit.matchmaking.mm_fakes import make_service


def refused(fn, *args) -> Unauthenticated:
    with pytest.raises(Unauthenticated) as err:
        fn(*args)
    return err.value


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def parts(token: str) -> tuple[dict, dict]:
    return jwt.get_unverified_header(token), jwt.decode(token, options={"verify_signature": False})


@pytest.fixture
def svc():
    mm, _, clock = make_service()
    return mm, clock


def sign_in(mm, name: str = "Ann", subject: str | None = None):
    return mm.sign_in(id_token(name, subject or unique_subject(name)), name)


def test_a_session_is_checked_by_signature_expiry_and_record(svc):
    mm, clock = svc
    got = sign_in(mm)
    token = got.session.session_token
    claims = mm.sessions.check(token)
    assert (claims.player_id, claims.session_id) == (got.player.player_id, got.session.session_id)
    assert claims.expires_at == int(clock()) + 3600 and not claims.guest
    assert got.session.expires_ms == claims.expires_at * 1000
    assert mm.authenticate(token).player_id == got.player.player_id
    clock.advance(3600 + session_tokens.LEEWAY_SECONDS - 1)  # within the replicas' skew
    assert mm.authenticate(token).player_id == got.player.player_id
    clock.advance(1)
    err = refused(mm.authenticate, token)
    assert err.reason == "EXPIRED" and "expired" in err.message
    assert mm.peek_session(token) is None


def test_refresh_rotates_and_reuse_ends_the_session(svc):
    mm, clock = svc
    got = sign_in(mm)
    first = got.session.refresh_token
    clock.advance(3000)
    player, second = mm.refresh_session(first)
    assert player.player_id == got.player.player_id
    assert second.session_id == got.session.session_id and second.refresh_token != first
    assert second.expires_ms == int(clock() + 3600) * 1000  # a new hour from the refresh
    assert mm.authenticate(second.session_token).player_id == player.player_id
    _, third = mm.refresh_session(second.refresh_token)  # the current one works, once
    # a spent refresh token presented again (a thief's copy): the whole session ends
    err = refused(mm.refresh_session, first)
    assert err.reason == "REFRESH_TOKEN_REUSED" and "already used" in err.message
    for token in (got.session.session_token, second.session_token, third.session_token):
        assert refused(mm.authenticate, token).reason == "SESSION_ENDED"
    assert refused(mm.refresh_session, third.refresh_token).reason == "SESSION_ENDED"
    assert mm.sessions.record(mm.sessions.verifier.verify(third.session_token, clock())) is None


def test_forged_malformed_and_expired_refresh_tokens_are_refused(svc):
    mm, clock = svc
    got = sign_in(mm)
    r = got.session.refresh_token
    prefix, pid, sid, secret = r.split(".")
    forged = f"{prefix}.{pid}.{sid}.{'A' * len(secret)}"
    assert refused(mm.refresh_session, forged).reason == "BAD_SIGNATURE"
    other = sign_in(mm, "Bob").player.player_id
    assert refused(mm.refresh_session, f"{prefix}.{other}.{sid}.{secret}").reason == (
        "SESSION_ENDED"  # another player's id with this session: no such session
    )
    for bad in ("", "r1.a.b", "r2.a.b.c", "r1.a/x.b.c", "r1." + "x" * 300):
        assert refused(mm.refresh_session, bad).reason == "MALFORMED_TOKEN"
    assert mm.authenticate(got.session.session_token)  # none of that ended the session
    _, fresh = mm.refresh_session(r)
    clock.advance(sessions_mod.DEFAULT_REFRESH_LIFETIME_SECONDS)
    err = refused(mm.refresh_session, fresh.refresh_token)
    assert err.reason == "EXPIRED" and "expired" in err.message


def test_sign_out_holds_for_another_replica_on_the_same_store(svc):
    mm, _ = svc
    other, _, _ = make_service(store=mm.store)  # a second replica: same store, same key
    subject = unique_subject("Ann")
    one, two, three = (sign_in(mm, "Ann", subject) for _ in range(3))
    assert one.player.player_id == two.player.player_id == three.player.player_id
    assert other.authenticate(one.session.session_token).player_id == one.player.player_id
    assert other.sign_out(one.session.session_token) == 1  # signed out on the other replica
    err = refused(mm.authenticate, one.session.session_token)
    assert err.reason == "SESSION_ENDED" and "signed out" in err.message
    assert refused(mm.authenticate_session, one.session.session_token).reason == "SESSION_ENDED"
    assert refused(mm.refresh_session, one.session.refresh_token).reason == "SESSION_ENDED"
    assert refused(other.sign_out, one.session.session_token).reason == "SESSION_ENDED"
    assert mm.authenticate(two.session.session_token)  # the other sessions live on
    assert other.sign_out(two.session.session_token, all_sessions=True) == 2
    for got in (two, three):
        for replica in (mm, other):
            assert refused(replica.authenticate, got.session.session_token).reason == (
                "SESSION_ENDED"
            )
            assert refused(replica.refresh_session, got.session.refresh_token).reason == (
                "SESSION_ENDED"
            )
    again = sign_in(mm, "Ann", subject)  # signing in again works, as the same player
    assert again.player.player_id == one.player.player_id and not again.created
    assert other.authenticate(again.session.session_token).player_id == one.player.player_id


def test_a_revoked_session_is_refused_to_the_gateways_check(svc):
    """CheckSession answers from authenticate_session: a revoked session is refused."""
    mm, _ = svc
    got = sign_in(mm)
    player, claims = mm.authenticate_session(got.session.session_token)
    assert player.player_id == got.player.player_id
    mm.sessions.end(claims)  # revoked (as SignOut does)
    err = refused(mm.authenticate_session, got.session.session_token)
    assert err.reason == "SESSION_ENDED" and err.details["field"] == "session_token"
    # the signature alone still holds (flood control peeks without the store)
    assert mm.peek_session(got.session.session_token) == got.player.player_id


def test_session_tokens_of_another_key_or_algorithm_are_refused(svc):
    mm, _ = svc
    got = sign_in(mm)
    token = got.session.session_token
    header, claims = parts(token)
    assert header["alg"] == "EdDSA" and header["kid"] == mm.sessions.signer.kid
    stolen = SessionClaims(got.player.player_id, got.session.session_id, False, claims["iat"],
                           claims["exp"])  # fmt: skip
    # another Ed25519 key, its own kid
    outsider = SessionSigner(session_tokens.new_private_key())
    err = refused(mm.authenticate, outsider.sign(stolen))
    assert err.reason == "UNKNOWN_KID" and "unknown key" in err.message
    # another key under the real kid
    impostor = jwt.encode(claims, session_tokens.new_private_key(), algorithm="EdDSA",
                          headers={"kid": header["kid"]})  # fmt: skip
    err = refused(mm.authenticate, impostor)
    assert err.reason == "BAD_SIGNATURE" and "signature" in err.message
    # HS256 keyed with the (public) verification key, and alg none
    public = session_tokens.public_pem(mm.sessions.signer.public_key)
    head = b64(json.dumps({"alg": "HS256", "kid": header["kid"], "typ": "JWT"}).encode())
    body = b64(json.dumps(claims).encode())
    mac = hmac.new(public, f"{head}.{body}".encode(), hashlib.sha256).digest()
    err = refused(mm.authenticate, f"{head}.{body}.{b64(mac)}")
    assert err.reason == "ALGORITHM_REFUSED" and "'HS256'" in err.message
    none = b64(json.dumps({"alg": "none", "kid": header["kid"]}).encode())
    assert refused(mm.authenticate, f"{none}.{body}.").reason == "ALGORITHM_REFUSED"
    # the genuine signature over altered claims: another player's id
    victim = sign_in(mm, "Victim").player.player_id
    h, _, sig = token.split(".")
    altered = b64(json.dumps({**claims, "sub": victim}).encode())
    assert refused(mm.authenticate, f"{h}.{altered}.{sig}").reason == "BAD_SIGNATURE"
    # well signed, but for another audience or issuer
    for change in ({"aud": "gateway"}, {"iss": "someone"}):
        wrong = mm.sessions.signer  # the real key, altered claims re-signed
        forged = jwt.encode({**claims, **change}, wrong._key, algorithm="EdDSA",
                            headers={"kid": header["kid"]})  # fmt: skip
        assert refused(mm.authenticate, forged).reason == "INVALID_TOKEN"
    assert mm.authenticate(token).player_id == got.player.player_id  # the real one still works


def test_a_player_keeps_at_most_max_sessions(svc):
    mm, clock = svc
    subject = unique_subject("Ann")
    got = []
    for _ in range(sessions_mod.MAX_SESSIONS + 3):
        got.append(sign_in(mm, "Ann", subject))
        clock.advance(1)  # created in order
    pid = got[0].player.player_id
    live = list(mm.store.scan(player_records.SESSIONS, pid + "/"))
    assert len(live) == sessions_mod.MAX_SESSIONS
    for old in got[:3]:  # the oldest ended first
        assert refused(mm.authenticate, old.session.session_token).reason == "SESSION_ENDED"
    for kept in got[3:]:
        assert mm.authenticate(kept.session.session_token).player_id == pid


def welcome_refs(store, player_id: str) -> list[str]:
    return sorted({e.ref for e in ledger.entries(store, player_id) if e.ref.startswith("welcome/")})


def test_the_welcome_grant_is_made_once_per_identity(svc):
    mm, _ = svc
    subject = unique_subject("Ann")
    first, second = sign_in(mm, "Ann", subject), sign_in(mm, "Ann", subject)
    assert first.created and not second.created
    pid = first.player.player_id
    assert second.player.player_id == pid
    assert ledger.balance(mm.store, pid) == 1000
    assert ledger.balance(mm.store, pid, ledger.ROOM_CARD) == 3
    assert len(welcome_refs(mm.store, pid)) == 1
    silver = [e for e in ledger.entries(mm.store, pid) if e.asset == ledger.SILVER]
    assert [(e.kind, e.amount) for e in silver] == [(ledger.GRANT, 1000)]
    # the same subject at another issuer would be another identity; another subject, another
    other = sign_in(mm, "Ann")
    assert other.player.player_id != pid and other.created


def test_one_identity_signing_in_on_two_replicas_at_once_is_one_player_one_grant(svc):
    mm, _ = svc
    replicas = [mm, make_service(store=mm.store)[0]]
    token = id_token("Ann", "ann-race-" + uuid.uuid4().hex)
    barrier = threading.Barrier(16)
    results: list = []
    errors: list = []

    def run(i: int) -> None:
        try:
            barrier.wait(10)
            for _ in range(5):
                results.append(replicas[i % 2].sign_in(token, "Ann"))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and len(results) == 80
    ids = {r.player.player_id for r in results}
    assert len(ids) == 1
    (pid,) = ids
    assert sum(r.created for r in results) == 1
    assert ledger.balance(mm.store, pid) == 1000
    assert len(welcome_refs(mm.store, pid)) == 1
    assert ledger.reconcile(mm.store) == []


def test_a_guest_session_gets_no_grant_and_no_member_calls():
    mm, _, _ = make_service(allow_guests=True)
    guest = mm.sign_in_as_guest("Visitor")
    assert guest.session.guest and guest.player.guest
    player, claims = mm.authenticate_session(guest.session.session_token)
    assert claims.guest and player.player_id == guest.player.player_id
    with pytest.raises(PermissionDenied) as err:
        mm.authenticate(guest.session.session_token)
    assert err.value.reason == "GUEST"
    assert not ledger.has_account(mm.store, guest.player.player_id)
