"""RecordHand and TableFinished over a real loopback server with an internal token configured:
only the gateway's certificate on the mutual-TLS internal port, sending the token too, is heard,
and only about tables matchmaking allocated."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.interceptor import internal_metadata
from services.matchmaking.server import INTERNAL_METHODS, SPEC
from tests.support.grpc_server import channel_to, serving
from tests.support.stacks import matchmaking_spec, queued_table, table_fees
from tests.unit.matchmaking.mm_fakes import FakeAllocator

TOKEN = "internal-test-token"
T = 10


@pytest.fixture
def env():
    alloc = FakeAllocator()
    spec = matchmaking_spec(alloc)
    with serving(spec, internal_token=TOKEN) as (server, channel):
        gateway = channel_to(server, "matchmaking", "gateway")
        yield (
            pb_grpc.MatchmakingServiceStub(channel),  # a player, on the public port
            server.resource.matchmaking,
            alloc,
            pb_grpc.MatchmakingServiceStub(gateway),  # the gateway, on the internal port
        )
        gateway.close()


def silver(mm, ids):
    """The players' silver (GetBalances shows a player only its own)."""
    return [mm.account(pid).silver for pid in ids]


def refusal(call, request, metadata=()):
    with pytest.raises(grpc.RpcError) as err:
        call(request, timeout=T, metadata=metadata)
    info = error_details_pb2.ErrorInfo()
    rpc_status.from_call(err.value).details[0].Unpack(info)
    return err.value.code(), info.reason


def test_the_spec_marks_the_reports_internal():
    assert SPEC.internal_methods == INTERNAL_METHODS
    assert {
        "RecordHand",
        "TableFinished",
        "CheckSession",
        "HoldDoubleCard",
        "ReleaseDoubleCard",
    } == INTERNAL_METHODS


def test_reports_without_or_with_a_wrong_token_are_unauthenticated(env):
    stub, mm, alloc, gateway = env
    table_id, tag, ids = queued_table(stub, mm, alloc)
    req = pb.RecordHandRequest(
        hand_id="h1",
        table_id=table_id,
        tag=tag,
        player_ids=ids,
        payments=[-9, 3, 3, 3],
        fees=table_fees(alloc, table_id),
    )
    # the gateway's certificate is not enough while a token is configured: it is a second factor
    assert refusal(gateway.RecordHand, req) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "INTERNAL_TOKEN_MISSING",
    )
    wrong = (("x-mahjong-internal-token", "guess"),)
    assert refusal(gateway.RecordHand, req, wrong)[0] == grpc.StatusCode.UNAUTHENTICATED
    fin = pb.TableFinishedRequest(table_id=table_id, tag=tag, hands_played=1)
    assert refusal(gateway.TableFinished, fin)[0] == grpc.StatusCode.UNAUTHENTICATED
    # nor is the token without the certificate: a player on the public port
    assert refusal(stub.RecordHand, req, internal_metadata(TOKEN)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "NO_WORKLOAD_CERTIFICATE",
    )
    assert refusal(stub.TableFinished, fin, internal_metadata(TOKEN))[0] == (
        grpc.StatusCode.UNAUTHENTICATED
    )
    assert silver(mm, ids) == [1000] * 4  # nothing moved
    ok = gateway.RecordHand(req, timeout=T, metadata=internal_metadata(TOKEN))
    # the hand's payments, less the level's room service fee (台费, 8 at stake 8) each
    assert ok.duplicate is False and silver(mm, ids) == [983, 995, 995, 995]
    gateway.TableFinished(fin, timeout=T, metadata=internal_metadata(TOKEN))


def test_public_calls_need_no_internal_token(env):
    stub, *_ = env
    stub.ListLevels(pb.ListLevelsRequest(), timeout=T)


def test_authenticated_reports_about_foreign_tables_are_refused(env):
    stub, mm, alloc, gateway = env
    table_id, tag, ids = queued_table(stub, mm, alloc)
    md = internal_metadata(TOKEN)
    forged = pb.RecordHandRequest(
        hand_id="h-x", table_id="t-forged", tag=tag, player_ids=ids, payments=[-10, 10, 0, 0]
    )
    assert refusal(gateway.RecordHand, forged, md) == (
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_ALLOCATED",
    )
    swapped = pb.RecordHandRequest(
        hand_id="h-y",
        table_id=table_id,
        tag=tag,
        player_ids=[ids[1], ids[0], ids[2], ids[3]],
        payments=[-10, 10, 0, 0],
    )
    assert refusal(gateway.RecordHand, swapped, md) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "TABLE_SEATING_MISMATCH",
    )
    fin = pb.TableFinishedRequest(table_id="t-forged", tag=tag, hands_played=1)
    assert refusal(gateway.TableFinished, fin, md)[0] == grpc.StatusCode.NOT_FOUND
    assert silver(mm, ids) == [1000] * 4
