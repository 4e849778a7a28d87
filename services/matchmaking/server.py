"""``mahjong serve matchmaking``: the MatchmakingService over a store, creating tables on the
gateway given by ``--gateway-addr``. A background ticker drives the timers (queue bot fill, room
Start timers) and the work waiting on the gateway; with several replicas on one store only the
one holding the ticker duty ticks (:mod:`.storage.duty`, a store lease of ``--lease-ms``).

It runs on the asyncio server model by default (:mod:`.adapters.aio_servicer`: an open
WatchTournament or WatchAssignments waits on the event loop, holding no thread, on the gRPC port and
on the web port alike); ``--server-model threads`` runs the threaded one (each open stream holds a
handler thread, and a web stream a thread of the web port)."""

from __future__ import annotations

import dataclasses
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import structlog
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.addresses import DEFAULT_PORTS, INTERNAL_PORTS, default_internal_address
from infra.binding import open_config_store, tls_files
from infra.config import Config, ServiceSpec
from infra.settings import from_flags, setting, switch
from infra.tls import OPERATOR
from infra.web import WebPort, WebSettings, check_web_port
from infra.web_calls import DEFAULT_MAX_STREAMS
from services.matchmaking.adapters import call_guard
from services.matchmaking.adapters.aio_servicer import AsyncMatchmakingServicer
from services.matchmaking.adapters.console import CONSOLE_METHODS
from services.matchmaking.adapters.gateway_client import GatewayAllocator
from services.matchmaking.adapters.servicer import MatchmakingServicer
from services.matchmaking.domain.clock import Clock, system_clock
from services.matchmaking.domain.economy import items, ledger
from services.matchmaking.domain.players import issuers
from services.matchmaking.domain.tables.allocator import TableAllocator
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from services.matchmaking.storage.duty import TickerDuty
from shared.errors import InvalidArgument

CALLS = ("gateway",)
DEFAULT_MAX_WORKERS = 256
DEFAULT_LEASE_MS = 10_000
SERVICE_NAME = "mahjong.matchmaking.v1.MatchmakingService"
INTERNAL_METHODS = frozenset(
    {"RecordHand", "TableFinished", "CheckSession", "HoldDoubleCard", "ReleaseDoubleCard"}
)
log = structlog.get_logger("mahjong.matchmaking")


# The defaults the facade runs with (MatchmakingConfig), written once there.
DEFAULTS = MatchmakingConfig()


def _item_price(asset: str) -> Any:
    return setting(
        getattr(DEFAULTS.item_prices, asset),
        f"--items-{asset.replace('_', '-')}-price",
        f"silver per {asset} in BuyItems (0 = not for sale)",
    )


@dataclass(frozen=True)
class MatchmakingSettings:
    """Matchmaking's own flags (:mod:`infra.settings`); the web port's are
    :class:`infra.web.WebSettings`, the call guard's :class:`.call_guard.GuardSettings`."""

    gateway_addr: str = setting(
        "",
        "--gateway-addr",
        "the gateway's mutual-TLS internal port (a headless Service's dns:/// name balances)",
        flag_default=lambda: default_internal_address("gateway"),
        to_setting=lambda addr: addr or default_internal_address("gateway"),
    )
    gateway_timeout: float = setting(5.0, "--gateway-timeout", "CreateTable deadline (s)")
    tick_seconds: float = setting(0.25, "--tick-seconds", "timer resolution (s)")
    lease_ms: int = setting(
        DEFAULT_LEASE_MS,
        "--lease-ms",
        "the ticker duty's lease, and a table creation's claim: a replica that stops "
        "renewing them is replaced after this",
    )
    replica_id: str = setting(
        "", "--replica-id", "this replica's ticker-duty owner id (default: host name and port)"
    )
    bot_fill_seconds: float = setting(
        DEFAULTS.bot_fill_seconds,
        "--bot-fill-seconds",
        "a queue's oldest ticket waits this long before bots fill the empty seats",
    )
    ready_seconds: float = setting(
        -1.0,
        "--ready-seconds",
        "room Start timer (s); negative = the ruleset's timers.ready_seconds (15)",
    )
    starting_silver: int = setting(
        DEFAULTS.starting_silver, "--starting-silver", "silver granted once to a new identity"
    )
    free_room_cards: int = setting(
        DEFAULTS.free_room_cards, "--free-room-cards", "room cards a new player receives"
    )
    token_secret: str = setting(
        "",
        "--token-secret",
        "the secret sealing CreateTable request ids (default: generated once and kept in "
        "the store)",
    )
    queue_one_per_address: bool = setting(
        DEFAULTS.queue_one_per_address,
        "--queue-one-per-address",
        "quick match never seats two players who joined from one client address at one table "
        "(on by default; private rooms among friends are never held to it)",
        parse=switch,
    )
    rooms_one_per_address: bool = setting(
        DEFAULTS.rooms_one_per_address,
        "--rooms-one-per-address",
        "JoinRoom refuses (SAME_ADDRESS) a player from the client address of one seated "
        "already (off by default: friends in a private room may share a connection)",
    )
    # The economy (RULES-items §1, §4): item prices and the bot-net alert.
    items_room_card_price: int = _item_price(ledger.ROOM_CARD)
    items_double_card_price: int = _item_price(ledger.DOUBLE_CARD)
    items_match_card_price: int = _item_price(ledger.MATCH_CARD)
    bot_net_alert: int = setting(
        DEFAULTS.bot_net_alert,
        "--bot-net-alert",
        "house.bot_net_alert: a player's net silver against the house's bot seats in one "
        "day above this raises the reconciliation alert",
    )
    level_fee_units: int = setting(
        DEFAULTS.level_fee_units,
        "--level-fee-units",
        "the room service fee (台费, RULES.md §9a) of quick-match tables in stake units: each "
        "human seat pays the house the level's base chips × this per hand (0 = no fee)",
    )
    # Identity (issue 21): the issuers trusted, guests, sessions, production.
    issuers: str = setting(
        "",
        "--issuers",
        "the OpenID Connect issuers trusted for SignIn: ';'-separated items "
        "'iss=URL,aud=CLIENT_ID,jwks=URL[,algs=RS256+ES256+EdDSA][,leeway=60][,refetch=30]"
        "[,roles=CLAIM]' (roles: the claim whose 'operator' role makes the sign-in an operator's "
        "session; the studio's issuer only) (prefer MAHJONG_MATCHMAKING_ISSUERS); none = nobody "
        "signs in but guests",
    )
    allow_guests: bool = setting(
        False,
        "--allow-guests",
        "SignInAsGuest: sessions without an issuer, no grant, bot tables only (off by "
        "default; on in `mahjong run`)",
    )
    session_lifetime_seconds: int = setting(
        DEFAULTS.session_lifetime_seconds,
        "--session-lifetime-seconds",
        "how long a session token is valid (then RefreshSession)",
    )
    refresh_lifetime_seconds: int = setting(
        DEFAULTS.refresh_lifetime_seconds,
        "--refresh-lifetime-seconds",
        "how long a refresh token is valid (then SignIn again)",
    )
    session_key: str = setting(
        "",
        "--session-key",
        "PEM file of the Ed25519 key signing session tokens (the gateway gets its public "
        "half: --session-public-key); default: generated once and kept in the store",
    )
    production: bool = setting(
        False, "--production", "a production server: refuses to start with the development issuer"
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
    s = from_flags(MatchmakingSettings, extra)
    found = issuers.parse_issuers(s.issuers or "")
    issuers.refuse_dev_issuer(found, s.production)
    lifetime = s.session_lifetime_seconds or DEFAULTS.session_lifetime_seconds
    refresh = s.refresh_lifetime_seconds or DEFAULTS.refresh_lifetime_seconds
    if not 60 <= lifetime <= refresh:
        raise InvalidArgument(
            f"--session-lifetime-seconds {lifetime} must be at least 60 and at most "
            f"--refresh-lifetime-seconds {refresh}",
            field="session_lifetime_seconds",
        )
    return {
        "issuers": found,
        "allow_guests": s.allow_guests,
        "session_lifetime_seconds": lifetime,
        "refresh_lifetime_seconds": refresh,
        "session_key_file": s.session_key or "",
    }


def mm_config(extra: dict[str, Any]) -> MatchmakingConfig:
    s = from_flags(MatchmakingSettings, extra)
    return MatchmakingConfig(
        **identity_config(extra),
        token_secret=(s.token_secret or "").encode() or None,
        starting_silver=s.starting_silver,
        free_room_cards=s.free_room_cards,
        bot_fill_seconds=s.bot_fill_seconds,
        ready_seconds=None if s.ready_seconds < 0 else s.ready_seconds,
        claim_ms=s.lease_ms,
        item_prices=item_prices(s),
        bot_net_alert=s.bot_net_alert,
        level_fee_units=_fee_units(s.level_fee_units),
        queue_one_per_address=s.queue_one_per_address,
        rooms_one_per_address=s.rooms_one_per_address,
    )


def _fee_units(units: int) -> int:
    """--level-fee-units: 0-1000 stake units (a negative fee would pay seats out of the house's
    silver; above 1000 a hand's fee passes 20 loss caps); anything else stops the server."""
    if not 0 <= units <= 1000:
        raise InvalidArgument(
            f"--level-fee-units {units} is out of range 0-1000", field="level_fee_units"
        )
    return units


def item_prices(s: MatchmakingSettings) -> items.ItemPrices:
    """The prices of the ``--items-*-price`` flags; a price out of range stops the server."""
    try:
        return items.ItemPrices(**{a: getattr(s, f"items_{a}_price") for a in ledger.ITEMS})
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
        own = from_flags(MatchmakingSettings, config.extra)
        if allocator_factory is None:
            allocator: Any = GatewayAllocator(
                own.gateway_addr,
                timeout=own.gateway_timeout,
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
            replica = own.replica_id or f"{socket.gethostname()}:{config.port}"
            duty = TickerDuty(store, replica, own.lease_ms)
            # A replica without the duty counts no stalled tournament (the holder does).
            ticker = Ticker(
                tick,
                own.tick_seconds,
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
# a connection and a suspended coroutine each (infra/web.py's default, 20,000), on the threaded
# one a thread each.
WEB_MAX_STREAMS_THREADS = 1024
WEB_MAX_STREAMS_BY_MODEL = -1  # the flag's default: the server model's number above


# Its streams (WatchAssignments, WatchTournament: a few per player) wait on the event loop
# (asyncio model) or each in a thread (threads): the default follows the server model.
WEB = WebPort(what="the public methods", max_streams=WEB_MAX_STREAMS_BY_MODEL)


def web_max_streams(config: Config, aio: bool) -> int:
    """``--web-max-streams``, its default (negative) by the server model."""
    given = int(config.extra.get("web_max_streams", WEB.max_streams))
    if given >= 0:
        return given
    return DEFAULT_MAX_STREAMS if aio else WEB_MAX_STREAMS_THREADS


def web_port(servicer: Any, config: Config, internal: frozenset[str]):
    """Matchmaking's web port for browsers (the web table signs in there), started when
    ``--web-port`` asks for one (else None): the public methods of ``servicer`` over Connect
    and gRPC-Web, behind the same guard as the gRPC port (flood control per player and
    address, request ids). ``servicer`` is the gRPC port's own: on the asyncio model the
    coroutine one, served on the server's event loop (a browser's watch stream holds no
    thread); on the threaded model the guarded one (a thread per open stream). The
    deployment's and the operator's certificate methods (``internal``) are not served there: a
    browser has no workload certificate — except the console's, which answer an operator's
    session token there instead (:mod:`infra.operator_calls`)."""
    from infra import web

    descriptor = pb.DESCRIPTOR.services_by_name["MatchmakingService"]
    public = [m.name for m in descriptor.methods if m.name not in internal | INTERNAL_METHODS]
    # The console also, for an operator's session (the handlers verify it: infra.operator_calls).
    public += CONSOLE_METHODS
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
    # Who may be colluding with whom: operators only.
    callers["ListSuspiciousPairs"] = frozenset({OPERATOR})
    # The console: finding players, suspensions, sessions, the audit log: operators only.
    for method in CONSOLE_METHODS:
        callers[method] = frozenset({OPERATOR})
    # A stalled tournament's retry, and ending one with every entry refunded: operators only.
    callers["RetryTournament"] = frozenset({OPERATOR})
    callers["AbortTournament"] = frozenset({OPERATOR})
    return ServiceSpec(
        name="matchmaking",
        default_port=port,
        default_metrics_port=metrics,
        add_to_server=make_add_to_server(internal=frozenset(callers), **kwargs),
        service_names=[SERVICE_NAME],
        settings=(MatchmakingSettings, call_guard.GuardSettings, WebSettings),
        web=WEB,
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
