"""Quick match never seats two players who joined from one client address at one table
(``--queue-one-per-address``, on by default), through a real matchmaking server listening on
both loopbacks: two players join over IPv6 (``[::1]``) and two over IPv4 (``127.0.0.1``), so
the server sees two client addresses. With the setting on, each table holds one of each (and
bots); with it off, the four share one table. Private rooms seat friends from one address
unless ``--rooms-one-per-address`` says otherwise (then ``SAME_ADDRESS``)."""

from __future__ import annotations

import grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.request_ids import with_request_ids
from infra.tls import client_channel
from tests.support.grpc_server import DEV_TLS_ROOT, serving
from tests.support.identity import sign_in
from tests.support.probes import error_info
from tests.support.stacks import matchmaking_spec
from tests.unit.matchmaking.mm_fakes import FakeAllocator

T = 10
SERVER_MODELS = ("asyncio",)  # the queue's rule is the domain's: one model is enough


def _stub(host: str, port: int) -> tuple[grpc.Channel, pb_grpc.MatchmakingServiceStub]:
    channel = client_channel(f"{host}:{port}", ca_file=str(DEV_TLS_ROOT / "ca.crt"))
    return channel, pb_grpc.MatchmakingServiceStub(with_request_ids(channel))


def _tables_of(one_per_address: bool) -> list[list[str]]:
    """The tables (their players, bots left out) of four players: IPv6, IPv6, IPv4, IPv4."""
    alloc = FakeAllocator()
    extra = {"queue_one_per_address": one_per_address}
    with serving(matchmaking_spec(alloc), host="[::]", extra=extra) as (server, _):
        mm = server.resource.matchmaking
        channels = []
        try:
            names = {}
            for i, host in enumerate(("[::1]", "[::1]", "127.0.0.1", "127.0.0.1")):
                channel, stub = _stub(host, server.port)
                channels.append(channel)
                player, token = sign_in(stub, f"P{i}")
                names[player.player_id] = f"{host}/{i}"
                stub.JoinQueue(pb.JoinQueueRequest(session_token=token), timeout=T)
            mm.tick()
            mm.clock.advance(mm.config.bot_fill_seconds)  # what waits is seated with bots
            mm.tick()
            return [
                sorted(names[s.player_id] for s in request.seats if not s.bot)
                for request, _ in alloc.tables.values()
            ]
        finally:
            for channel in channels:
                channel.close()


def test_no_two_players_from_one_address_share_a_table():
    tables = _tables_of(True)
    assert len(tables) == 2  # (they joined at one moment: in ticket order, not join order)
    for players in tables:
        assert sorted(p.split("/")[0] for p in players) == ["127.0.0.1", "[::1]"]


def test_off_they_do():
    assert _tables_of(False) == [["127.0.0.1/2", "127.0.0.1/3", "[::1]/0", "[::1]/1"]]


def _room_joins(one_per_address: bool) -> list[str]:
    """A room opened over IPv6; a friend joins over IPv6, another over IPv4: what each got."""
    extra = {"rooms_one_per_address": one_per_address}
    with serving(matchmaking_spec(FakeAllocator()), host="[::]", extra=extra) as (server, _):
        channels = []
        try:
            got = []
            stubs = []
            for i, host in enumerate(("[::1]", "[::1]", "127.0.0.1")):
                channel, stub = _stub(host, server.port)
                channels.append(channel)
                stubs.append((stub, sign_in(stub, f"R{i}")[1]))
            owner, token = stubs[0]
            code = owner.OpenRoom(pb.OpenRoomRequest(session_token=token), timeout=T).room.code
            for stub, tok in stubs[1:]:
                try:
                    stub.JoinRoom(pb.JoinRoomRequest(session_token=tok, code=code), timeout=T)
                    got.append("ok")
                except grpc.RpcError as exc:
                    got.append(f"{exc.code().name} {error_info(exc).reason}")
            members = owner.GetRoom(pb.GetRoomRequest(session_token=token, code=code), timeout=T)
            got.append(str(len(members.room.members)))
            return got
        finally:
            for channel in channels:
                channel.close()


def test_private_rooms_seat_friends_from_one_address_unless_told_not_to():
    assert _room_joins(False) == ["ok", "ok", "3"]  # the default
    assert _room_joins(True) == ["FAILED_PRECONDITION SAME_ADDRESS", "ok", "2"]
