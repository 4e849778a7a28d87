"""``mahjong serve matchmaking``: the MatchmakingService over a store, creating tables on the
gateway given by ``--gateway-addr``. A background ticker drives the timers (queue bot fill, room
Start timers) and the work waiting on the gateway; with several replicas on one store only the
one holding the ticker duty ticks (:mod:`.storage.duty`, a store lease of ``--lease-ms``).

It runs on the asyncio server model by default (:mod:`.adapters.aio_servicer`: an open
WatchTournament or WatchAssignments waits on the event loop, holding no thread, on the gRPC port and
on the web port alike); ``--server-model threads`` runs the threaded one (each open stream holds a
handler thread, and a web stream a thread of the web port)."""

from __future__ import annotations

import argparse
import dataclasses
import socket
import threading
from collections.abc import Callable
from typing import Any

import grpc
import structlog
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from services.matchmaking.adapters import call_guard
from services.matchmaking.adapters.aio_servicer import AsyncMatchmakingServicer
from services.matchmaking.adapters.gateway_client import GatewayAllocator
from services.matchmaking.adapters.servicer import MatchmakingServicer
from services.matchmaking.domain.clock import Clock, system_clock
from services.matchmaking.domain.economy import items, ledger
from services.matchmaking.domain.players import issuers
from services.matchmaking.domain.tables.allocator import TableAllocator
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from services.matchmaking.storage.duty import TickerDuty
from shared.addresses import DEFAULT_PORTS, INTERNAL_PORTS, WEB_PORTS, default_internal_address
from shared.errors import InvalidArgument
from shared.server import Config, ServiceSpec, open_config_store, tls_files
from shared.tls import OPERATOR
from shared.web import check_web_port

CALLS = ("gateway",)
DEFAULT_MAX_WORKERS = 256
DEFAULT_LEASE_MS = 10_000
SERVICE_NAME = "mahjong.matchmaking.v1.MatchmakingService"
INTERNAL_METHODS = frozenset(
    {"RecordHand", "TableFinished", "CheckSession", "HoldDoubleCard", "ReleaseDoubleCard"}
)
log = structlog.get_logger("mahjong.matchmaking")
DEFAULTS = MatchmakingConfig()  # the flags' defaults are the configuration's


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
        default=DEFAULTS.bot_fill_seconds,
        help="a queue's oldest ticket waits this long before bots fill the empty seats",
    )
    p.add_argument(
        "--ready-seconds",
        type=float,
        default=-1.0,
        help="room Start timer (s); negative = the ruleset's timers.ready_seconds (15)",
    )
    p.add_argument("--starting-silver", type=int, default=DEFAULTS.starting_silver)
    p.add_argument("--free-room-cards", type=int, default=DEFAULTS.free_room_cards)
    p.add_argument(
        "--token-secret",
        default="",
        help="the secret sealing CreateTable request ids (default: generated once and kept in "
        "the store)",
    )
    add_economy_arguments(p)
    add_identity_arguments(p)
    call_guard.add_arguments(p)
    add_web_arguments(p)


def add_economy_arguments(p: argparse.ArgumentParser) -> None:
    """The economy's flags (RULES-items §1, §4): item prices and the bot-net alert."""
    defaults = DEFAULTS.item_prices
    for asset in ledger.ITEMS:
        flag = asset.replace("_", "-")
        p.add_argument(
            f"--items-{flag}-price",
            type=int,
            default=getattr(defaults, asset),
            help=f"silver per {asset} in BuyItems (0 = not for sale)",
        )
    p.add_argument(
        "--bot-net-alert",
        type=int,
        default=DEFAULTS.bot_net_alert,
        help="house.bot_net_alert: a player's net silver against the house's bot seats in one "
        "day above this raises the reconciliation alert",
    )


def add_identity_arguments(p: argparse.ArgumentParser) -> None:
    """Identity flags (issue 21): the issuers trusted, guests, sessions, production."""
    p.add_argument(
        "--issuers",
        default="",
        help="the OpenID Connect issuers trusted for SignIn: ';'-separated items "
        "'iss=URL,aud=CLIENT_ID,jwks=URL[,algs=RS256+ES256+EdDSA][,leeway=60][,refetch=30]' "
        "(prefer MAHJONG_MATCHMAKING_ISSUERS); none = nobody signs in but guests",
    )
    p.add_argument(
        "--allow-guests",
        action="store_true",
        help="SignInAsGuest: sessions without an issuer, no grant, bot tables only (off by "
        "default; on in `mahjong run`)",
    )
    p.add_argument(
        "--session-lifetime-seconds",
        type=int,
        default=DEFAULTS.session_lifetime_seconds,
        help="how long a session token is valid (then RefreshSession)",
    )
    p.add_argument(
        "--refresh-lifetime-seconds",
        type=int,
        default=DEFAULTS.refresh_lifetime_seconds,
        help="how long a refresh token is valid (then SignIn again)",
    )
    p.add_argument(
        "--session-key",
        default="",
        help="PEM file of the Ed25519 key signing session tokens (the gateway gets its public "
        "half: --session-public-key); default: generated once and kept in the store",
    )
    p.add_argument(
        "--production",
        action="store_true",
        help="a production server: refuses to start with the development issuer",
    )


class Ticker:
    """Calls ``fn`` every ``seconds`` on a daemon thread until closed, while ``duty.held()``
    (this replica's turn among those on the store); errors are logged. Closing releases the
    duty, after the last tick."""

    def __init__(
        self,
        fn: Callable[[], None],
        seconds: float,
        duty: TickerDuty,
        idle: Callable[[], None] = lambda: None,
    ) -> None:
        self._fn = fn
        self._idle = idle  # called instead while another replica holds the duty
        self._seconds = seconds
        self._duty = duty
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="matchmaking-ticker", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Tick now rather than at the end of the period (work is waiting: a round settled)."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._seconds)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                if self._duty.held():
                    self._fn()
                else:
                    self._idle()
            except Exception as exc:  # a tick must never kill the ticker
                log.exception("tick_failed", error=repr(exc))

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
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


def identity_config(extra: dict[str, Any]) -> dict[str, Any]:
    """The identity fields of :class:`MatchmakingConfig` from the flags; the development
    issuer on a production server is refused (InvalidArgument: the server does not start)."""
    found = issuers.parse_issuers(extra.get("issuers") or "")
    issuers.refuse_dev_issuer(found, bool(extra.get("production")))
    lifetime = int(extra.get("session_lifetime_seconds") or DEFAULTS.session_lifetime_seconds)
    refresh = int(extra.get("refresh_lifetime_seconds") or DEFAULTS.refresh_lifetime_seconds)
    if not 60 <= lifetime <= refresh:
        raise InvalidArgument(
            f"--session-lifetime-seconds {lifetime} must be at least 60 and at most "
            f"--refresh-lifetime-seconds {refresh}",
            field="session_lifetime_seconds",
        )
    return {
        "issuers": found,
        "allow_guests": bool(extra.get("allow_guests")),
        "session_lifetime_seconds": lifetime,
        "refresh_lifetime_seconds": refresh,
        "session_key_file": extra.get("session_key") or "",
    }


def mm_config(extra: dict[str, Any]) -> MatchmakingConfig:
    ready = extra.get("ready_seconds", -1.0)
    return MatchmakingConfig(
        **identity_config(extra),
        token_secret=(extra.get("token_secret") or "").encode() or None,
        starting_silver=extra.get("starting_silver", DEFAULTS.starting_silver),
        free_room_cards=extra.get("free_room_cards", DEFAULTS.free_room_cards),
        bot_fill_seconds=extra.get("bot_fill_seconds", DEFAULTS.bot_fill_seconds),
        ready_seconds=None if ready is None or ready < 0 else ready,
        claim_ms=int(extra.get("lease_ms", DEFAULT_LEASE_MS)),
        item_prices=item_prices(extra),
        bot_net_alert=int(extra.get("bot_net_alert", DEFAULTS.bot_net_alert)),
    )


def item_prices(extra: dict[str, Any]) -> items.ItemPrices:
    """The prices of the ``--items-*-price`` flags; a price out of range stops the server."""
    defaults = DEFAULTS.item_prices
    try:
        return items.ItemPrices(
            **{a: int(extra.get(f"items_{a}_price", getattr(defaults, a))) for a in ledger.ITEMS}
        )
    except ValueError as exc:
        raise InvalidArgument(str(exc), field="items") from None


def make_add_to_server(
    allocator_factory: Callable[[Config], TableAllocator] | None = None,
    clock: Clock = system_clock,
    ticking: bool = True,
    internal: frozenset[str] = INTERNAL_METHODS,
):
    """The ``add_to_server`` of a spec; tests pass a fake allocator and a manual clock.
    ``internal``: the methods only the deployment calls (no flood control; request ids keyed
    by the caller's workload)."""

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
        aio = isinstance(server, grpc.aio.Server)
        mm = Matchmaking(store, allocator, clock, mm_config(config.extra))
        calls = MatchmakingServicer(mm)
        # Flood control, then request ids, before every handler (call_guard).
        servicer = call_guard.guarded(calls, mm, config, internal)
        served: Any = AsyncMatchmakingServicer(servicer, calls) if aio else servicer
        pb_grpc.add_MatchmakingServiceServicer_to_server(served, server)

        def tick() -> None:
            mm.tick()
            servicer.requests.sweep_if_due()

        ticker = None
        if ticking:
            replica = config.extra.get("replica_id") or f"{socket.gethostname()}:{config.port}"
            lease_ms = int(config.extra.get("lease_ms", DEFAULT_LEASE_MS))
            duty = TickerDuty(store, replica, lease_ms)
            # A replica without the duty counts no stalled tournament (the holder does).
            ticker = Ticker(
                tick,
                config.extra.get("tick_seconds", 0.25),
                duty,
                idle=lambda: mm.metrics.tournaments_stalled(0),
            )
            mm.reports.wake_ticker = ticker.wake
        closer = getattr(allocator, "close", None)
        web = web_port(served, config, internal)
        resources = Resources(
            mm,
            web,
            served if aio else None,
            ticker,
            *([allocator] if callable(closer) else []),
            store,
        )
        resources.web_port = web.port if web is not None else 0  # type: ignore[attr-defined]
        return resources

    return add_to_server


# Web streams matchmaking holds at once by default (--web-max-streams): on the asyncio model
# a connection and a suspended coroutine each (shared/web.py's default, 20,000), on the threaded
# one a thread each.
WEB_MAX_STREAMS_THREADS = 1024
WEB_MAX_STREAMS_BY_MODEL = -1  # the flag's default: the server model's number above


def add_web_arguments(p: argparse.ArgumentParser) -> None:
    """The web port's flags (``--web-port``, ``--web-cors-origins`` …: shared/web.py)."""
    from shared import web

    # Its streams (WatchAssignments, WatchTournament: a few per player) wait on the event loop
    # (asyncio model) or each in a thread (threads): the default follows the server model.
    web.add_web_arguments(
        p, WEB_PORTS["matchmaking"], what="the public methods", max_streams=WEB_MAX_STREAMS_BY_MODEL
    )


def web_max_streams(config: Config, aio: bool) -> int:
    """``--web-max-streams``, its default (negative) by the server model."""
    from shared import web

    given = int(config.extra.get("web_max_streams", WEB_MAX_STREAMS_BY_MODEL))
    if given >= 0:
        return given
    return web.DEFAULT_MAX_STREAMS if aio else WEB_MAX_STREAMS_THREADS


def web_port(servicer: Any, config: Config, internal: frozenset[str]):
    """Matchmaking's web port for browsers (the web table signs in there), started when
    ``--web-port`` asks for one (else None): the public methods of ``servicer`` over Connect
    and gRPC-Web, behind the same guard as the gRPC port (flood control per player and
    address, request ids). ``servicer`` is the gRPC port's own: on the asyncio model the
    coroutine one, served on the server's event loop (a browser's watch stream holds no
    thread); on the threaded model the guarded one (a thread per open stream). The
    deployment's and the operator's methods (``internal``) are not served there: a browser has
    no workload certificate."""
    from shared import web

    descriptor = pb.DESCRIPTOR.services_by_name["MatchmakingService"]
    public = [m.name for m in descriptor.methods if m.name not in internal | INTERNAL_METHODS]
    aio = isinstance(servicer, AsyncMatchmakingServicer)
    extra = {**config.extra, "web_max_streams": web_max_streams(config, aio)}
    config = dataclasses.replace(config, extra=extra)
    return web.web_server(
        servicer,
        descriptor,
        config,
        tls_files(config, "matchmaking"),
        service="matchmaking",
        methods=public,
    )


def make_spec(**kwargs: Any) -> ServiceSpec:
    port, metrics = DEFAULT_PORTS["matchmaking"]
    callers = {method: frozenset({"gateway"}) for method in INTERNAL_METHODS}
    # House-funded prizes: an operator's certificate only (a player may not fund a prize).
    callers["AddTournamentPrize"] = frozenset({OPERATOR})
    # Minting assets and reading the house's books: an operator's certificate only.
    callers["GrantAssets"] = frozenset({OPERATOR})
    callers["GetReconciliation"] = frozenset({OPERATOR})
    # A stalled tournament's retry, and ending one with every entry refunded: operators only.
    callers["RetryTournament"] = frozenset({OPERATOR})
    callers["AbortTournament"] = frozenset({OPERATOR})
    return ServiceSpec(
        name="matchmaking",
        default_port=port,
        default_metrics_port=metrics,
        add_to_server=make_add_to_server(internal=frozenset(callers), **kwargs),
        service_names=[SERVICE_NAME],
        add_arguments=add_arguments,
        # asyncio: an open stream waits on the event loop (--max-streams), the workers run
        # calls' blocking work; threads: each open WatchAssignments / WatchTournament holds one.
        server_models=("asyncio", "threads"),
        default_max_workers=DEFAULT_MAX_WORKERS,
        # The gateway's reports move silver: only the gateway's certificate (and the internal
        # token, when configured) may send them, on the mutual-TLS internal port.
        internal_methods=INTERNAL_METHODS,
        callers=callers,
        default_internal_port=INTERNAL_PORTS["matchmaking"],
        check_config=check_web_port("matchmaking"),
    )


SPEC = make_spec()
