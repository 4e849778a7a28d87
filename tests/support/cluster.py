"""A cluster on loopback for the cluster test: every service a real process at more than one
replica, all on one PostgreSQL database, each client calling a list of replicas
(``ipv4:127.0.0.1:P1,127.0.0.1:P2`` with round robin: a call goes to the next replica that
answers, so a stream broken by a dead replica resumes on another); the services call each
other's internal (mutual-TLS) ports, the clients the public ones as players (server TLS, the
development CA); and the scripted clients:
a player that notes every acknowledged action, and a tournament entrant that follows
WatchTournament (on any matchmaking replica) and plays each table it is seated at."""

from __future__ import annotations

import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as mm_pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc

from services.gateway.client import RemotePlayer
from shared.addresses import INTERNAL_PORTS
from shared.supervisor import ServiceProcess, free_port
from shared.tls import name_override
from tests.support.stacks import service_process
from tests.support.tls import as_player

# How many replicas of each service, in start order (the gateways and matchmaking call the
# ones before them).
REPLICAS = {"wall": 2, "rules": 2, "scoring": 2, "gateway": 3, "matchmaking": 2}
# A client notices a paused replica's connection within keepalive + timeout (servers accept a
# ping every 10 s at most).
CLIENT_OPTIONS = [
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 3_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # a replica that died is tried again soon after it comes back
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 1_000),
]


def targets(addresses: list[str], shuffle: random.Random | None = None) -> str:
    """A gRPC target naming every address (in a random order when ``shuffle`` is given, so
    each client starts on a random replica)."""
    addrs = list(addresses)
    if shuffle is not None:
        shuffle.shuffle(addrs)
    return "ipv4:" + ",".join(addrs)


def player_channel(target: str) -> grpc.Channel:
    """A player's channel (server TLS, trusting the development CA) to ``target``: one address,
    or a list of them (:func:`targets`), whose certificates are then checked for ``localhost``
    (a name every development certificate holds), as the list itself names no host."""
    options = [*CLIENT_OPTIONS, *(name_override("localhost") if "," in target else ())]
    return as_player(target, options)


def client_channel(addresses: list[str], shuffle: random.Random | None = None) -> grpc.Channel:
    return player_channel(targets(addresses, shuffle))


@dataclass
class Cluster:
    """The replicas of every service (``wall-1``, ``wall-2``, … ``matchmaking-2``) on one
    store ``url``, logging to ``tmp``; ``flags`` are more flags of a service's replicas."""

    tmp: Path
    url: str
    flags: dict[str, list[str]] = field(default_factory=dict)
    procs: dict[str, ServiceProcess] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    # The mutual-TLS ports of the replicas of services players call too (gateway, matchmaking).
    internal_ports: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for service, count in REPLICAS.items():
            for i in range(1, count + 1):
                self.ports[f"{service}-{i}"] = free_port()
                if service in INTERNAL_PORTS:
                    self.internal_ports[f"{service}-{i}"] = free_port()

    def names(self, service: str) -> list[str]:
        return [f"{service}-{i}" for i in range(1, REPLICAS[service] + 1)]

    def addresses(self, service: str) -> list[str]:
        """The replicas' public ports (where players call)."""
        return [f"127.0.0.1:{self.ports[n]}" for n in self.names(service)]

    def internal_addresses(self, service: str) -> list[str]:
        """Where the other services call the replicas (their only port, when one)."""
        ports = {**self.ports, **self.internal_ports}
        return [f"127.0.0.1:{ports[n]}" for n in self.names(service)]

    def _args(self, service: str, name: str) -> list[str]:
        calls = {
            "gateway": ("wall", "rules", "scoring", "matchmaking"),
            "matchmaking": ("gateway",),
        }.get(service, ())
        args = [
            f for dep in calls for f in (f"--{dep}-addr", targets(self.internal_addresses(dep)))
        ]
        if service in ("gateway", "matchmaking"):
            args += ["--replica-id", name]
        return [*args, *self.flags.get(service, [])]

    def process(self, name: str) -> ServiceProcess:
        """Replica ``name`` (not started) on its ports."""
        service = name.rsplit("-", 1)[0]
        proc = service_process(
            service,
            self.tmp,
            store_url=self.url,
            extra=self._args(service, name),
            port=self.ports[name],
            log_name=name,
        )
        proc.internal_port = self.internal_ports.get(name, 0)
        return proc

    def start(self) -> Cluster:
        for service in REPLICAS:  # the replicas of a service start at once, on one database
            names = self.names(service)
            for name in names:
                self.procs[name] = self.process(name).start()
            for name in names:
                self.procs[name].wait_ready(90)
        return self

    def restart(self, name: str) -> float:
        """SIGTERM replica ``name``, then start it again on the same port; seconds it was away."""
        began = time.monotonic()
        self.procs[name].stop()
        self.procs[name] = self.process(name).start().wait_ready(60)
        return time.monotonic() - began

    def logs(self, chars: int = 2000) -> str:
        out = []
        for name in self.procs:
            path = self.tmp / f"{name}.log"
            if path.exists():
                out.append(f"--- {name}\n{path.read_text(errors='replace')[-chars:]}")
        return "\n".join(out)

    def stop(self) -> None:
        for p in reversed(list(self.procs.values())):
            p.stop()


@dataclass(frozen=True)
class Ack:
    """An action the gateway acknowledged: its request's last sequence number and the answer."""

    request_id: str
    last_sequence: int
    sequence: int
    replayed: bool


class NotingPlayer(RemotePlayer):
    """A RemotePlayer that keeps every acknowledged action (``acks``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.acks: list[Ack] = []

    def act(self, action, *, request_id: str = ""):
        rid = request_id or f"{self.name}-{uuid.uuid4()}"
        last = self.last_sequence
        resp = super().act(action, request_id=rid)
        if resp is not None:
            self.acks.append(Ack(rid, last, resp.sequence, resp.replayed))
        return resp


@dataclass
class Played:
    """One seat a scripted client played: the table, the seat (0-3) and its player."""

    table_id: str
    seat: int
    player: NotingPlayer


def play(channel: grpc.Channel, table_id: str, token: str, seat: int, name: str) -> Played:
    """Play one seat to the table's end over ``channel``."""
    player = NotingPlayer(
        channel, table_id, token, seat=seat, name=name, timeout=4.0, reconnect_for=60.0
    )
    player.run()
    return Played(table_id, seat, player)


class Entrant(threading.Thread):
    """A person in a tournament: watches it on matchmaking at ``mm`` (a gRPC target; watching
    again when its replica dies or restarts) and plays every table it is seated at, through
    ``gateway`` (a target: any replica) or else the gateway the assignment names, until the
    tournament finishes or ``deadline`` (monotonic) passes."""

    def __init__(
        self, mm: str, tournament_id: str, token: str, name: str, deadline: float, gateway=""
    ) -> None:
        super().__init__(daemon=True, name=f"entrant-{name}")
        self.mm, self.gateway = mm, gateway
        self.tid, self.token, self.deadline = tournament_id, token, deadline
        self.label = name
        self.played: list[Played] = []
        self.watches = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def _play(self, a: mm_pb.Assignment) -> None:
        target = self.gateway or a.gateway_address
        with player_channel(target) as channel:
            self.played.append(play(channel, a.table_id, a.seat_token, a.seat - 1, self.label))

    def _run(self) -> None:
        seen: set[str] = set()
        while time.monotonic() < self.deadline:
            self.watches += 1
            req = mm_pb.WatchTournamentRequest(tournament_id=self.tid, player_token=self.token)
            try:
                with player_channel(self.mm) as channel:
                    stub = mm_grpc.MatchmakingServiceStub(channel)
                    for msg in stub.WatchTournament(req, timeout=self.deadline - time.monotonic()):
                        a = msg.assignment
                        if a.table_id and a.table_id not in seen:
                            seen.add(a.table_id)
                            self._play(a)
                        if msg.tournament.state == mm_pb.TOURNAMENT_STATE_FINISHED:
                            return
            except grpc.RpcError as exc:
                if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                    raise
                time.sleep(0.2)  # its matchmaking replica died or restarts: watch again
        raise TimeoutError(f"tournament {self.tid} did not finish for {self.label}")
