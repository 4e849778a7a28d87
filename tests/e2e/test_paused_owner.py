"""A paused owner (issue 32): three gateway replicas on PostgreSQL, ``--lease-ms 3000``; a
person's table on A, the person and a spectator connected to A, another spectator to B, each a
:class:`~mahjong_client.player.RemotePlayer` that knows the other replicas. A is SIGSTOPped for
15 s just as the person discards. No server answers from a frozen process, so the clients must
not wait on it (:mod:`mahjong_client.failover`): the discard, sent to A, is hedged on B and
accepted there once A's lease ran out; every client's next event arrives, and the person's act
is accepted, within the lease and a second (4 s), long before A wakes."""

from __future__ import annotations

import signal
import threading
import time

import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from mahjong_client.player import RemotePlayer
from services.gateway.bots import PlanningBot
from tests.support.stacks import backend_flags, service_process, start_services
from tests.support.tables import request_table
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

LEASE_MS = 3000
PAUSE_S = 15.0
BOUND_S = LEASE_MS / 1000 + 1.0


class HeldBot(PlanningBot):
    """Decides its own turn only once the test lets it (``release``), after saying it was
    asked (``asked``)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()
        self.release = threading.Event()

    def own_turn(self, view, options):
        self.asked.set()
        self.release.wait(60)
        return super().own_turn(view, options)


class TimedPlayer(RemotePlayer):
    """Notes when each event arrived (``arrived``) and when each action was accepted."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, on_event=self._note, **kwargs)
        self.arrived: list[float] = []
        self.accepted: list[float] = []

    def _note(self, event) -> None:
        self.arrived.append(time.monotonic())

    def act(self, action, *, request_id: str = ""):
        resp = super().act(action, request_id=request_id)
        if resp is not None:
            self.accepted.append(time.monotonic())
        return resp

    def first_after(self, times: list[float], t: float) -> float | None:
        later = [x - t for x in times if x > t]
        return later[0] if later else None


def test_clients_of_a_paused_owner_go_on_within_the_lease_and_a_second(tmp_path, postgres_url):
    procs: dict = {}
    players: list[RemotePlayer] = []
    channels: dict = {}
    try:
        start_services(procs, tmp_path, ("wall", "rules", "scoring"))
        for p in procs.values():
            p.wait_ready()
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
        a, b, c = channels["a"], channels["b"], channels["c"]
        t = request_table(  # on A, which owns it: the person deals, the table waits on them
            gateway_pb2_grpc.GatewayServiceStub(a),
            [pb.SeatAssignment(player_id="paused"), *[pb.SeatAssignment(bot=True)] * 3],
            max_hands=1,
            first_dealer=common_pb2.SEAT_0,
        )
        bot = HeldBot()
        person = TimedPlayer(  # told the lease: it waits in its decision, not reading yet
            a,
            t.table_id,
            t.seat_tokens[0],
            seat=0,
            policy=bot,
            fallbacks=[b, c],
            name="p",
            lease_s=LEASE_MS / 1000,
        )
        watchers = [
            TimedPlayer.join(first, t.table_id, spectator=True, fallbacks=rest, name=n)
            for n, first, rest in (("on-a", a, [b, c]), ("on-b", b, [c, a]))
        ]
        players = [person, *watchers]
        for p in players:
            p.start()
        assert bot.asked.wait(30), "the person was never prompted"
        deadline = time.monotonic() + 10
        while not all(p.lease.seconds == LEASE_MS / 1000 for p in watchers):  # heartbeats
            assert time.monotonic() < deadline, "a client never heard a heartbeat"
            time.sleep(0.05)
        time.sleep(1.0)  # mid-way between two heartbeats: the streams idle

        procs["a"].proc.send_signal(signal.SIGSTOP)
        paused = time.monotonic()
        try:
            bot.release.set()  # the discard goes to A, paused
            wait_until = paused + PAUSE_S - 1
            while time.monotonic() < wait_until and not (
                person.accepted and all(p.first_after(p.arrived, paused) for p in players)
            ):
                time.sleep(0.05)
            acted = person.first_after(person.accepted, paused)
            nexts = {p.name: p.first_after(p.arrived, paused) for p in players}
            woke_early = procs["a"].proc.poll() is not None
        finally:
            time.sleep(max(0.0, PAUSE_S - (time.monotonic() - paused)))
            procs["a"].proc.send_signal(signal.SIGCONT)
        shown = ", ".join(f"{k} {v:.2f} s" if v else f"{k} none" for k, v in nexts.items())
        print(f"\nafter SIGSTOP of the owner: act accepted {acted} s; next event: {shown}")
        assert not woke_early
        assert acted is not None and acted <= BOUND_S, acted
        for name, delay in nexts.items():
            assert delay is not None and delay <= BOUND_S, (name, delay)
        for p in players:
            assert p.error is None, p.error
    finally:
        if "a" in procs and procs["a"].proc is not None and procs["a"].proc.poll() is None:
            procs["a"].proc.send_signal(signal.SIGCONT)
        for p in players:
            p.close()
        for ch in channels.values():
            ch.close()
        for p in reversed(list(procs.values())):
            p.stop()
