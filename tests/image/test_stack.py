"""The image runs the deployment: every service started from it as the base manifests start it
(tests/image/podman.py: args, environment, user, read-only root, the manifests' mounts alone),
on a PostgreSQL schema of this test's own; each answers grpc health SERVING, they migrate their
tables, a whole hand is played through the gateway with the project's Python client (the
table created on the gateway's internal port with matchmaking's certificate and the internal
token, as matchmaking does), and on SIGTERM each reports NOT_SERVING, drains and exits 0. The
embedded layout (overlays/dev: SQLite on a volume of its own) starts and stops as well."""

from __future__ import annotations

import secrets
import threading
import time

import psycopg
import pytest
from grpc_health.v1 import health_pb2
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.addresses import CLIENT_KEEPALIVE_OPTIONS, SERVICE_ORDER
from infra.interceptor import internal_metadata
from infra.tls import TLSFiles, client_channel, dial
from mahjong_client.player import RemotePlayer
from tests.image.podman import (
    K8S,
    ImageStack,
    container_specs,
    health_status,
    podman,
    render,
    require_podman,
)

pytestmark = pytest.mark.integration

NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
STORE_SERVICES = ("wall", "gateway", "matchmaking")  # rules and scoring keep nothing


@pytest.fixture(scope="module")
def the_image():
    return require_podman()


@pytest.fixture
def cluster(the_image, postgres_url, tmp_path):
    token = secrets.token_hex(16)
    stack = ImageStack(
        the_image,
        container_specs(render(K8S / "base")),
        tmp_path,
        secrets={
            ("mahjong-store", "url"): postgres_url,
            ("mahjong-internal-token", "token"): token,
        },
    )
    stack.token = token
    try:
        yield stack.start_all()
    finally:
        for service in stack.running:
            print(f"--- {service} ---\n{stack.logs(service, 15)}")
        stack.close()


def play_one_hand(stack: ImageStack) -> RemotePlayer:
    gateway = stack.running["gateway"]
    internal = dial(
        gateway.address("internal"),
        "gateway",
        TLSFiles(stack.tls_root / "matchmaking"),
    )
    with internal:
        table = gateway_pb2_grpc.GatewayServiceStub(internal).CreateTable(
            pb.CreateTableRequest(
                request_id=secrets.token_hex(8),
                ruleset=common_pb2.RulesetRef(name="shanghai-qiaoma"),
                stake=1,
                seats=[pb.SeatAssignment(player_id="p0", display_name="p0")]
                + [pb.SeatAssignment(player_id=f"b{i}", bot=True) for i in (1, 2, 3)],
                max_hands=1,
                first_dealer=common_pb2.SEAT_0,
            ),
            timeout=10,
            metadata=internal_metadata(stack.token),
        )
    channel = client_channel(
        gateway.address("grpc"), CLIENT_KEEPALIVE_OPTIONS, ca_file=str(stack.tls_root / "ca.crt")
    )
    player = RemotePlayer(channel, table.table_id, table.seat_tokens[0], seat=0, name="p0")
    done = threading.Thread(target=player.run, kwargs={"max_hands": 1}, daemon=True)
    done.start()
    done.join(120)
    assert not done.is_alive(), "the hand did not end within 120 s"
    return player


def test_every_service_serves_plays_a_hand_and_drains_on_postgres(cluster, postgres_url):
    for service in SERVICE_ORDER:
        run = cluster.running[service]
        assert run.serving_after is not None, service
        print(f"{service}: SERVING {run.serving_after:.2f}s after podman run")

    # the store: each stateful service created and migrated its tables in this schema
    with psycopg.connect(postgres_url) as c:
        tables = {
            r[0]
            for r in c.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        }
        versions = dict(c.execute("SELECT component, version FROM store_schema").fetchall())
    assert "store_schema" in tables and len(tables) > 1, tables
    assert versions and all(v >= 1 for v in versions.values()), versions

    player = play_one_hand(cluster)
    assert player.error is None
    assert len(player.log.hand_results) == 1, player.log
    assert player.log.actions > 0  # the client played its seat

    # SIGTERM: NOT_SERVING on the health port during the drain, then exit 0
    terminated = {}
    for service in reversed(SERVICE_ORDER):
        cluster.terminate(service)
        terminated[service] = time.monotonic()
    seen_not_serving = set()
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline and len(seen_not_serving) < len(SERVICE_ORDER):
        for service in SERVICE_ORDER:
            if health_status(cluster.running[service].health, timeout=0.3) == NOT_SERVING:
                seen_not_serving.add(service)
        time.sleep(0.05)
    codes = {s: cluster.wait_exit(s, timeout=60) for s in SERVICE_ORDER}
    took = {s: time.monotonic() - terminated[s] for s in SERVICE_ORDER}
    print("exit after SIGTERM:", {s: f"{t:.1f}s" for s, t in took.items()})
    assert codes == dict.fromkeys(SERVICE_ORDER, 0), codes
    assert seen_not_serving == set(SERVICE_ORDER), seen_not_serving
    for service in SERVICE_ORDER:
        drain = float(cluster.env_of(cluster.specs[service]).get("MAHJONG_DRAIN_SECONDS", 1))
        assert took[service] >= drain * 0.9, (service, took[service], drain)


def test_embedded_layout_serves_from_its_sqlite_volume(the_image, tmp_path):
    """overlays/dev: the stateful services on SQLite files in volumes of their own (the only
    writable paths beside /tmp), the store made at start under the read-only root."""
    specs = container_specs(render(K8S / "overlays" / "dev"))
    stack = ImageStack(
        the_image, specs, tmp_path, secrets={("mahjong-internal-token", "token"): "t" * 32}
    )
    stack.token = "t" * 32
    try:
        stack.start_all()
        assert all(stack.running[s].serving_after is not None for s in SERVICE_ORDER)
        assert len(play_one_hand(stack).log.hand_results) == 1
        for service in STORE_SERVICES:
            out = stack.running[service]
            listing = podman("exec", out.container, "ls", "/data").stdout.split()
            assert f"{service}.db" in listing, (service, listing)
        for service in reversed(SERVICE_ORDER):
            stack.terminate(service)
        assert {s: stack.wait_exit(s, timeout=60) for s in SERVICE_ORDER} == dict.fromkeys(
            SERVICE_ORDER, 0
        )
    finally:
        stack.close()
