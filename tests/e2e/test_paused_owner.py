"""A paused owner (issue 32): three gateway replicas on PostgreSQL, ``--lease-ms 3000``; a
person's table on A, the person and a spectator connected to A, another spectator to B, each a
:class:`~mahjong_client.player.RemotePlayer` that knows the other replicas. A is SIGSTOPped for
15 s just as the person discards. No server answers from a frozen process, so the clients must
not wait on it (:mod:`mahjong_client.failover`): the discard, sent to A, is hedged on B and
accepted there once A's lease ran out; every client's next event arrives, and the person's act
is accepted, within the lease and a second (4 s), long before A wakes."""

from __future__ import annotations

import signal

import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from tests.support.paused_owner import paused_run
from tests.support.stacks import backend_flags, service_process, start_services
from tests.support.tables import request_table
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

LEASE_MS = 3000
PAUSE_S = 15.0
BOUND_S = LEASE_MS / 1000 + 1.0


def test_clients_of_a_paused_owner_go_on_within_the_lease_and_a_second(tmp_path, postgres_url):
    procs: dict = {}
    channels: dict = {}
    try:
        start_services(procs, tmp_path, ("wall", "rules", "scoring"))
        for p in procs.values():
            p.wait_ready(90)
        flags = [*backend_flags(procs), "--seat-secret", "e2e-secret", "--lease-ms", "3000"]
        flags += ["--discard-ms", "600000", "--claim-ms", "600000", "--bot-delay-ms", "20"]
        flags += ["--seat-calls-per-second", "0"]
        for name in ("a", "b", "c"):
            procs[name] = service_process(
                "gateway",
                tmp_path,
                store_url=postgres_url,
                extra=[*flags, "--replica-id", f"paused-{name}"],
                log_name=f"gateway-{name}",
            ).start()
        for name in ("a", "b", "c"):
            channels[name] = as_player(procs[name].wait_ready(90).address)
        t = request_table(  # on A, which owns it: the person deals, the table waits on them
            gateway_pb2_grpc.GatewayServiceStub(channels["a"]),
            [pb.SeatAssignment(player_id="paused"), *[pb.SeatAssignment(bot=True)] * 3],
            max_hands=1,
            first_dealer=common_pb2.SEAT_0,
        )
        run = paused_run(
            procs["a"].proc,
            t.table_id,
            t.seat_tokens[0],
            [channels["a"], channels["b"], channels["c"]],
            LEASE_MS / 1000,
            PAUSE_S,
        )
        run.person.close()
        print(f"\nafter SIGSTOP of the owner: {run.shown()}")
        assert run.stayed_paused
        assert run.acted is not None and run.acted <= BOUND_S, run.acted
        for name, delay in run.nexts.items():
            assert delay is not None and delay <= BOUND_S, (name, delay)
    finally:
        if "a" in procs and procs["a"].proc is not None and procs["a"].proc.poll() is None:
            procs["a"].proc.send_signal(signal.SIGCONT)
        for ch in channels.values():
            ch.close()
        for p in reversed(list(procs.values())):
            p.stop()
