"""The hostile suite of issue 21 through the protos, on an in-process matchmaking server (TLS,
a fake allocator, a manual clock): forged, expired and foreign tokens are UNAUTHENTICATED with
the reason of the check that failed; another player's ids get nothing of theirs (their silver,
tickets, rooms, entries: PERMISSION_DENIED or only the caller's own); stakes nobody covers and
a stake of 10**12 are refused; nobody enters a tournament but by their own call; a guest gets
no rated seat, purchase or room; the operator's methods refuse a player's channel. Every
refused call changes nothing: the store's records and every account's books are the same
before and after."""

from __future__ import annotations

import base64
import time
import uuid

import grpc
import jwt
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from devkit.dev_issuer import DevIssuer, SigningKey, new_key
from infra import session_tokens
from services.matchmaking.adapters import idempotency
from services.matchmaking.domain.economy import ledger
from tests.doubles.clock import ManualClock
from tests.support import identity
from tests.support.grpc_server import channel_to, serving
from tests.support.identity import TEST_AUDIENCE, sign_in, unique_subject
from tests.support.probes import rpc_error
from tests.support.stacks import matchmaking_spec
from tests.unit.matchmaking.mm_fakes import FakeAllocator

T = 10
UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
PERMISSION_DENIED = grpc.StatusCode.PERMISSION_DENIED
FAILED_PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
INVALID_ARGUMENT = grpc.StatusCode.INVALID_ARGUMENT


class Env:
    def __init__(self, server, channel, alloc, clock) -> None:
        self.server, self.alloc, self.clock = server, alloc, clock
        self.stub = pb_grpc.MatchmakingServiceStub(channel)
        self.mm = server.resource.matchmaking
        self.store = self.mm.store

    def as_workload(self, caller: str):
        channel = channel_to(self.server, "matchmaking", caller)
        return channel, pb_grpc.MatchmakingServiceStub(channel)

    def snapshot(self) -> tuple:
        """Every record but the request ids' (a refusal is kept for its id: a retry gets it
        again), and every account's balances and entries."""
        records = {
            key: rec.value
            for key, rec in dict(self.store._records).items()
            if not key[0].startswith(idempotency.REQUESTS)
        }
        accounts = sorted(
            {k for (ns, k) in records if ns == "mm_players"} | {ledger.HOUSE}
        )  # every player and the house
        books = {
            a: (ledger.balances(self.store, a), len(ledger.entries(self.store, a)))
            for a in accounts
        }
        return records, books


@pytest.fixture
def env():
    alloc, clock = FakeAllocator(), ManualClock()
    extra = {"allow_guests": True, "starting_silver": 1000}
    with serving(matchmaking_spec(alloc, clock), extra=extra) as (server, channel):
        yield Env(server, channel, alloc, clock)


def refused(call, request, code, reason: str | None = None) -> str:
    got, message, info = rpc_error(lambda c=call, r=request: c(r, timeout=T))
    assert got == code, (got, message)
    if reason is not None:
        assert info.reason == reason, (info.reason, message)
    return message


def me(env, token: str) -> pb.Player:
    return env.stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T).player


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# --- tokens ------------------------------------------------------------------------------------
def test_forged_and_expired_session_tokens_are_unauthenticated(env):
    player, token = sign_in(env.stub, "Ann")
    header = jwt.get_unverified_header(token)
    claims = jwt.decode(token, options={"verify_signature": False})
    before = env.snapshot()
    get = env.stub.GetPlayer
    h, body, sig = token.split(".")
    # One character of the signature changed in its middle: still 64 bytes of canonical
    # base64url. (Changing its last two was not: an Ed25519 signature's last byte is small, so
    # it often ends "AA", and the "BB" put in its place set padding bits the decoder refuses,
    # answering MALFORMED_TOKEN about 6% of the time.)
    middle = len(sig) // 2
    flipped = sig[:middle] + ("A" if sig[middle] != "A" else "B") + sig[middle + 1 :]
    refused(get, pb.GetPlayerRequest(session_token=f"{h}.{body}.{flipped}"), UNAUTHENTICATED,
            "BAD_SIGNATURE")  # fmt: skip
    outsider = session_tokens.SessionSigner(session_tokens.new_private_key())
    stolen = session_tokens.SessionClaims(
        player.player_id, claims["sid"], False, claims["iat"], claims["exp"]
    )
    message = refused(get, pb.GetPlayerRequest(session_token=outsider.sign(stolen)),
                      UNAUTHENTICATED, "UNKNOWN_KID")  # fmt: skip
    assert "unknown key" in message
    same_kid = jwt.encode(claims, session_tokens.new_private_key(), algorithm="EdDSA",
                          headers={"kid": header["kid"]})  # fmt: skip
    refused(get, pb.GetPlayerRequest(session_token=same_kid), UNAUTHENTICATED, "BAD_SIGNATURE")
    none = b64(b'{"alg":"none"}') + f".{body}."
    refused(get, pb.GetPlayerRequest(session_token=none), UNAUTHENTICATED, "ALGORITHM_REFUSED")
    refused(get, pb.GetPlayerRequest(session_token=""), UNAUTHENTICATED, "MISSING_TOKEN")
    # a well-formed refresh token is no session token
    refused(get, pb.GetPlayerRequest(session_token="r1.a.b.c"), UNAUTHENTICATED,
            "MALFORMED_TOKEN")  # fmt: skip
    assert me(env, token).player_id == player.player_id
    env.clock.advance(3600 + session_tokens.LEEWAY_SECONDS)
    message = refused(get, pb.GetPlayerRequest(session_token=token), UNAUTHENTICATED, "EXPIRED")
    assert "expired" in message
    ask = pb.JoinQueueRequest(session_token=token)
    refused(env.stub.JoinQueue, ask, UNAUTHENTICATED, "EXPIRED")
    assert env.snapshot() == before


def test_id_tokens_that_prove_nothing_are_unauthenticated(env):
    issuer = identity.test_issuer().issuer
    before = env.snapshot()
    sign = env.stub.SignIn

    def attempt(token: str, reason: str) -> str:
        req = pb.SignInRequest(id_token=token, display_name="Mallory")
        return refused(sign, req, UNAUTHENTICATED, reason)

    subject = unique_subject("Mallory")
    message = attempt(issuer.id_token(subject, aud="another-client"), "WRONG_AUDIENCE")
    assert repr(TEST_AUDIENCE) in message
    unknown_kid = SigningKey(issuer.keys[0].key, "kid-" + uuid.uuid4().hex)
    assert "no key" in attempt(issuer.id_token(subject, key=unknown_kid), "UNKNOWN_KID")
    impostor = SigningKey(new_key("ES256"), issuer.keys[0].kid)
    attempt(issuer.id_token(subject, key=impostor), "BAD_SIGNATURE")
    stranger = DevIssuer.ephemeral(
        "ES256", "k1", issuer="https://evil.test", audience=TEST_AUDIENCE
    )
    assert "not configured" in attempt(stranger.id_token(subject), "UNKNOWN_ISSUER")
    past = time.time() - 3600
    attempt(issuer.id_token(subject, now=past, lifetime=600), "EXPIRED")
    now = int(time.time())
    attempt(issuer.id_token(subject, iat=now, nbf=now + 3600), "NOT_YET_VALID")
    attempt("", "MISSING_TOKEN")
    attempt("garbage", "MALFORMED_TOKEN")
    assert env.snapshot() == before  # no player, no identity, no grant
    got = sign(pb.SignInRequest(id_token=issuer.id_token(subject), display_name="Mallory"))
    assert got.created and got.player.silver == 1000  # the genuine one signs in


def test_a_revoked_session_is_refused_by_check_session(env):
    _, token = sign_in(env.stub, "Ann")
    channel, gateway = env.as_workload("gateway")
    try:
        check = pb.CheckSessionRequest(session_token=token)
        assert gateway.CheckSession(check, timeout=T).player_id
        # a player's channel has no workload certificate: CheckSession is the gateway's
        refused(env.stub.CheckSession, check, UNAUTHENTICATED, "NO_WORKLOAD_CERTIFICATE")
        out = env.stub.SignOut(pb.SignOutRequest(session_token=token), timeout=T)
        assert out.sessions_ended == 1
        refused(gateway.CheckSession, check, UNAUTHENTICATED, "SESSION_ENDED")
        refused(env.stub.GetPlayer, pb.GetPlayerRequest(session_token=token), UNAUTHENTICATED,
                "SESSION_ENDED")  # fmt: skip
    finally:
        channel.close()


# --- another player's ids ----------------------------------------------------------------------
def test_another_players_silver_tickets_and_entries_stay_theirs(env):
    ann, ann_t = sign_in(env.stub, "Ann")
    bob, bob_t = sign_in(env.stub, "Bob")
    ticket = env.stub.JoinQueue(pb.JoinQueueRequest(session_token=bob_t), timeout=T).ticket
    before = env.snapshot()
    got = env.stub.GetBalances(
        pb.GetBalancesRequest(player_ids=[bob.player_id, ann.player_id], session_token=ann_t),
        timeout=T,
    ).balances
    assert [(b.player_id, b.own, b.silver) for b in got] == [
        (bob.player_id, False, 0),  # Bob's silver is Bob's
        (ann.player_id, True, 1000),
    ]
    leave = pb.LeaveQueueRequest(session_token=ann_t, ticket_id=ticket.ticket_id)
    refused(env.stub.LeaveQueue, leave, PERMISSION_DENIED)
    watch = pb.WatchAssignmentsRequest(session_token=ann_t, ticket_id=ticket.ticket_id)
    refused(lambda r, timeout: list(env.stub.WatchAssignments(r, timeout=timeout)), watch,
            PERMISSION_DENIED)  # fmt: skip
    entries = env.stub.ListLedgerEntries(
        pb.ListLedgerEntriesRequest(session_token=ann_t), timeout=T
    )
    own = ledger.entries(env.store, ann.player_id)
    assert len(entries.entries) == len(own) == 2  # Ann's welcome grant: silver and 房卡
    assert {e.ref for e in entries.entries} == {e.ref for e in own}
    assert not {e.ref for e in entries.entries} & {
        e.ref for e in ledger.entries(env.store, bob.player_id)
    }
    assert entries.balance == 1000
    assert env.snapshot() == before
    assert me(env, bob_t).queued_ticket_id == ticket.ticket_id  # still Bob's, still waiting


def test_a_room_one_is_not_in_is_not_ones_own(env):
    owner, owner_t = sign_in(env.stub, "Owner")
    _, guest_t = sign_in(env.stub, "Member")
    _, outsider_t = sign_in(env.stub, "Outsider")
    room = env.stub.OpenRoom(pb.OpenRoomRequest(session_token=owner_t), timeout=T).room
    env.stub.JoinRoom(pb.JoinRoomRequest(session_token=guest_t, code=room.code), timeout=T)
    before = env.snapshot()
    code = room.code
    refused(env.stub.LeaveRoom, pb.LeaveRoomRequest(session_token=outsider_t, code=code),
            PERMISSION_DENIED)  # fmt: skip
    refused(env.stub.SetRoomStake,
            pb.SetRoomStakeRequest(session_token=outsider_t, code=code, stake=1),
            PERMISSION_DENIED)  # fmt: skip
    refused(env.stub.AnswerRoomStake,
            pb.AnswerRoomStakeRequest(session_token=outsider_t, code=code, accept=True),
            PERMISSION_DENIED)  # fmt: skip
    refused(env.stub.InviteBot, pb.InviteBotRequest(session_token=outsider_t, code=code),
            PERMISSION_DENIED)  # fmt: skip
    refused(env.stub.PressStart, pb.PressStartRequest(session_token=outsider_t, code=code),
            PERMISSION_DENIED)  # fmt: skip
    assert env.snapshot() == before
    assert [m.display_name for m in me_room(env, owner_t, code).members] == ["Owner", "Member"]
    assert owner.player_id == me_room(env, owner_t, code).owner_player_id
    # the room plays: its members get their seats; a non-member sees nothing of it
    s = env.stub
    s.SetRoomStake(pb.SetRoomStakeRequest(session_token=owner_t, code=code, stake=1), timeout=T)
    s.AnswerRoomStake(pb.AnswerRoomStakeRequest(session_token=guest_t, code=code, accept=True))
    for _ in range(2):
        s.InviteBot(pb.InviteBotRequest(session_token=owner_t, code=code), timeout=T)
    for tok in (owner_t, guest_t):
        s.PressStart(pb.PressStartRequest(session_token=tok, code=code), timeout=T)
    assert me_room(env, guest_t, code).assignment.seat_token.startswith("seat-")
    get = pb.GetRoomRequest(session_token=outsider_t, code=code)
    refused(env.stub.GetRoom, get, PERMISSION_DENIED)


def me_room(env, token: str, code: str) -> pb.Room:
    return env.stub.GetRoom(pb.GetRoomRequest(session_token=token, code=code), timeout=T).room


def test_get_room_of_a_room_one_is_not_in_is_permission_denied(env):
    _, owner_t = sign_in(env.stub, "Owner")
    _, outsider_t = sign_in(env.stub, "Outsider")
    room = env.stub.OpenRoom(pb.OpenRoomRequest(session_token=owner_t), timeout=T).room
    get = pb.GetRoomRequest(session_token=outsider_t, code=room.code)
    refused(env.stub.GetRoom, get, PERMISSION_DENIED)


# --- stakes ------------------------------------------------------------------------------------
def test_a_stake_nobody_can_cover_and_a_stake_of_10_12_are_refused(env):
    _, owner_t = sign_in(env.stub, "Owner")
    _, member_t = sign_in(env.stub, "Member")
    _, queuer_t = sign_in(env.stub, "Queuer")
    # house rules where one hand at stake 8 can cost 1,600 silver: 1,000 covers no such seat
    rules = common_pb2.RulesetRef(options={"payment.loss_cap_lezi": "20"})
    room = env.stub.OpenRoom(pb.OpenRoomRequest(session_token=owner_t, ruleset=rules)).room
    env.stub.JoinRoom(pb.JoinRoomRequest(session_token=member_t, code=room.code), timeout=T)
    before = env.snapshot()

    def stake(value: int, code, reason=None) -> str:
        req = pb.SetRoomStakeRequest(session_token=owner_t, code=room.code, stake=value)
        return refused(env.stub.SetRoomStake, req, code, reason)

    message = stake(8, FAILED_PRECONDITION, "SILVER_BELOW_COVER")
    assert "needs 1600" in message and "tiers allowed here: 1, 2, 4" in message
    message = stake(16, FAILED_PRECONDITION, "STAKE_NOT_ALLOWED")  # above 副主管's tiers
    assert "tiers allowed here: 1, 2, 4" in message
    stake(10**12, INVALID_ARGUMENT)
    stake(2**63 - 1, INVALID_ARGUMENT)
    stake(-1, INVALID_ARGUMENT)
    for value in (10**12, 2**63 - 1, 16):
        join = pb.JoinQueueRequest(session_token=queuer_t, stake=value)
        code = INVALID_ARGUMENT if value != 16 else FAILED_PRECONDITION
        refused(env.stub.JoinQueue, join, code)
    create = pb.CreateTournamentRequest(
        session_token=owner_t, name="Cup", stake=10**12, rounds=1, hands_per_round=1
    )
    refused(env.stub.CreateTournament, create, INVALID_ARGUMENT)
    assert env.snapshot() == before
    assert me_room(env, owner_t, room.code).stake == 0  # no 底分 was set
    # a tier everyone covers is accepted
    ok = pb.SetRoomStakeRequest(session_token=owner_t, code=room.code, stake=4)
    assert env.stub.SetRoomStake(ok, timeout=T).room.stake == 4


def test_a_ruleset_without_a_loss_cap_covers_no_stake(env):
    _, owner_t = sign_in(env.stub, "Owner")
    rules = common_pb2.RulesetRef(options={"payment.loss_cap_lezi": "0"})
    room = env.stub.OpenRoom(pb.OpenRoomRequest(session_token=owner_t, ruleset=rules)).room
    before = env.snapshot()
    for value in (1, 8):
        req = pb.SetRoomStakeRequest(session_token=owner_t, code=room.code, stake=value)
        message = refused(env.stub.SetRoomStake, req, FAILED_PRECONDITION, "NO_LOSS_CAP")
        assert "no loss cap" in message and "tiers allowed here: none" in message
    assert env.snapshot() == before


# --- tournaments -------------------------------------------------------------------------------
def test_nobody_is_entered_in_a_tournament_by_another(env):
    assert "player_ids" not in pb.CreateTournamentRequest.DESCRIPTOR.fields_by_name
    assert 7 not in pb.CreateTournamentRequest.DESCRIPTOR.fields_by_number
    _, creator_t = sign_in(env.stub, "Creator")
    victim, victim_t = sign_in(env.stub, "Victim")
    _, other_t = sign_in(env.stub, "Other")
    create = pb.CreateTournamentRequest(
        session_token=creator_t, name="Cup", stake=1, rounds=1, hands_per_round=1,
        entry_silver=100,
    )  # fmt: skip
    t = env.stub.CreateTournament(create, timeout=T).tournament
    tid = t.tournament_id
    assert list(t.entrants) == []
    before = env.snapshot()
    invite = pb.InviteToTournamentRequest(
        session_token=other_t, tournament_id=tid, player_ids=[victim.player_id]
    )
    refused(env.stub.InviteToTournament, invite, PERMISSION_DENIED)  # not the creator
    accept = pb.AcceptInviteRequest(session_token=victim_t, tournament_id=tid)
    refused(env.stub.AcceptInvite, accept, FAILED_PRECONDITION, "NOT_INVITED")
    start = pb.StartTournamentRequest(session_token=other_t, tournament_id=tid)
    refused(env.stub.StartTournament, start, PERMISSION_DENIED)
    assert env.snapshot() == before
    invite.session_token = creator_t
    t = env.stub.InviteToTournament(invite, timeout=T).tournament
    assert list(t.entrants) == [] and list(t.invited_player_ids) == [victim.player_id]
    assert me(env, victim_t).silver == 1000  # invited: nothing of theirs moved
    accept_other = pb.AcceptInviteRequest(session_token=other_t, tournament_id=tid)
    refused(env.stub.AcceptInvite, accept_other, FAILED_PRECONDITION, "NOT_INVITED")
    t = env.stub.AcceptInvite(accept, timeout=T).tournament  # the victim's own act
    assert [e.player_id for e in t.entrants] == [victim.player_id]
    assert me(env, victim_t).silver == 900  # the entry, in escrow


# --- guests ------------------------------------------------------------------------------------
def test_a_guest_gets_no_rated_seat_purchase_or_room(env):
    guest = env.stub.SignInAsGuest(pb.SignInAsGuestRequest(display_name="Visitor"), timeout=T)
    token = guest.session.session_token
    assert guest.player.guest and guest.player.silver == 0
    before = env.snapshot()
    for call, request in (
        (env.stub.JoinQueue, pb.JoinQueueRequest(session_token=token)),
        (env.stub.JoinQueue, pb.JoinQueueRequest(session_token=token, stake=1)),
        (env.stub.BuyItems, pb.BuyItemsRequest(session_token=token, asset=pb.ASSET_ROOM_CARD,
                                               count=1)),
        (env.stub.OpenRoom, pb.OpenRoomRequest(session_token=token)),
        (env.stub.CreateTournament, pb.CreateTournamentRequest(
            session_token=token, name="Cup", stake=1, rounds=1, hands_per_round=1)),
        (env.stub.ListLedgerEntries, pb.ListLedgerEntriesRequest(session_token=token)),
    ):  # fmt: skip
        refused(call, request, PERMISSION_DENIED, "GUEST")
    assert env.snapshot() == before
    assert not ledger.has_account(env.store, guest.player.player_id)


# --- the operator's methods --------------------------------------------------------------------
def test_grants_and_the_books_refuse_a_players_channel(env):
    ann, ann_t = sign_in(env.stub, "Ann")
    before = env.snapshot()
    grant = pb.GrantAssetsRequest(
        player_id=ann.player_id, reason="free money", request_id="g-1",
        assets=[pb.AssetAmount(asset=pb.ASSET_SILVER, amount=10**9)],
    )  # fmt: skip
    metadata = (("authorization", f"Bearer {ann_t}"),)
    for call, request in (
        (env.stub.GrantAssets, grant),
        (env.stub.GetReconciliation, pb.GetReconciliationRequest()),
    ):
        got, message, info = rpc_error(
            lambda call=call, request=request: call(request, metadata=metadata, timeout=T)
        )
        assert got == UNAUTHENTICATED and info.reason == "NO_WORKLOAD_CERTIFICATE", message
    channel, gateway = env.as_workload("gateway")  # another workload is no operator either
    try:
        for call, request in (
            (gateway.GrantAssets, grant),
            (gateway.GetReconciliation, pb.GetReconciliationRequest()),
        ):
            got, message, info = rpc_error(lambda c=call, r=request: c(r, timeout=T))
            assert got == PERMISSION_DENIED and info.reason == "CALLER_NOT_ALLOWED", message
    finally:
        channel.close()
    assert env.snapshot() == before
    assert me(env, ann_t).silver == 1000
