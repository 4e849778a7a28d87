"""Subscribe ``heartbeats`` (issue 32, a paused owner), on both server models: a stream that asks
for them hears from the gateway at least every half lease while its table is idle, each
heartbeat carrying the lease and nothing of the table, using no event number; a stream that
does not ask gets none; a stolen or forged token gets no heartbeat before its refusal."""

from __future__ import annotations

import itertools
import threading
import time

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb

from mahjong_client.tables import create_table
from tests.support.stacks import inprocess_gateway

LEASE_MS = 1500
SLACK_S = 0.3  # a loaded machine's scheduling (2 cores shared by many processes)


def _read_for(stream, seconds: float) -> list[tuple[float, pb.SubscribeResponse]]:
    """The messages of ``stream`` for ``seconds`` (then cancelled), each with when it came."""
    got: list[tuple[float, pb.SubscribeResponse]] = []

    def read() -> None:
        try:
            for m in stream:
                got.append((time.monotonic(), m))
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.CANCELLED:
                raise

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(seconds)
    stream.cancel()
    reader.join(5)
    return got


@pytest.mark.parametrize("server_model", ["asyncio", "threads"])
def test_an_idle_stream_hears_a_heartbeat_every_third_of_the_lease(server_model):
    with inprocess_gateway(
        seat_secret="s",
        bot_delay_ms=0,
        discard_ms=60_000,
        claim_ms=60_000,
        lease_ms=LEASE_MS,
        server_config={"server_model": server_model},
    ) as gw:
        table = create_table(gw.server.address, ["p", None, None, None], max_hands=1)
        token = table.seat_tokens[0]

        def subscribe(**flags):
            request = pb.SubscribeRequest(table_id=table.table_id, seat_token=token, **flags)
            return gw.stub.Subscribe(request, timeout=30)

        started = time.monotonic()
        beating = _read_for(subscribe(batched=True, heartbeats=True), 3.0)
        plain = _read_for(subscribe(batched=True), 1.0)
        forged = pb.SubscribeRequest(
            table_id=table.table_id, seat_token=token[:-2] + "xx", heartbeats=True
        )
        before_refusal = []
        with pytest.raises(grpc.RpcError) as refused:
            for m in gw.stub.Subscribe(forged, timeout=10):
                before_refusal.append(m)

    beats = [(t, m) for t, m in beating if m.HasField("heartbeat")]
    assert beats, "no heartbeat at all"
    for _, m in beats:  # the lease and nothing else: no event, no view, no number
        assert m.heartbeat == pb.StreamHeartbeat(lease_ms=LEASE_MS, interval_ms=LEASE_MS // 3)
        assert not m.events and not m.HasField("event") and not m.HasField("view")
    # the first as the stream opens; after it, never more than half the lease without a message
    assert beats[0][0] - started < 2.0
    times = [started] + [t for t, _ in beating]
    gaps = [b - a for a, b in itertools.pairwise(times[1:])]
    assert max(gaps) <= LEASE_MS / 2000 + SLACK_S, gaps
    assert len(beats) >= 4  # an idle table: 3 s of a heartbeat each 0.5 s
    events = [e.sequence for _, m in beating for e in m.events]
    # the seat's events as a stream without heartbeats has them (its numbering has gaps: other
    # seats' private events), none twice, none skipped
    assert events and events == sorted(set(events))
    assert events == [e.sequence for _, m in plain for e in m.events]
    assert not any(m.HasField("heartbeat") for _, m in plain)
    assert before_refusal == []
    assert refused.value.code() in (
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
    )
