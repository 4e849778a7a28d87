"""A cluster on loopback for the cluster test: every service a real process at more than one
replica, all on one PostgreSQL database, each client calling a list of replicas
(``ipv4:127.0.0.1:P1,127.0.0.1:P2`` with round robin: a call goes to the next replica that
answers, so a stream broken by a dead replica resumes on another); the services call each
other's internal (mutual-TLS) ports, the clients the public ones as players (server TLS, the
development CA); and the scripted clients:
a player that notes every acknowledged action, and a tournament entrant that follows
WatchTournament (on any matchmaking replica) and plays each table it is seated at.

**Ports and addresses.** Every replica binds ports the OS picks and names them in its port file
(:mod:`infra.ports`, read by :class:`infra.supervisor.ServiceProcess`): no port is chosen
before the process that binds it holds it, so no other process (another test worker, an
outgoing connection's ephemeral port) can take it in between. Callers learn where the replicas
are from address files the :class:`Cluster` keeps (:class:`tests.support.address_book.
AddressBook`, ``--wall-addr @PATH``), as DNS would tell them in a deployment: one per service
for the other services (its replicas' internal ports), one per player channel (the public ports
in an order of the channel's own, so clients start on different replicas). A caller looks at
its file on every call and follows it when it changes:

* The gateway and matchmaking call each other (the gateways report hands to matchmaking's
  internal port; matchmaking creates tables on the gateways'), so neither can be given the
  other's ports at start. Each is given the other's address file instead; the gateways start
  first, before matchmaking's file names anyone: until it does, a report fails UNAVAILABLE and
  waits in the gateway's outbox, which retries it (and none is due before matchmaking made a
  table). Matchmaking starts once the gateways are listed.
* A replica that stops (:meth:`Cluster.restart`) or is killed (:meth:`Cluster.kill`) is taken
  out of the files first, so no call made after that goes to its port once it is free (any
  process on the machine may bind a freed port); calls already on it fail and are retried
  elsewhere, as on a pod being deleted. A restarted replica comes back on new ports and is
  listed again once SERVING. (Starting it again on its old port would race with every other
  process binding ports meanwhile: nothing reserves a port between two processes.) A paused
  replica (SIGSTOP) stays listed: it still holds its ports, and noticing that it does not
  answer is the clients' job."""

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

from infra.addresses import is_address_file
from infra.request_ids import with_request_ids
from infra.supervisor import ServiceProcess, stop_all
from infra.tls import name_override
from mahjong_client import RemotePlayer
from tests.support.address_book import AddressBook
from tests.support.stacks import service_process
from tests.support.tls import as_player

# How many replicas of each service, in start order (each calls the ones before it; the
# gateways call matchmaking too, through its address file, written once it is up).
REPLICAS = {"wall": 2, "rules": 2, "scoring": 2, "gateway": 3, "matchmaking": 2}
# The services each service calls.
CALLS = {"gateway": ("wall", "rules", "scoring", "matchmaking"), "matchmaking": ("gateway",)}
# A client notices a paused replica's connection within keepalive + timeout (servers accept a
# ping every 5 s: infra.binding.ACCEPTED_PING_MS).
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


def player_channel(target: str) -> grpc.Channel:
    """A player's channel (server TLS, trusting the development CA) to ``target``: one address,
    a list of them (``ipv4:A,B``) or an address file holding either, whose certificates are
    then checked for ``localhost`` (a name every development certificate holds), as a list
    names no host."""
    several = "," in target or is_address_file(target)
    options = [*CLIENT_OPTIONS, *(name_override("localhost") if several else ())]
    return as_player(target, options)


@dataclass
class Cluster:
    """The replicas of every service (``wall-1``, ``wall-2``, … ``matchmaking-2``) on one
    store ``url``, logging to ``tmp``; ``flags`` are more flags of a service's replicas.
    ``book`` holds the address files that say where the replicas are (see the module's
    docstring)."""

    tmp: Path
    url: str
    flags: dict[str, list[str]] = field(default_factory=dict)
    procs: dict[str, ServiceProcess] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.book = AddressBook(self.tmp / "addresses")

    def names(self, service: str) -> list[str]:
        return [f"{service}-{i}" for i in range(1, REPLICAS[service] + 1)]

    def addresses(self, service: str) -> list[str]:
        """The public ports (where players call) of the service's listed replicas."""
        return self.book.addresses(service)

    def internal_addresses(self, service: str) -> list[str]:
        """Where the other services call the listed replicas (their only port, when one)."""
        return self.book.addresses(service, internal=True)

    def player_target(self, service: str, shuffle: random.Random | None = None) -> str:
        """A player's target for ``service``: an address file of its own, naming the listed
        replicas' public ports (in a random order of its own when ``shuffle`` is given) and
        following them as they change."""
        return self.book.player_target(service, shuffle, self.names(service))

    def _args(self, service: str, name: str) -> list[str]:
        args = [
            f
            for dep in CALLS.get(service, ())
            for f in (f"--{dep}-addr", self.book.service_target(dep))
        ]
        if service in ("gateway", "matchmaking"):
            args += ["--replica-id", name]
        return [*args, *self.flags.get(service, [])]

    def process(self, name: str) -> ServiceProcess:
        """Replica ``name`` (not started) on ports the OS picks."""
        service = name.rsplit("-", 1)[0]
        return service_process(
            service,
            self.tmp,
            store_url=self.url,
            extra=self._args(service, name),
            log_name=name,
        )

    def start(self) -> Cluster:
        for service in REPLICAS:  # the replicas of a service start at once, on one database
            names = self.names(service)
            for name in names:
                self.procs[name] = self.process(name).start()
            for name in names:
                self.book.list(name, self.procs[name].wait_ready(90))
        return self

    def kill(self, name: str) -> None:
        """SIGKILL replica ``name``, taken out of the address files first."""
        self.book.unlist(name)
        proc = self.procs[name].proc
        assert proc is not None
        proc.kill()
        proc.wait()

    def restart(self, name: str) -> float:
        """SIGTERM replica ``name`` (taken out of the address files first), then start it again
        (on new ports) and list it once SERVING; seconds it was away."""
        began = time.monotonic()
        self.book.unlist(name)
        self.procs[name].stop()
        self.procs[name] = self.process(name).start().wait_ready(60)
        self.book.list(name, self.procs[name])
        return time.monotonic() - began

    def logs(self, chars: int = 2000) -> str:
        out = []
        for name in self.procs:
            path = self.tmp / f"{name}.log"
            if path.exists():
                out.append(f"--- {name}\n{path.read_text(errors='replace')[-chars:]}")
        return "\n".join(out)

    def stop(self) -> None:
        stop_all(reversed(list(self.procs.values())))


@dataclass(frozen=True)
class Ack:
    """An action the gateway acknowledged: its request's last sequence number and the answer."""

    request_id: str
    last_sequence: int
    sequence: int
    replayed: bool


class NotingPlayer(RemotePlayer):
    """A RemotePlayer that keeps every acknowledged action (``acks``), when (unix time) it
    first subscribed and when it saw the table finish (``began``, ``finished_at``), when it
    received each event (``received``: time, sequence number) and when it subscribed
    (``subscribed``: time, after_sequence)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.acks: list[Ack] = []
        self.began = self.finished_at = 0.0
        self.received: list[tuple[float, int]] = []
        self.subscribed: list[tuple[float, int]] = []
        subscribe = self.stub.Subscribe

        def noted_subscribe(request, *args, **kwargs):
            self.subscribed.append((time.time(), request.after_sequence))
            return subscribe(request, *args, **kwargs)

        self.stub.Subscribe = noted_subscribe

    def run(self, max_hands: int | None = None):
        self.began = time.time()
        return super().run(max_hands)

    def _handle(self, event) -> None:
        if event.sequence > self.last_sequence:
            self.received.append((time.time(), event.sequence))
        super()._handle(event)
        if self.log.table_finished is not None and not self.finished_at:
            self.finished_at = time.time()

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


def seat_player(
    channel: grpc.Channel, table_id: str, token: str, seat: int, name: str
) -> NotingPlayer:
    """The scripted player of one seat over ``channel`` (not playing yet)."""
    return NotingPlayer(
        channel, table_id, token, seat=seat, name=name, timeout=4.0, reconnect_for=60.0
    )


def play(channel: grpc.Channel, table_id: str, token: str, seat: int, name: str) -> Played:
    """Play one seat to the table's end over ``channel``."""
    player = seat_player(channel, table_id, token, seat, name)
    player.run()
    return Played(table_id, seat, player)


class SeatThread(threading.Thread):
    """One seat played to its table's end in a thread of its own: ``played`` holds it once the
    table finished, ``error`` the exception that ended the play instead (and ``player`` what the
    player saw until then), for the test to report; nothing is lost with the thread."""

    def __init__(self, channel: grpc.Channel, table_id: str, token: str, seat: int, name: str):
        super().__init__(daemon=True, name=f"seat-{name}")
        self.label = name
        self.player = seat_player(channel, table_id, token, seat, name)
        self.table_id, self.seat = table_id, seat
        self.played: list[Played] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.player.run()
        except BaseException as exc:  # reported by the test
            self.error = exc
            return
        self.played.append(Played(self.table_id, self.seat, self.player))


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
        self.trace: list[tuple[float, str]] = []  # (unix time, what happened), for a report

    def note(self, what: str) -> None:
        self.trace.append((time.time(), what))

    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # reported by the test
            self.note(f"ended by {exc!r}")
            self.error = exc

    def _play(self, a: mm_pb.Assignment) -> None:
        target = self.gateway or a.gateway_address
        with player_channel(target) as channel:
            self.played.append(play(channel, a.table_id, a.seat_token, a.seat - 1, self.label))
        log = self.played[-1].player.log
        self.note(f"played {a.table_id}: {len(log.hand_results)} hands, {log.subscribes=}")

    def _run(self) -> None:
        seen: set[str] = set()
        while time.monotonic() < self.deadline:
            self.watches += 1
            self.note(f"watch {self.watches}")
            req = mm_pb.WatchTournamentRequest(tournament_id=self.tid, session_token=self.token)
            try:
                with player_channel(self.mm) as channel:
                    stub = mm_grpc.MatchmakingServiceStub(with_request_ids(channel))
                    for msg in stub.WatchTournament(req, timeout=self.deadline - time.monotonic()):
                        a = msg.assignment
                        if a.table_id and a.table_id not in seen:
                            seen.add(a.table_id)
                            self.note(f"seated at {a.table_id}")
                            self._play(a)
                        if msg.tournament.state == mm_pb.TOURNAMENT_STATE_FINISHED:
                            self.note("tournament finished")
                            return
            except grpc.RpcError as exc:
                self.note(f"watch ended {exc.code().name}: {exc.details()}")
                if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                    raise
                time.sleep(0.2)  # its matchmaking replica died or restarts: watch again
        raise TimeoutError(f"tournament {self.tid} did not finish for {self.label}")
