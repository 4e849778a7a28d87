"""Two wall servers on one store (SQLite file, PostgreSQL schema), as two replicas behind one
address: either serves any hand, draws alternate between them without a tile handed out
twice, a retried request id answers the same on the other replica, and a store whose
connections are cut answers UNAVAILABLE, then serves again, nothing lost."""

from __future__ import annotations

import contextlib

import grpc
import psycopg
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.wall.v1 import wall_pb2, wall_pb2_grpc

from infra.convert import common as C
from services.wall.domain.record import HandWall
from services.wall.server import SPEC
from shared import tiles as T
from tests.support.grpc_server import serving

TIMEOUT = 10
SEED = bytes(range(32))


@contextlib.contextmanager
def two_walls(url: str):
    with contextlib.ExitStack() as stack:
        stubs = []
        for _ in range(2):
            _, channel = stack.enter_context(
                serving(SPEC, store_url=url, extra={"allow_fixed_seed": True})
            )
            stubs.append(wall_pb2_grpc.WallServiceStub(channel))
        yield stubs


@pytest.fixture
def replicas(shared_backend):
    with two_walls(shared_backend.url) as stubs:
        yield stubs


def draw(stub, hand_id, seat, rid=""):
    return stub.Draw(
        wall_pb2.DrawRequest(hand_id=hand_id, seat=C.seat_to_proto(seat), request_id=rid),
        timeout=TIMEOUT,
    )


def test_any_replica_serves_any_hand(replicas):
    a, b = replicas
    hand = a.NewHand(wall_pb2.NewHandRequest(dealer=common_pb2.SEAT_1, seed=SEED), timeout=TIMEOUT)
    dealt = b.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    got = [draw((a, b)[i % 2], hand.hand_id, i % 4, f"d{i}") for i in range(30)]
    assert [r.sequence for r in got] == list(range(5, 35))
    solo = HandWall.create("x", SEED, 1)
    solo.deal()
    assert [C.tile_from_proto(r.tile) for r in got] == [solo.draw(0).tiles[0] for _ in range(30)]
    retried = draw(a, hand.hand_id, 1, "d9")  # b answered it first
    assert (retried.tile, retried.sequence) == (got[9].tile, got[9].sequence)
    assert got[-1].counts.remaining == T.WALL_SIZE - 53 - 30
    revealed = b.Reveal(wall_pb2.RevealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    assert len(revealed.events) == 4 + 30 and dealt.hands


def test_cut_connections_answer_unavailable_then_serve_again(postgres_url):
    with two_walls(postgres_url) as (a, _):
        cut_and_retry(a, postgres_url)


def cut_and_retry(a, url: str) -> None:
    hand = a.NewHand(wall_pb2.NewHandRequest(dealer=common_pb2.SEAT_1), timeout=TIMEOUT)
    a.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    first = draw(a, hand.hand_id, 0, "before")
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    with pytest.raises(grpc.RpcError) as err:
        draw(a, hand.hand_id, 0, "during")
    assert err.value.code() is grpc.StatusCode.UNAVAILABLE
    assert "lost the connection" in err.value.details()
    for _ in range(20):  # the pool reconnects: the same request id, retried, goes in once
        try:
            again = draw(a, hand.hand_id, 0, "during")
            break
        except grpc.RpcError as exc:
            assert exc.code() is grpc.StatusCode.UNAVAILABLE
    assert again.sequence == first.sequence + 1
    assert draw(a, hand.hand_id, 0, "during").sequence == again.sequence
