"""The wall as real processes (infra.supervisor.ServiceProcess) on loopback ports the OS picks:
start-up to SERVING (the port file naming every port; a process that exits at start-up fails at
once), calls, /metrics, state kept in SQLite across a restart, two replicas on one store, and a
clean SIGTERM shutdown (NOT_SERVING while draining, exit status 0)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import grpc
import pytest
from mahjong.wall.v1 import wall_pb2, wall_pb2_grpc

from infra.convert import common as C
from infra.supervisor import ServiceProcess, StartupError
from shared import tiles as T
from tests.support.probes import fetch_metrics, health_status, metric_value
from tests.support.stacks import service_process
from tests.support.tls import to_process

pytestmark = pytest.mark.integration
TIMEOUT = 10


def start_wall(tmp_path, name="wall", store=None, extra=()) -> ServiceProcess:
    proc = service_process(
        "wall",
        tmp_path,
        store_url=store or f"sqlite:///{tmp_path}/wall.db",
        extra=extra,
        metrics=True,
        log_name=name,
    )
    return proc.start().wait_ready(timeout=30)


def stub_for(proc: ServiceProcess):
    channel = to_process(proc)  # mutual TLS, as the gateway
    return channel, wall_pb2_grpc.WallServiceStub(channel)


def draw(stub, hand_id: str, seat: int) -> int:
    r = stub.Draw(
        wall_pb2.DrawRequest(hand_id=hand_id, seat=C.seat_to_proto(seat)), timeout=TIMEOUT
    )
    return C.tile_from_proto(r.tile)


def share_a_hand(a: ServiceProcess, b: ServiceProcess, dealer: int) -> None:
    """A new hand on ``a``, dealt on ``b``, drawn out alternating: every tile exactly once."""
    (ca, sa), (cb, sb) = stub_for(a), stub_for(b)
    hand = sa.NewHand(wall_pb2.NewHandRequest(dealer=C.seat_to_proto(dealer)), timeout=TIMEOUT)
    deal = sb.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    got = [C.tile_from_proto(t) for h in deal.hands for t in h.tiles]
    for i in range(91):
        got.append(draw(sa if i % 2 else sb, hand.hand_id, i % 4))
    assert sorted(got) == T.canonical_set()
    ca.close()
    cb.close()


def test_serves_keeps_state_across_restarts_and_stops_cleanly_on_sigterm(tmp_path):
    proc = start_wall(tmp_path, extra=["--drain-seconds", "1.5"])
    try:
        channel, stub = stub_for(proc)
        assert health_status(channel) == "SERVING"
        hand = stub.NewHand(wall_pb2.NewHandRequest(dealer=C.seat_to_proto(1)), timeout=TIMEOUT)
        stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
        first = draw(stub, hand.hand_id, 1)
        metrics = fetch_metrics(proc.ports.metrics)
        assert (
            metric_value(metrics, "grpc_server_handled_total", grpc_method="Draw", grpc_code="OK")
            == 1
        )

        proc.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15  # a loaded machine may be slow to handle it
        status = "SERVING"
        while status == "SERVING" and time.monotonic() < deadline:
            status = health_status(channel)
        assert status == "NOT_SERVING"  # draining: balancers stop sending calls
        assert proc.proc.wait(15) == 0
        channel.close()
        log = [json.loads(line) for line in (tmp_path / "wall.log").read_text().splitlines()]
        events = [line["event"] for line in log]
        assert events.index("shutdown_requested") < events.index("stopped")
        assert log[events.index("shutdown_requested")]["signal"] == "SIGTERM"

        # a new process on the same store carries on with the same hand
        proc = start_wall(tmp_path, name="wall2")
        channel, stub = stub_for(proc)
        counts = stub.Remaining(
            wall_pb2.RemainingRequest(hand_id=hand.hand_id), timeout=TIMEOUT
        ).counts
        assert counts.live_drawn == 54
        revealed = stub.Reveal(wall_pb2.RevealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
        assert C.tiles_from_proto(revealed.events[-1].tiles) == [first]
        channel.close()
    finally:
        proc.stop()
    assert proc.proc.returncode == 0


def test_two_replicas_on_one_store_never_hand_out_a_tile_twice(tmp_path):
    store = f"sqlite:///{tmp_path}/shared.db"
    a = start_wall(tmp_path, "a", store)
    b = start_wall(tmp_path, "b", store)
    try:
        share_a_hand(a, b, dealer=0)
    finally:
        assert b.stop() == 0
        assert a.stop() == 0


def test_two_replicas_on_postgres_with_the_password_never_shown(tmp_path, postgres_url):
    """Two wall processes on one PostgreSQL schema, the URL carrying a password (the test
    server trusts loopback, so it is sent and ignored): they share every hand, and the
    password is in neither process's command line nor any log line."""
    url = postgres_url.replace("postgresql://postgres@", "postgresql://postgres:s3cret@", 1)
    assert "s3cret" in url
    a = start_wall(tmp_path, "pg-a", url)
    b = start_wall(tmp_path, "pg-b", url)
    try:
        for proc in (a, b):
            cmdline = Path(f"/proc/{proc.proc.pid}/cmdline").read_bytes()
            assert b"s3cret" not in cmdline and b"postgresql" not in cmdline
        share_a_hand(a, b, dealer=2)
    finally:
        assert b.stop() == 0
        assert a.stop() == 0
    for name in ("pg-a", "pg-b"):
        log = (tmp_path / f"{name}.log").read_text()
        assert "s3cret" not in log
        serving = [json.loads(line) for line in log.splitlines() if '"serving"' in line]
        assert serving and serving[0]["store"].startswith("postgresql://postgres:***@")


def test_the_port_file_names_every_port_the_process_bound(tmp_path):
    """Started on ports the OS picks (gRPC, health, metrics): the port file names each, and
    each answers."""
    proc = service_process("wall", tmp_path, extra=["--health-port", "auto"], metrics=True)
    proc.start().wait_ready(timeout=30)
    try:
        ports = proc.ports
        assert ports.pid == proc.proc.pid and ports.service == "wall"
        assert ports.services == ("mahjong.wall.v1.WallService",)
        assert len({ports.grpc, ports.health, ports.metrics}) == 3 and 0 not in (
            ports.grpc,
            ports.health,
            ports.metrics,
        )
        assert ports.internal == 0 and ports.web == 0  # the wall has neither
        with grpc.insecure_channel(f"127.0.0.1:{ports.health}") as plain:
            assert health_status(plain, "mahjong.wall.v1.WallService") == "SERVING"
        assert "grpc_server_handled_total" in fetch_metrics(ports.metrics)
    finally:
        assert proc.stop() == 0


def test_a_process_that_exits_at_start_up_fails_at_once_with_the_end_of_its_log(tmp_path):
    proc = service_process("wall", tmp_path, extra=["--no-such-flag"]).start()
    began = time.monotonic()
    with pytest.raises(StartupError, match="unrecognized arguments: --no-such-flag"):
        proc.wait_ready(timeout=120)
    assert time.monotonic() - began < 60  # not the timeout: its exit
