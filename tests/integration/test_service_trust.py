"""Services trust only each other, over real processes with TLS on (as `make run` starts them):
a caller without a certificate, with another workload's, with an expired one, or on the
plaintext health port is refused and changes nothing; a certificate rotated on disk serves new
connections without a restart; and a spectator who read a hand id off its stream can neither
read the hand from the wall nor end it, while the table plays on to its end."""

from __future__ import annotations

import datetime
import shutil
import socket
import ssl
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc
from mahjong.wall.v1 import wall_pb2, wall_pb2_grpc

from devkit import dev_ca
from infra.addresses import SERVICE_ORDER
from infra.convert import common as C
from infra.supervisor import ServiceProcess, stop_all
from infra.tls import OPERATOR, TLSFiles, client_channel, dial
from tests.support.probes import error_info
from tests.support.stacks import service_process
from tests.support.tls import CA_FILE, as_player, as_workload, to_process

pytestmark = pytest.mark.integration
TIMEOUT = 10


@pytest.fixture
def wall(tmp_path):
    proc = service_process("wall", tmp_path, extra=["--health-port", "auto"], metrics=False)
    proc.start().wait_ready(timeout=30)
    yield proc
    assert proc.stop() == 0


def _new_hand(channel) -> str:
    stub = wall_pb2_grpc.WallServiceStub(channel)
    return stub.NewHand(wall_pb2.NewHandRequest(dealer=C.seat_to_proto(0)), timeout=TIMEOUT).hand_id


def test_a_caller_without_a_client_certificate_is_refused(wall):
    # trusts the CA, presents no certificate
    with (
        client_channel(wall.address, ca_file=CA_FILE) as channel,
        pytest.raises(grpc.RpcError) as err,
    ):
        _new_hand(channel)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE  # the handshake itself fails
    # plaintext to a TLS port
    with grpc.insecure_channel(wall.address) as channel, pytest.raises(grpc.RpcError) as err:
        _new_hand(channel)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_another_services_certificate_may_not_reveal_and_nothing_changes(wall):
    with to_process(wall, "gateway") as gateway:
        hand = _new_hand(gateway)
        stub = wall_pb2_grpc.WallServiceStub(gateway)
        before = stub.Remaining(wall_pb2.RemainingRequest(hand_id=hand), timeout=TIMEOUT)
        with to_process(wall, "matchmaking") as matchmaking:
            intruder = wall_pb2_grpc.WallServiceStub(matchmaking)
            for call, request in (
                (intruder.Reveal, wall_pb2.RevealRequest(hand_id=hand)),
                (intruder.Deal, wall_pb2.DealRequest(hand_id=hand)),
                (intruder.NewHand, wall_pb2.NewHandRequest(dealer=C.seat_to_proto(0))),
            ):
                with pytest.raises(grpc.RpcError) as err:
                    call(request, timeout=TIMEOUT)
                assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
                assert error_info(err.value).reason == "CALLER_NOT_ALLOWED"
                assert (
                    "matchmaking may not call mahjong.wall.v1.WallService/" in err.value.details()
                )
        after = stub.Remaining(wall_pb2.RemainingRequest(hand_id=hand), timeout=TIMEOUT)
        assert after == before
        stub.Deal(wall_pb2.DealRequest(hand_id=hand), timeout=TIMEOUT)  # still the gateway's
    with to_process(wall, OPERATOR) as operator:  # the operator may reveal
        wall_pb2_grpc.WallServiceStub(operator).Reveal(
            wall_pb2.RevealRequest(hand_id=hand), timeout=TIMEOUT
        )


def test_the_health_port_answers_health_alone(wall):
    assert wall.ports.health, wall.ports  # its port file names it
    health_address = f"127.0.0.1:{wall.ports.health}"
    with grpc.insecure_channel(health_address) as channel:
        status = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT
        )
        assert status.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as err:
            _new_hand(channel)
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_info(err.value).reason == "PLAINTEXT_PORT"


def test_an_expired_certificate_is_refused(wall, tmp_path):
    past = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)
    expired = dev_ca.issue(
        wall.tls_root,
        "gateway",
        not_before=past - datetime.timedelta(days=1),
        not_after=past,
        directory=tmp_path / "expired",
    )
    with (
        dial(wall.address, "wall", TLSFiles(expired)) as channel,
        pytest.raises(grpc.RpcError) as err,
    ):
        _new_hand(channel)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def _served_certificate(address: str, client: TLSFiles) -> bytes:
    """The certificate a TLS port presents now, read with the ``ssl`` module (a new
    connection, h2 as gRPC speaks it)."""
    cert, key, ca = client.paths
    context = ssl.create_default_context(cafile=str(ca))
    context.load_cert_chain(str(cert), str(key))
    context.set_alpn_protocols(["h2"])
    host, port = address.rsplit(":", 1)
    with (
        socket.create_connection((host, int(port)), timeout=TIMEOUT) as raw,
        context.wrap_socket(raw, server_hostname="wall") as tls,
    ):
        return tls.getpeercert(binary_form=True)


def test_a_certificate_replaced_on_disk_serves_new_connections_without_a_restart(tmp_path):
    root = tmp_path / "tls"
    dev_ca.ensure(SERVICE_ORDER, root)
    proc = ServiceProcess("wall", log_path=tmp_path / "wall.log", tls_root=root)
    proc.start().wait_ready(timeout=30)
    try:
        gateway = TLSFiles(root / "gateway")
        first = _served_certificate(proc.address, gateway)
        with dial(proc.address, "wall", gateway) as kept:  # a connection open across it
            _new_hand(kept)
            dev_ca.issue(root, "wall")  # the rotation: a new key and certificate in place
            deadline = time.monotonic() + 15
            while (now := _served_certificate(proc.address, gateway)) == first:
                assert time.monotonic() < deadline, "the new certificate was never served"
                time.sleep(0.2)
            assert now != first
            _new_hand(kept)  # the connection made before the rotation still works
        with dial(proc.address, "wall", gateway) as fresh:
            _new_hand(fresh)
        assert proc.proc is not None and proc.proc.poll() is None  # never restarted
    finally:
        assert proc.stop() == 0


@pytest.fixture
def stack(tmp_path):
    procs: dict[str, ServiceProcess] = {}
    try:
        for name in ("wall", "rules", "scoring"):
            procs[name] = service_process(name, tmp_path).start()
        for p in procs.values():
            p.wait_ready(timeout=30)
        flags = [f for n, p in procs.items() for f in (f"--{n}-addr", p.internal_address)]
        procs["gateway"] = service_process(
            "gateway",
            tmp_path,
            extra=[*flags, "--public-tables", "on", "--bot-delay-ms", "20"],
        ).start()
        procs["gateway"].wait_ready(timeout=30)
        yield procs
    finally:
        stop_all(reversed(list(procs.values())))
        shutil.rmtree(tmp_path / "never", ignore_errors=True)


def test_a_spectator_cannot_read_or_end_a_hand_and_the_table_plays_on(stack):
    gateway = stack["gateway"]
    with as_player(gateway.address) as channel:
        stub = gateway_pb2_grpc.GatewayServiceStub(channel)
        table = stub.CreateTable(
            gateway_pb2.CreateTableRequest(
                request_id="spectated",
                ruleset={"name": "shanghai-qiaoma"},
                stake=1,
                max_hands=1,
                seats=[
                    gateway_pb2.SeatAssignment(bot=True, display_name=f"b{i}") for i in range(4)
                ],
            ),
            timeout=TIMEOUT,
        )
        seat = stub.JoinSeat(
            gateway_pb2.JoinSeatRequest(table_id=table.table_id, spectator=True), timeout=TIMEOUT
        )
        stream = stub.Subscribe(
            gateway_pb2.SubscribeRequest(table_id=table.table_id, seat_token=seat.seat_token),
            timeout=120,
        )
        hand_id, tried, ended = "", False, False
        for response in stream:
            event = response.event
            hand_id = hand_id or _hand_id(event)
            if hand_id and not tried:
                tried = True
                _spectator_attacks_the_wall(stack["wall"], hand_id)
            if event.WhichOneof("kind") == "table_finished":
                ended = True
                break
        assert tried, "no hand id reached the spectator"
        assert ended, "the table did not play to its end"


def _hand_id(event) -> str:
    """The hand an event belongs to, as a spectator's stream shows it (every hand's event names
    it; HandStarted also carries it)."""
    if event.hand_id:
        return event.hand_id
    kind = event.WhichOneof("kind")
    payload = getattr(event, kind) if kind else None
    return getattr(payload, "hand_id", "") if payload is not None else ""


def _spectator_attacks_the_wall(wall: ServiceProcess, hand_id: str) -> None:
    """What a spectator can try: plaintext, TLS without a certificate, or a player's TLS."""
    attempts = [
        grpc.insecure_channel(wall.address),
        client_channel(wall.address, ca_file=CA_FILE),
        as_player(wall.address),
    ]
    for channel in attempts:
        stub = wall_pb2_grpc.WallServiceStub(channel)
        for call, request in (
            (stub.Deal, wall_pb2.DealRequest(hand_id=hand_id)),
            (stub.Reveal, wall_pb2.RevealRequest(hand_id=hand_id)),
        ):
            with pytest.raises(grpc.RpcError) as err:
                call(request, timeout=3)
            assert err.value.code() in (
                grpc.StatusCode.UNAVAILABLE,
                grpc.StatusCode.UNAUTHENTICATED,
            )
        channel.close()
    # another workload of the deployment is refused by name, too
    with as_workload(wall.address, "wall", "scoring") as channel:
        with pytest.raises(grpc.RpcError) as err:
            wall_pb2_grpc.WallServiceStub(channel).Reveal(
                wall_pb2.RevealRequest(hand_id=hand_id), timeout=3
            )
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
