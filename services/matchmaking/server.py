"""``mahjong serve matchmaking``: the MatchmakingService over a store, creating tables on the
gateway given by ``--gateway-addr``. A background ticker drives the timers (queue bot fill, room
Start timers) and the work waiting on the gateway; with several replicas on one store only the
one holding the ticker duty ticks (:mod:`.duty`, a store lease of ``--lease-ms``)."""

from __future__ import annotations

import argparse
import socket
import threading
from collections.abc import Callable
from typing import Any

import structlog
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from shared.addresses import DEFAULT_PORTS, INTERNAL_PORTS, default_internal_address
from shared.server import Config, ServiceSpec, open_config_store, tls_files

from .allocator import TableAllocator
from .clock import Clock, system_clock
from .duty import TickerDuty
from .gateway_client import GatewayAllocator
from .service import Matchmaking, MatchmakingConfig
from .servicer import MatchmakingServicer

CALLS = ("gateway",)
DEFAULT_MAX_WORKERS = 256
DEFAULT_LEASE_MS = 10_000
SERVICE_NAME = "mahjong.matchmaking.v1.MatchmakingService"
INTERNAL_METHODS = frozenset({"RecordHand", "TableFinished"})
log = structlog.get_logger("mahjong.matchmaking")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--gateway-addr",
        default=default_internal_address("gateway"),
        help="the gateway's mutual-TLS internal port (a headless Service's dns:/// name balances)",
    )
    p.add_argument("--gateway-timeout", type=float, default=5.0, help="CreateTable deadline (s)")
    p.add_argument("--tick-seconds", type=float, default=0.25, help="timer resolution (s)")
    p.add_argument(
        "--lease-ms",
        type=int,
        default=DEFAULT_LEASE_MS,
        help="the ticker duty's lease, and a table creation's claim: a replica that stops "
        "renewing them is replaced after this",
    )
    p.add_argument(
        "--replica-id",
        default="",
        help="this replica's ticker-duty owner id (default: host name and port)",
    )
    p.add_argument(
        "--bot-fill-seconds",
        type=float,
        default=30.0,
        help="a queue's oldest ticket waits this long before bots fill the empty seats",
    )
    p.add_argument(
        "--ready-seconds",
        type=float,
        default=-1.0,
        help="room Start timer (s); negative = the ruleset's timers.ready_seconds (15)",
    )
    p.add_argument("--starting-silver", type=int, default=1000)
    p.add_argument("--free-room-cards", type=int, default=3)
    p.add_argument(
        "--token-secret",
        default="",
        help="player-token signing secret (default: generated once and kept in the store)",
    )


class Ticker:
    """Calls ``fn`` every ``seconds`` on a daemon thread until closed, while ``duty.held()``
    (this replica's turn among those on the store); errors are logged. Closing releases the
    duty, after the last tick."""

    def __init__(self, fn: Callable[[], None], seconds: float, duty: TickerDuty) -> None:
        self._fn = fn
        self._seconds = seconds
        self._duty = duty
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="matchmaking-ticker", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._seconds):
            try:
                if self._duty.held():
                    self._fn()
            except Exception as exc:  # a tick must never kill the ticker
                log.exception("tick_failed", error=repr(exc))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._duty.close()


class Resources:
    """What the server closes on shutdown; ``matchmaking`` is the running facade (tests)."""

    def __init__(self, matchmaking: Matchmaking, *closers: Any) -> None:
        self.matchmaking = matchmaking
        self._closers = closers

    def close(self) -> None:
        for c in self._closers:
            if c is not None:
                c.close()


def mm_config(extra: dict[str, Any]) -> MatchmakingConfig:
    ready = extra.get("ready_seconds", -1.0)
    return MatchmakingConfig(
        token_secret=(extra.get("token_secret") or "").encode() or None,
        starting_silver=extra.get("starting_silver", 1000),
        free_room_cards=extra.get("free_room_cards", 3),
        bot_fill_seconds=extra.get("bot_fill_seconds", 30.0),
        ready_seconds=None if ready is None or ready < 0 else ready,
        claim_ms=int(extra.get("lease_ms", DEFAULT_LEASE_MS)),
    )


def make_add_to_server(
    allocator_factory: Callable[[Config], TableAllocator] | None = None,
    clock: Clock = system_clock,
    ticking: bool = True,
):
    """The ``add_to_server`` of a spec; tests pass a fake allocator and a manual clock."""

    def add_to_server(server, config: Config) -> Resources:
        store = open_config_store(config)
        if allocator_factory is None:
            allocator: Any = GatewayAllocator(
                config.extra.get("gateway_addr") or default_internal_address("gateway"),
                timeout=config.extra.get("gateway_timeout", 5.0),
                internal_token=config.internal_token,
                tls=tls_files(config, "matchmaking"),
            )
        else:
            allocator = allocator_factory(config)
        mm = Matchmaking(store, allocator, clock, mm_config(config.extra))
        servicer = MatchmakingServicer(mm)
        pb_grpc.add_MatchmakingServiceServicer_to_server(servicer, server)
        ticker = None
        if ticking:
            replica = config.extra.get("replica_id") or f"{socket.gethostname()}:{config.port}"
            lease_ms = int(config.extra.get("lease_ms", DEFAULT_LEASE_MS))
            duty = TickerDuty(store, replica, lease_ms)
            ticker = Ticker(mm.tick, config.extra.get("tick_seconds", 0.25), duty)
        closer = getattr(allocator, "close", None)
        return Resources(mm, ticker, *([allocator] if callable(closer) else []), store)

    return add_to_server


def make_spec(**kwargs: Any) -> ServiceSpec:
    port, metrics = DEFAULT_PORTS["matchmaking"]
    return ServiceSpec(
        name="matchmaking",
        default_port=port,
        default_metrics_port=metrics,
        add_to_server=make_add_to_server(**kwargs),
        service_names=[SERVICE_NAME],
        add_arguments=add_arguments,
        # WatchAssignments / WatchTournament hold a thread per open stream.
        default_max_workers=DEFAULT_MAX_WORKERS,
        # The gateway's reports move silver: only the gateway's certificate (and the internal
        # token, when configured) may send them, on the mutual-TLS internal port.
        internal_methods=INTERNAL_METHODS,
        callers={method: frozenset({"gateway"}) for method in INTERNAL_METHODS},
        default_internal_port=INTERNAL_PORTS["matchmaking"],
    )


SPEC = make_spec()
