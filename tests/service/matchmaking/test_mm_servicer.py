"""MatchmakingService over a real loopback server (fake gateway allocator, manual clock)."""

from __future__ import annotations

import random
import threading

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.common.v1 import common_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from services.matchmaking.domain.economy import ledger
from tests.doubles.clock import ManualClock
from tests.support.grpc_server import channel_to, serving
from tests.support.identity import id_token, sign_in
from tests.support.stacks import matchmaking_spec
from tests.unit.matchmaking.mm_fakes import FakeAllocator, settle_round

TIMEOUT = 10


@pytest.fixture
def served():
    alloc = FakeAllocator()
    clock = ManualClock()
    spec = matchmaking_spec(alloc, clock)
    extra = {"ready_seconds": 15.0, "bot_fill_seconds": 30.0, "starting_silver": 1000}
    with serving(spec, extra=extra) as (server, channel):
        yield server, channel, alloc, clock


@pytest.fixture
def env(served):
    """A player's stub (the public port), matchmaking, its allocator and its clock."""
    server, channel, alloc, clock = served
    return pb_grpc.MatchmakingServiceStub(channel), server.resource.matchmaking, alloc, clock


@pytest.fixture
def gateway(served):
    """The gateway's stub: its certificate, on the internal port, where the reports go (no
    internal token is configured, so the certificate alone is heard)."""
    channel = channel_to(served[0], "matchmaking", "gateway")
    yield pb_grpc.MatchmakingServiceStub(channel)
    channel.close()


def register(stub, name):
    return sign_in(stub, name)


def error_of(call, *args):
    with pytest.raises(grpc.RpcError) as err:
        call(*args, timeout=TIMEOUT)
    return err.value


def reason(err) -> str:
    status = rpc_status.from_call(err)
    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    return info.reason


def test_register_and_account(env):
    stub, *_ = env
    player, token = register(stub, "Alice")
    assert player.player_id.startswith("p-") and player.silver == 1000
    assert player.level.name == "副主管" and list(player.level.allowed_stakes) == [1, 2, 4, 8]
    assert player.room_cards == 3
    got = stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=TIMEOUT).player
    assert got.issuer and got.subject  # GetPlayer only: the identity
    got.ClearField("issuer"), got.ClearField("subject")
    assert got == player
    levels = stub.ListLevels(pb.ListLevelsRequest(), timeout=TIMEOUT).levels
    assert len(levels) == 18 and levels[0].name == "待业"
    bad_name = pb.SignInRequest(id_token=id_token("Bob"), display_name="\x07")
    err = error_of(stub.SignIn, bad_name)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_wrong_token_is_unauthenticated(env):
    stub, *_ = env
    _, token = register(stub, "Alice")
    for bad in ("", token[:-2] + "xx", "p-nobody.abc"):
        err = error_of(stub.GetPlayer, pb.GetPlayerRequest(session_token=bad))
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED
        assert reason(err) in ("MISSING_TOKEN", "BAD_SIGNATURE", "MALFORMED_TOKEN")


def test_queue_errors_carry_status_and_reason(env):
    stub, *_ = env
    _, token = register(stub, "Alice")
    join = pb.JoinQueueRequest(session_token=token)
    ticket = stub.JoinQueue(join, timeout=TIMEOUT).ticket
    me = stub.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=TIMEOUT).player
    assert me.queued_ticket_id == ticket.ticket_id and me.room_code == ""
    err = error_of(stub.JoinQueue, join)
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and reason(err) == "ALREADY_QUEUED"
    _, t2 = register(stub, "Bob")
    err = error_of(stub.JoinQueue, pb.JoinQueueRequest(session_token=t2, stake=16))
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and reason(err) == "STAKE_NOT_ALLOWED"
    err = error_of(stub.JoinQueue, pb.JoinQueueRequest(session_token=t2, stake=3))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    bad_rules = common_pb2.RulesetRef(name="nope")
    err = error_of(stub.JoinQueue, pb.JoinQueueRequest(session_token=t2, ruleset=bad_rules))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    with_options = common_pb2.RulesetRef(options={"scoring.base_points": "3"})
    err = error_of(stub.JoinQueue, pb.JoinQueueRequest(session_token=t2, ruleset=with_options))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT  # queues play presets
    room = stub.OpenRoom(pb.OpenRoomRequest(session_token=t2, ruleset=with_options)).room
    assert dict(room.ruleset_options) == {"scoring.base_points": "3"}
    err = error_of(stub.LeaveQueue, pb.LeaveQueueRequest(session_token=t2, ticket_id="tk-none"))
    assert err.code() == grpc.StatusCode.NOT_FOUND


def _watch(stub, token, ticket_id, out):
    req = pb.WatchAssignmentsRequest(session_token=token, ticket_id=ticket_id)
    for msg in stub.WatchAssignments(req, timeout=TIMEOUT):
        out.append(msg.ticket)


def test_watch_assignments_streams_until_the_table_is_known(env):
    stub, mm, alloc, clock = env
    players = [register(stub, f"P{i}") for i in range(2)]
    tickets = [
        stub.JoinQueue(pb.JoinQueueRequest(session_token=tok), timeout=TIMEOUT).ticket
        for _, tok in players
    ]
    seen: list = []
    watcher = threading.Thread(
        target=_watch, args=(stub, players[0][1], tickets[0].ticket_id, seen)
    )
    watcher.start()
    clock.advance(30)
    mm.tick()  # bots fill the two empty seats
    watcher.join(TIMEOUT)
    assert not watcher.is_alive()
    assert seen[-1].state == pb.TICKET_STATE_ASSIGNED
    a = seen[-1].assignment
    ((request, table),) = alloc.tables.values()
    assert a.table_id == table.table_id and a.gateway_address == "gw.test:1"
    assert a.seat in (common_pb2.SEAT_0, common_pb2.SEAT_1)  # both joined at the same instant
    assert a.seat_token == table.seat_tokens[a.seat - 1]
    assert request.seats[a.seat - 1].player_id == players[0][0].player_id
    assert [s.bot for s in request.seats] == [False, False, True, True]


def test_watch_ends_when_the_ticket_is_cancelled(env):
    stub, *_ = env
    _, tok = register(stub, "P")
    ticket = stub.JoinQueue(pb.JoinQueueRequest(session_token=tok), timeout=TIMEOUT).ticket
    assert ticket.waiting_in_queue == 1
    seen: list = []
    watcher = threading.Thread(target=_watch, args=(stub, tok, ticket.ticket_id, seen))
    watcher.start()
    stub.LeaveQueue(pb.LeaveQueueRequest(session_token=tok, ticket_id=ticket.ticket_id))
    watcher.join(TIMEOUT)
    assert seen[-1].state == pb.TICKET_STATE_CANCELLED
    _, other = register(stub, "Q")
    req = pb.WatchAssignmentsRequest(session_token=other, ticket_id=ticket.ticket_id)
    err = error_of(lambda r, timeout: list(stub.WatchAssignments(r, timeout=timeout)), req)
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED


def test_private_room_over_grpc(env):
    stub, _mm, alloc, clock = env
    (_, owner), (_, b), (_, c) = (register(stub, n) for n in ("O", "B", "C"))
    opened = stub.OpenRoom(pb.OpenRoomRequest(session_token=owner, max_hands=4), timeout=TIMEOUT)
    code = opened.room.code
    assert opened.room_cards_left == 2 and opened.room.state == pb.ROOM_STATE_OPEN
    me = stub.GetPlayer(pb.GetPlayerRequest(session_token=owner), timeout=TIMEOUT).player
    assert me.room_code == code and me.room_cards == 2
    err = error_of(
        stub.JoinRoom,
        pb.JoinRoomRequest(session_token=b, code="000000" if code != "000000" else "000001"),
    )
    assert err.code() == grpc.StatusCode.NOT_FOUND
    stub.JoinRoom(pb.JoinRoomRequest(session_token=b, code=code), timeout=TIMEOUT)
    stub.JoinRoom(pb.JoinRoomRequest(session_token=c, code=code), timeout=TIMEOUT)
    err = error_of(stub.SetRoomStake, pb.SetRoomStakeRequest(session_token=b, code=code, stake=2))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    stub.SetRoomStake(pb.SetRoomStakeRequest(session_token=owner, code=code, stake=2))
    room = stub.AnswerRoomStake(
        pb.AnswerRoomStakeRequest(session_token=c, code=code, accept=False), timeout=TIMEOUT
    ).room
    assert [m.display_name for m in room.members] == ["O", "B"]
    stub.AnswerRoomStake(pb.AnswerRoomStakeRequest(session_token=b, code=code, accept=True))
    stub.InviteBot(pb.InviteBotRequest(session_token=owner, code=code), timeout=TIMEOUT)
    stub.InviteBot(pb.InviteBotRequest(session_token=owner, code=code), timeout=TIMEOUT)
    err = error_of(stub.JoinRoom, pb.JoinRoomRequest(session_token=c, code=code))
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and reason(err) == "ROOM_FULL"
    room = stub.PressStart(pb.PressStartRequest(session_token=owner, code=code)).room
    assert room.members[1].ready_deadline_unix_ms == round((clock() + 15) * 1000)
    room = stub.PressStart(pb.PressStartRequest(session_token=b, code=code)).room
    assert room.state == pb.ROOM_STATE_PLAYING
    ((request, table),) = alloc.tables.values()
    assert room.assignment.seat == common_pb2.SEAT_1
    assert room.assignment.seat_token == table.seat_tokens[1]
    assert request.stake == 2 and request.max_hands == 4


def test_record_hand_is_idempotent_and_validated(env, gateway):
    stub, mm, alloc, _ = env
    (pa, ta), (pb_, tb), (pc, tc), (pd, td) = (register(stub, n) for n in "ABCD")
    for tok in (ta, tb, tc, td):  # reports are accepted only for tables matchmaking allocated
        stub.JoinQueue(pb.JoinQueueRequest(session_token=tok), timeout=TIMEOUT)
    mm.tick()
    ((request, table),) = alloc.tables.values()
    ids = [s.player_id for s in request.seats]  # by seat
    token_of = {p.player_id: t for p, t in ((pa, ta), (pb_, tb), (pc, tc), (pd, td))}
    assert sorted(ids) == sorted(token_of)
    req = pb.RecordHandRequest(
        hand_id="h-1",
        table_id=table.table_id,
        tag=request.tag,
        player_ids=ids,
        payments=[-8, 2, 2, 2],
        house=2,
        escaped_seat=common_pb2.SEAT_0,
    )
    house = mm.public_balance("house")
    assert gateway.RecordHand(req, timeout=TIMEOUT).duplicate is False
    assert gateway.RecordHand(req, timeout=TIMEOUT).duplicate is True
    silver = [  # each player sees its own silver only
        stub.GetBalances(pb.GetBalancesRequest(player_ids=[pid], session_token=token_of[pid]))
        .balances[0]
        .silver
        for pid in ids
    ]
    assert silver == [992, 1002, 1002, 1002] and mm.public_balance("house") == house + 2
    seat0 = pb.ListLedgerEntriesRequest(session_token=token_of[ids[0]])
    entries = stub.ListLedgerEntries(seat0).entries
    # newest first; these share one instant of the test's clock (then by reference)
    assert sorted((e.kind, e.asset, e.amount) for e in entries) == [
        (pb.LEDGER_ENTRY_KIND_GRANT, pb.ASSET_SILVER, 1000),
        (pb.LEDGER_ENTRY_KIND_GRANT, pb.ASSET_ROOM_CARD, 3),
        (pb.LEDGER_ENTRY_KIND_ESCAPE_PENALTY, pb.ASSET_SILVER, -8),
    ]
    bad = pb.RecordHandRequest(
        hand_id="h-2",
        table_id=table.table_id,
        tag=request.tag,
        player_ids=ids,
        payments=[1, 0, 0, 0],
    )
    assert error_of(gateway.RecordHand, bad).code() == grpc.StatusCode.INVALID_ARGUMENT
    changed = pb.RecordHandRequest()
    changed.CopyFrom(req)
    changed.payments[:] = [-2, 0, 0, 0]
    assert error_of(gateway.RecordHand, changed).code() == grpc.StatusCode.FAILED_PRECONDITION
    err = error_of(
        stub.GetBalances, pb.GetBalancesRequest(player_ids=["p-unknown"], session_token=ta)
    )
    assert err.code() == grpc.StatusCode.NOT_FOUND


def test_tournament_over_grpc(env):
    stub, mm, alloc, _ = env
    humans = [register(stub, f"H{i}") for i in range(8)]
    creator = humans[0][1]
    t = stub.CreateTournament(
        pb.CreateTournamentRequest(
            session_token=creator,
            name="Cup",
            stake=2,
            rounds=2,
            hands_per_round=2,
            bots=4,
            request_id="create-cup",
        ),
        timeout=TIMEOUT,
    ).tournament
    tid = t.tournament_id
    for _, token in humans[1:4]:  # each enters themselves (nobody is entered by another)
        stub.JoinTournament(pb.JoinTournamentRequest(session_token=token, tournament_id=tid))
    t = stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid, session_token=creator))
    assert t.tournament.state == pb.TOURNAMENT_STATE_REGISTERING
    assert len(t.tournament.entrants) == 7
    stub.JoinTournament(pb.JoinTournamentRequest(session_token=creator, tournament_id=tid))
    err = error_of(
        stub.StartTournament,
        pb.StartTournamentRequest(session_token=humans[1][1], tournament_id=tid),
    )
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    t = stub.StartTournament(
        pb.StartTournamentRequest(session_token=creator, tournament_id=tid)
    ).tournament
    assert t.state == pb.TOURNAMENT_STATE_RUNNING and len(t.tables) == 2
    err = error_of(
        stub.JoinTournament, pb.JoinTournamentRequest(session_token=humans[5][1], tournament_id=tid)
    )
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and reason(err) == "TOURNAMENT_STARTED"
    view = stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid, session_token=creator))
    assert view.assignment.table_id and view.assignment.seat_token.startswith("seat-")
    seen: list = []

    def watch():
        req = pb.WatchTournamentRequest(tournament_id=tid, session_token=creator)
        for msg in stub.WatchTournament(req, timeout=TIMEOUT):
            seen.append(msg)

    watcher = threading.Thread(target=watch)
    watcher.start()
    rng = random.Random(3)
    house = settle_round(mm, alloc, tid, rng) + settle_round(mm, alloc, tid, rng)
    watcher.join(TIMEOUT)
    final = stub.GetStandings(
        pb.GetStandingsRequest(tournament_id=tid, session_token=creator), timeout=TIMEOUT
    )
    assert final.final and final.round == 2 and len(final.standings) == 8
    assert seen[-1].tournament.state == pb.TOURNAMENT_STATE_FINISHED
    assert list(seen[-1].tournament.final_ranking) == list(final.standings)
    assert house >= 0 and ledger.reconcile(mm.store) == []  # bots' sides are the house's
    err = error_of(
        stub.GetTournament, pb.GetTournamentRequest(tournament_id="t-none", session_token=creator)
    )
    assert err.code() == grpc.StatusCode.NOT_FOUND
