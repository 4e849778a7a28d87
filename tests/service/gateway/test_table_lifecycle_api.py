"""The table lifecycle over real loopback gateways (wall, rules and scoring served in-process,
two gateway replicas on one SQLite store): a finished table evicted from memory still answers
GetTableState and Subscribe from its log; a replica whose lease another replica took relays its
Subscribe streams from the new owner's address (UNAVAILABLE when that cannot be reached)."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
import uuid

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from services.gateway.server import SPEC as GATEWAY
from tests.support.grpc_server import serving
from tests.support.probes import rpc_error
from tests.support.sessions import NO_HOLD_SETTINGS
from tests.support.stacks import inprocess_backends
from tests.support.tables import bot_seats, mixed_seats, request_table


@pytest.fixture(scope="module")
def backends():
    with inprocess_backends() as addrs:
        yield addrs


def _gateway(stack, backends, store_url, **extra):
    server, channel = stack.enter_context(
        serving(
            GATEWAY,
            store_url=store_url,
            extra={
                **backends,
                "seat_secret": "test-secret",
                "discard_ms": 60_000,
                "claim_ms": 60_000,
                **NO_HOLD_SETTINGS,
                **extra,
            },
        )
    )
    return server, gateway_pb2_grpc.GatewayServiceStub(channel)


def _create(stub, humans: int) -> pb.CreateTableResponse:
    """``humans`` people (``p0-…`` …), then bots (``b{seat}``), one hand, seat 0 deals."""
    seats = mixed_seats(humans, "p")[:humans] + bot_seats()[humans:]
    return request_table(stub, seats, max_hands=1, first_dealer=common_pb2.SEAT_0)


def _spectate(stub, table_id: str) -> str:
    return stub.JoinSeat(
        pb.JoinSeatRequest(table_id=table_id, spectator=True, request_id=uuid.uuid4().hex),
        timeout=5,
    ).seat_token


def _events(stub, table_id: str, token: str, after: int = 0) -> list[pb.Event]:
    req = pb.SubscribeRequest(table_id=table_id, seat_token=token, after_sequence=after)
    return [r.event for r in stub.Subscribe(req, timeout=30)]


def test_an_evicted_finished_table_answers_from_its_log(backends, tmp_path):
    with contextlib.ExitStack() as stack:
        server, stub = _gateway(
            stack, backends, f"sqlite:///{tmp_path}/gw.db", finished_table_ttl_seconds=0
        )
        manager = server.resource.manager
        t = _create(stub, humans=0).table_id
        token = _spectate(stub, t)
        live = _events(stub, t, token)  # follows the table until it finishes
        assert live[-1].WhichOneof("kind") == "table_finished"
        deadline = time.monotonic() + 10
        while t in manager.tables:
            assert time.monotonic() < deadline, "the finished table stayed in memory"
            time.sleep(0.02)

        view = stub.GetTableState(
            pb.GetTableStateRequest(table_id=t, seat_token=token), timeout=5
        ).table
        assert view.phase == pb.TABLE_PHASE_FINISHED
        assert view.last_sequence == live[-1].sequence
        assert list(view.seats) and [s.chips for s in view.seats] == list(
            live[-1].table_finished.chips
        )
        assert _events(stub, t, token) == live  # the same events, from the store
        assert _events(stub, t, token, after=live[-2].sequence) == live[-1:]


def _payload(event: pb.Event) -> str:
    return event.WhichOneof("kind")


def test_a_replica_that_lost_the_lease_ends_or_relays_its_subscribe(backends, tmp_path):
    url = f"sqlite:///{tmp_path}/gw.db"
    with contextlib.ExitStack() as stack:
        # The first replica's lease lapses at once, as if it were paused; its human seat does
        # not answer, so the table waits meanwhile.
        _, first = _gateway(stack, backends, url, lease_ms=0, replica_id="gw-a")
        created = _create(first, humans=1)
        t, token = created.table_id, created.seat_tokens[0]
        out: queue.Queue = queue.Queue()

        def follow() -> None:
            req = pb.SubscribeRequest(table_id=t, seat_token=token)
            try:
                for r in first.Subscribe(req, timeout=30):
                    out.put(r.event)
                out.put("ended")
            except grpc.RpcError as exc:
                out.put(exc)

        threading.Thread(target=follow, daemon=True).start()
        first_event = out.get(timeout=10)
        assert _payload(first_event) == "table_started"

        _, second = _gateway(
            stack, backends, url, replica_id="gw-b", advertise_address="10.0.0.2:50054"
        )
        taken = second.GetTableState(
            pb.GetTableStateRequest(table_id=t, seat_token=token), timeout=5
        ).table  # takes the table over
        item = first_event
        while isinstance(item, pb.Event):
            item = out.get(timeout=10)
        assert isinstance(item, grpc.RpcError), item
        # The first replica relays the stream from the new owner's advertised address
        # (services/gateway/forwarding.py), which does not exist here: UNAVAILABLE, retryable.
        code, _, _info = rpc_error(lambda: (_ for _ in ()).throw(item))
        assert code == grpc.StatusCode.UNAVAILABLE
        # The new owner has every event; the client resumes there.
        resumed = second.Subscribe(
            pb.SubscribeRequest(table_id=t, seat_token=token, after_sequence=0), timeout=30
        )
        assert next(iter(resumed)).event.sequence == 1
        assert taken.last_sequence >= 1
