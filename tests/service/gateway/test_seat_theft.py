"""JoinSeat never hands a seat assigned to a player to someone else.

Player ids are public (``table_started.seats``, every view's ``SeatView.player_id``): a
JoinSeat naming one proves nothing. The token of an assigned seat goes only to a caller
presenting it (a reconnect) or to matchmaking or an operator (their workload certificates, on
the gateway's mutual-TLS internal port, and the internal token when one is configured); open
seats are still first come, first served. Over a real loopback gateway."""

from __future__ import annotations

import contextlib
import uuid

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from infra.interceptor import internal_metadata
from tests.support.stacks import inprocess_gateway
from tests.support.tables import mixed_seats, request_table

TOKEN = "internal-test-token"


@contextlib.contextmanager
def _gateway(internal_token: str):
    with inprocess_gateway(
        internal_token,
        seat_secret="theft-secret",
        discard_ms=60_000,
        claim_ms=60_000,
    ) as gw:
        yield gw


@pytest.fixture(scope="module")
def open_server():
    """No internal token configured: a workload certificate alone is the service's proof."""
    with _gateway("") as gw:
        yield gw


@pytest.fixture(scope="module")
def secured_server():
    with _gateway(TOKEN) as gw:
        yield gw


@pytest.fixture(scope="module")
def open_gateway(open_server):
    """A player's stub (the public port) of the gateway without an internal token."""
    return open_server.stub


@pytest.fixture(scope="module")
def secured_gateway(secured_server):
    """A player's stub (the public port) of the gateway with an internal token."""
    return secured_server.stub


def create(stub, open_seat: int | None = None):
    """Two people (``p0-…``, ``p1-…``) and two bots, one hand; seat ``open_seat`` is open."""
    seats = mixed_seats(2, "p")
    if open_seat is not None:
        seats[open_seat].player_id = ""
    return request_table(stub, seats, max_hands=1, first_dealer=common_pb2.SEAT_0)


def join(
    stub, table_id, player_id="", seat_token="", spectator=False, metadata=None, request_id=""
):
    return stub.JoinSeat(
        pb.JoinSeatRequest(
            request_id=request_id or uuid.uuid4().hex,
            table_id=table_id,
            player_id=player_id,
            seat_token=seat_token,
            spectator=spectator,
        ),
        timeout=5,
        metadata=metadata,
    )


def state(stub, table_id, token):
    return stub.GetTableState(
        pb.GetTableStateRequest(table_id=table_id, seat_token=token), timeout=5
    ).table


def refused(call) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value


@pytest.mark.parametrize("fixture", ["open_gateway", "secured_gateway"])
def test_a_spectator_cannot_take_a_players_seat_by_its_public_id(fixture, request):
    stub = request.getfixturevalue(fixture)
    t = create(stub)
    spectator = join(stub, t.table_id, spectator=True).seat_token
    victim = state(stub, t.table_id, spectator).seats[0].player_id
    assert victim  # public: that is the point
    before = state(stub, t.table_id, t.seat_tokens[0])
    err = refused(lambda: join(stub, t.table_id, player_id=victim))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "seat token" in err.details() and "created" in err.details()
    assert t.seat_tokens[0] not in err.details()
    for wrong in (spectator, t.seat_tokens[1]):  # a token, but not that seat's
        err = refused(lambda wrong=wrong: join(stub, t.table_id, victim, seat_token=wrong))
        assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    other = create(stub)
    err = refused(lambda: join(stub, t.table_id, victim, seat_token=other.seat_tokens[0]))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    forged = t.seat_tokens[0][:-4] + "AAAA"
    err = refused(lambda: join(stub, t.table_id, victim, seat_token=forged))
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED
    # Nothing changed: no Leave happened in the victim's name, no seat moved.
    after = state(stub, t.table_id, t.seat_tokens[0])
    assert [(s.player_id, s.left) for s in after.seats] == [
        (s.player_id, s.left) for s in before.seats
    ]
    assert not after.seats[0].left


def test_the_seats_own_token_rejoins_it(open_gateway):
    t = create(open_gateway)
    victim = state(open_gateway, t.table_id, t.seat_tokens[0]).seats[0].player_id
    again = join(open_gateway, t.table_id, victim, seat_token=t.seat_tokens[0])
    assert again.seat == common_pb2.SEAT_0 and again.seat_token == t.seat_tokens[0]


def test_an_open_seat_is_first_come_then_needs_its_token(open_gateway):
    t = create(open_gateway, open_seat=1)
    first = join(open_gateway, t.table_id, player_id="late")
    assert first.seat == common_pb2.SEAT_1
    # Now assigned to "late": the same public id alone no longer gets it.
    err = refused(lambda: join(open_gateway, t.table_id, player_id="late"))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    again = join(open_gateway, t.table_id, "late", seat_token=first.seat_token)
    assert again.seat == common_pb2.SEAT_1 and again.seat_token == first.seat_token


def test_only_matchmaking_or_an_operator_with_the_internal_token_gets_an_assigned_seat(
    secured_server,
):
    player = secured_server.stub
    t = create(player)
    victim = state(player, t.table_id, t.seat_tokens[0]).seats[0].player_id
    wrong = (("x-mahjong-internal-token", "guess"),)
    right = internal_metadata(TOKEN)
    err = refused(lambda: join(player, t.table_id, victim, metadata=wrong))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    # the token is no proof without a certificate: a player on the public port may send it
    err = refused(lambda: join(player, t.table_id, victim, metadata=right))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    assert t.seat_tokens[0] not in err.details()
    for caller, metadata in (("matchmaking", None), ("matchmaking", wrong), ("wall", right)):
        with secured_server.calling_as(caller) as stub:
            err = refused(lambda stub=stub, m=metadata: join(stub, t.table_id, victim, metadata=m))
        assert err.code() == grpc.StatusCode.PERMISSION_DENIED, (caller, metadata)
    for caller in ("matchmaking", "operator"):
        with secured_server.calling_as(caller) as stub:
            ok = join(stub, t.table_id, victim, metadata=right)
        assert ok.seat == common_pb2.SEAT_0 and ok.seat_token == t.seat_tokens[0]


def test_without_an_internal_token_matchmakings_certificate_alone_gets_an_assigned_seat(
    open_server,
):
    t = create(open_server.stub)
    victim = state(open_server.stub, t.table_id, t.seat_tokens[0]).seats[0].player_id
    with open_server.calling_as("wall") as wall:  # a workload, but not one that seats players
        err = refused(lambda: join(wall, t.table_id, victim))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    with open_server.calling_as("matchmaking") as matchmaking:
        ok = join(matchmaking, t.table_id, victim)
    assert ok.seat == common_pb2.SEAT_0 and ok.seat_token == t.seat_tokens[0]


def test_a_retried_join_of_an_open_seat_gets_its_token_again(open_gateway):
    """The answer to the JoinSeat that took an open seat was lost: the same request again (same
    request id, no token yet) gets the seat's token; another request id alone still does not."""
    t = create(open_gateway, open_seat=1)
    first = join(open_gateway, t.table_id, player_id="lost", request_id="join-lost-1")
    again = join(open_gateway, t.table_id, player_id="lost", request_id="join-lost-1")
    assert again.seat == first.seat == common_pb2.SEAT_1
    assert again.seat_token == first.seat_token
    err = refused(lambda: join(open_gateway, t.table_id, "lost", request_id="join-lost-2"))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
