"""The client's retry and resume behaviour against a small scripted gateway on a real loopback
gRPC server (serving TLS with the gateway's development certificate, as a player's client
expects): a transport failure is retried with the same request id (so the real gateway
applies it once), a refusal is recorded without a retry, and a stream cut by the server is
resumed from the last sequence number seen."""

from __future__ import annotations

import threading
from concurrent import futures

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc

from infra.tls import server_credentials
from mahjong_client import RemotePlayer
from shared.table import Discard, Pass
from tests.support.tls import files_of


class ScriptedGateway(gateway_pb2_grpc.GatewayServiceServicer):
    """Answers Act from a script of status codes and streams events 1..N, cutting the first
    stream after ``cut_after`` events as a failing network would."""

    def __init__(self, act_script, events: int = 6, cut_after: int = 3):
        self.act_script = list(act_script)
        self.act_requests: list[gateway_pb2.ActRequest] = []
        self.subscribes: list[int] = []
        self.events = events
        self.cut_after = cut_after
        self.lock = threading.Lock()

    def Act(self, request, context):
        with self.lock:
            self.act_requests.append(request)
            code = self.act_script.pop(0) if self.act_script else grpc.StatusCode.OK
        if code is not grpc.StatusCode.OK:
            context.abort(code, f"scripted {code.name}")
        return gateway_pb2.ActResponse(sequence=request.last_sequence + 1)

    def Subscribe(self, request, context):
        self.subscribes.append(request.after_sequence)
        first = len(self.subscribes) == 1
        for seq in range(request.after_sequence + 1, self.events + 1):
            if first and seq > self.cut_after:
                context.abort(grpc.StatusCode.UNAVAILABLE, "connection reset")
            kind = (
                {"table_finished": gateway_pb2.TableFinished(hands_played=1)}
                if seq == self.events
                else {"hand_drawn": gateway_pb2.HandDrawn(tiles_left=0)}
            )
            yield gateway_pb2.SubscribeResponse(event=gateway_pb2.Event(sequence=seq, **kind))


@pytest.fixture
def gateway():
    servers = []

    def start(servicer):
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        gateway_pb2_grpc.add_GatewayServiceServicer_to_server(servicer, server)
        creds = server_credentials(files_of("gateway"), mutual=False)  # a public port
        port = server.add_secure_port("127.0.0.1:0", creds)
        server.start()
        servers.append(server)
        return f"127.0.0.1:{port}"

    yield start
    for s in servers:
        s.stop(0)


def test_a_transport_failure_is_retried_with_the_same_request_id(gateway):
    fake = ScriptedGateway([grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNAVAILABLE])
    player = RemotePlayer(gateway(fake), "t1", "token", seat=2, reconnect_for=10)
    try:
        player.last_sequence = 41
        resp = player.act(Discard(4))
    finally:
        player.close()
    assert resp is not None and resp.sequence == 42
    ids = {r.request_id for r in fake.act_requests}
    assert len(fake.act_requests) == 3 and len(ids) == 1  # one request, sent three times
    first = fake.act_requests[0]
    assert first.last_sequence == 41 and first.seat == 3  # seat 2 as proto Seat
    assert first.action.discard.tile == 5
    assert player.log.actions == 1 and not player.log.rejections


def test_a_refusal_is_recorded_and_not_retried(gateway):
    fake = ScriptedGateway([grpc.StatusCode.FAILED_PRECONDITION])
    player = RemotePlayer(gateway(fake), "t1", "token", seat=0)
    try:
        assert player.act(Pass()) is None
    finally:
        player.close()
    assert len(fake.act_requests) == 1
    (rej,) = player.log.rejections
    assert rej.code is grpc.StatusCode.FAILED_PRECONDITION
    assert "scripted" in rej.message
    assert rej.action.WhichOneof("kind") == "pass"


def test_separate_actions_get_separate_request_ids(gateway):
    fake = ScriptedGateway([])
    player = RemotePlayer(gateway(fake), "t1", "token", seat=0)
    try:
        player.act(Pass())
        player.act(Pass())
    finally:
        player.close()
    assert len({r.request_id for r in fake.act_requests}) == 2


def test_a_cut_stream_resumes_after_the_last_sequence_seen(gateway):
    fake = ScriptedGateway([], events=6, cut_after=3)
    player = RemotePlayer(gateway(fake), "t1", "token", seat=0, reconnect_for=10)
    try:
        log = player.run()
    finally:
        player.close()
    assert fake.subscribes == [0, 3]
    assert log.subscribes == [0, 3]
    assert log.sequences == [1, 2, 3, 4, 5, 6]
    assert log.table_finished is not None
