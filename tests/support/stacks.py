"""Stacks for tests: the gateway with the services it calls (wall, rules, scoring), either
served in-process on loopback ports (servicer tests) or as real processes
(``infra.supervisor.ServiceProcess``, integration and end-to-end tests); the gateway's
TableManager wired to in-process adapters without gRPC; matchmaking served with a fake
allocator and a manual clock."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
from mahjong.gateway.v1 import gateway_pb2_grpc

from devkit.stack import GATEWAY_STACK, LocalStack
from infra.config import ServiceSpec
from infra.ports import AUTO_PORT
from infra.server import RunningServer
from infra.supervisor import ServiceProcess, addr_flags
from services.gateway.bots import engine_policy, make_bot
from services.gateway.domain.session import Ports, Seat
from services.gateway.server import SPEC as GATEWAY
from services.gateway.tables import GatewaySettings, TableManager, TableSpec
from services.matchmaking.server import make_spec as make_matchmaking_spec
from services.rules.server import SPEC as RULES
from services.scoring.server import SPEC as SCORING
from services.wall.server import SPEC as WALL
from shared.ruleset import resolve_ruleset
from tests.doubles.clock import ManualClock
from tests.support import sessions
from tests.support.grpc_server import channel_to, serving
from tests.support.identity import identity_extra, issuer_flags, sign_in
from tests.unit.matchmaking.mm_fakes import FakeAllocator

BACKENDS = ("wall", "rules", "scoring")  # the services the gateway calls


@dataclass
class InProcessGateway:
    """A gateway served in-process, with its server (for its TableManager) and a stub."""

    server: RunningServer
    channel: grpc.Channel
    stub: gateway_pb2_grpc.GatewayServiceStub

    @property
    def store(self):
        """The gateway's store (its tables' event logs, the outbox of reports)."""
        return self.server.resource.manager.store

    @contextlib.contextmanager
    def calling_as(self, caller: str) -> Iterator[gateway_pb2_grpc.GatewayServiceStub]:
        """A stub calling this gateway as ``caller``: a workload's name (its development
        certificate, on the gateway's mutual-TLS internal port: "matchmaking" creates the
        ledger's tables), or "" for a player (server TLS on the public port, as ``stub``)."""
        channel = channel_to(self.server, "gateway", caller, insecure=self.server.config.insecure)
        try:
            yield gateway_pb2_grpc.GatewayServiceStub(channel)
        finally:
            channel.close()


@contextlib.contextmanager
def inprocess_backends() -> Iterator[dict[str, str]]:
    """Wall, rules and scoring served in-process on loopback ports, for gateways to call:
    yields their addresses as gateway flags (``wall_addr``, ``rules_addr``, ``scoring_addr``);
    they stop when the block ends."""
    with contextlib.ExitStack() as stack:
        addrs = {}
        for name, spec in (("wall", WALL), ("rules", RULES), ("scoring", SCORING)):
            server, _ = stack.enter_context(serving(spec))
            addrs[f"{name}_addr"] = server.address
        yield addrs


@contextlib.contextmanager
def inprocess_gateway(
    internal_token: str = "", server_config: dict | None = None, **gateway_extra
) -> Iterator[InProcessGateway]:
    """Wall, rules and scoring served in-process on loopback ports, then a gateway calling them
    with the service flags ``gateway_extra`` (``seat_secret=…``, ``discard_ms=…``; no claim
    window holds unless they say so: ``sessions.NO_HOLD_SETTINGS``) and the bootstrap's
    ``server_config`` (Config fields: ``server_model``, ``keepalive_seconds`` …); every server
    stops when the block ends."""
    with contextlib.ExitStack() as stack:
        addrs = stack.enter_context(inprocess_backends())
        server, channel = stack.enter_context(
            serving(
                GATEWAY,
                internal_token=internal_token,
                extra={**addrs, **sessions.NO_HOLD_SETTINGS, **gateway_extra},
                **(server_config or {}),
            )
        )
        yield InProcessGateway(server, channel, gateway_pb2_grpc.GatewayServiceStub(channel))


SEAT_SECRET = b"s"  # the seat secret of table_manager's managers (to sign seat tokens)


def table_manager(store, ports: Ports, *, seed: int, on_event=None, **settings) -> TableManager:
    """A gateway's TableManager on ``store`` and ``ports`` whose bots play at random (seeded
    ``seed``), telling ``on_event`` of each event; ``settings`` are GatewaySettings fields
    (``replica_id``, ``bot_delay_ms`` …) besides the seat secret, SEAT_SECRET (no claim window
    holds unless they say so)."""
    return TableManager(
        store,
        ports,
        GatewaySettings(
            secret=SEAT_SECRET,
            **{**sessions.NO_HOLD_SETTINGS, **sessions.NO_PAUSE_SETTINGS, **settings},
        ),
        policy=engine_policy(make_bot("random", seed=seed)),
        on_event=on_event,
    )


def table_spec(seats: list[Seat] | None = None, **fields) -> TableSpec:
    """A TableSpec (a CreateTable as the TableManager takes it) for ``seats`` (four bots
    ``b0`` … ``b3`` unless given): shanghai-qiaoma, stake 1, one hand, seat 0 deals, no request
    id, no tag and no claim window holds (``sessions.NO_HOLDS``); ``fields`` replace any of
    these or set others (``report_hands`` …)."""
    defaults = {
        "request_id": "",
        "ruleset": resolve_ruleset(sessions.RULESET, sessions.NO_HOLDS),
        "ruleset_name": sessions.RULESET,
        "overrides": dict(sessions.NO_HOLDS),
        "stake": 1,
        "max_hands": 1,
        "tag": "",
        "first_dealer": 0,
    }
    if seats is None:
        seats = sessions.seats()
    return TableSpec(seats=seats, **{**defaults, **fields})


def matchmaking_spec(allocator=None, clock=None) -> ServiceSpec:
    """Matchmaking for servicer tests (``serving(matchmaking_spec())``): tables go to
    ``allocator`` (a new FakeAllocator unless given), time is ``clock`` (a ManualClock unless
    given) and nothing ticks in the background: a test calls ``tick()`` itself."""
    allocator = allocator if allocator is not None else FakeAllocator()
    spec = make_matchmaking_spec(
        allocator_factory=lambda _cfg: allocator,
        clock=clock if clock is not None else ManualClock(),
        ticking=False,
    )
    inner = spec.add_to_server

    def add_to_server(server, config):
        # Players sign in with the test issuer's ID tokens unless a test configures others.
        for key, value in identity_extra().items():
            config.extra.setdefault(key, value)
        # Every test player joins from loopback: one table may seat them all, unless a test
        # of that rule (--queue-one-per-address) sets it.
        config.extra.setdefault("queue_one_per_address", False)
        return inner(server, config)

    spec.add_to_server = add_to_server
    return spec


def queued_table(stub, mm, alloc, timeout: float = 10.0) -> tuple[str, str, list[str]]:
    """Four new players queue on matchmaking (``stub``, a player's), ``mm`` ticks and ``alloc``
    (a FakeAllocator) gets their table: (table id, tag, player ids by seat)."""
    from mahjong.matchmaking.v1 import matchmaking_pb2 as pb

    tokens = [sign_in(stub, n)[1] for n in "ABCD"]
    for tok in tokens:
        stub.JoinQueue(pb.JoinQueueRequest(session_token=tok), timeout=timeout)
    mm.tick()
    ((request, table),) = alloc.tables.values()
    return table.table_id, request.tag, [s.player_id for s in request.seats]


def table_fees(alloc, table_id: str) -> list[int]:
    """The room service fee (台费) a gateway reports for each seat of a table ``alloc`` (a
    FakeAllocator) created: the table's fee at a player's seat, 0 at a bot's."""
    request = alloc.by_table(table_id)
    return [0 if s.bot else request.fee_per_hand for s in request.seats]


def service_process(
    name: str,
    log_dir: Path,
    *,
    store_url: str = "memory://",
    extra: Iterable[str] = (),
    metrics: bool = False,
    log_name: str | None = None,
) -> ServiceProcess:
    """Service ``name`` as a child process (not started yet) on ports the OS picks
    (``proc.served`` names them once ``wait_ready`` returned), with /metrics on another such port
    when ``metrics`` (else none), logging to ``log_dir/<log_name or name>.log``; ``extra`` are
    more ``mahjong serve`` flags. A matchmaking process trusts the test issuer
    (:mod:`tests.support.identity`) unless ``extra`` names its issuers; a gateway holds no claim
    window (``sessions.NO_HOLD_FLAGS``) unless ``extra`` sets its holds."""
    flags = list(extra)
    if name == "matchmaking" and "--issuers" not in flags:
        flags += issuer_flags()
    if name == "gateway" and "--claim-window-floor-ms" not in flags:
        flags += sessions.NO_HOLD_FLAGS
    if name == "gateway" and "--between-hands-ms" not in flags:
        flags += sessions.NO_PAUSE_FLAGS
    return ServiceProcess(
        name,
        0,
        AUTO_PORT if metrics else 0,
        store_url,
        flags,
        log_path=log_dir / f"{log_name or name}.log",
    )


def start_services(
    procs: dict[str, ServiceProcess], log_dir: Path, names: Iterable[str] = BACKENDS
) -> None:
    """Start each of ``names`` as a process with a memory store, added to ``procs`` as it
    starts (so the caller's clean-up stops whatever did start); nobody waits for them yet."""
    for name in names:
        procs[name] = service_process(name, log_dir).start()


def backend_flags(procs: dict[str, ServiceProcess]) -> list[str]:
    """``--wall-addr … --rules-addr … --scoring-addr …``: where a gateway process finds the
    backends in ``procs``."""
    return addr_flags({name: procs[name] for name in BACKENDS})


def local_stack(
    services: Iterable[str] = GATEWAY_STACK, *, extra_args: dict[str, list[str]] | None = None
) -> LocalStack:
    """:class:`devkit.stack.LocalStack` as the tests run it: its gateway holds no claim window
    (``sessions.NO_HOLD_FLAGS``) unless ``extra_args`` sets its holds. A stack as ``mahjong
    play --local`` starts it holds them (RULES §4), which would add 0.6-1 s to every discard
    of these tests' tables with a person seated."""
    args = {name: list(flags) for name, flags in (extra_args or {}).items()}
    gateway = args.setdefault("gateway", [])
    if "--claim-window-floor-ms" not in gateway:
        gateway += sessions.NO_HOLD_FLAGS
    if "--between-hands-ms" not in gateway:
        gateway += sessions.NO_PAUSE_FLAGS
    return LocalStack(tuple(services), extra_args=args)
