"""Wall over a real loopback server: a draw's request id is bounded like NewHand's (printable,
at most 128 characters). Before the fix Draw stored a 1 MB request id inside the hand's wall
record (rewritten on every later draw) and took a tile for it."""

from __future__ import annotations

import grpc
import pytest
from mahjong.wall.v1 import wall_pb2 as pb
from mahjong.wall.v1 import wall_pb2_grpc as pb_grpc

from services.wall.server import SPEC
from tests.support.grpc_server import serving

SEAT_1 = 2  # proto Seat value = seat + 1


@pytest.fixture
def dealt():
    with serving(SPEC, extra={"allow_fixed_seed": False, "retain_hours": 0}) as (_s, channel):
        stub = pb_grpc.WallServiceStub(channel)
        hand_id = stub.NewHand(pb.NewHandRequest(dealer=SEAT_1), timeout=10).hand_id
        stub.Deal(pb.DealRequest(hand_id=hand_id), timeout=10)
        yield stub, hand_id


@pytest.mark.parametrize("request_id", ["r" * 129, "r" * 1_000_000, "a\x00b"])
@pytest.mark.parametrize("rpc", ["Draw", "DrawReplacement"])
def test_a_bad_request_id_is_refused_and_takes_no_tile(dealt, rpc, request_id):
    stub, hand_id = dealt
    before = stub.Remaining(pb.RemainingRequest(hand_id=hand_id), timeout=10).counts
    request = getattr(pb, f"{rpc}Request")(hand_id=hand_id, seat=SEAT_1, request_id=request_id)
    with pytest.raises(grpc.RpcError) as err:
        getattr(stub, rpc)(request, timeout=10)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "request_id" in err.value.details()
    after = stub.Remaining(pb.RemainingRequest(hand_id=hand_id), timeout=10).counts
    assert after == before


def test_a_good_request_id_still_makes_a_draw_retryable(dealt):
    stub, hand_id = dealt
    request = pb.DrawRequest(hand_id=hand_id, seat=SEAT_1, request_id="r" * 128)
    first = stub.Draw(request, timeout=10)
    assert stub.Draw(request, timeout=10).tile == first.tile
