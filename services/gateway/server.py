"""The gateway server: ``mahjong serve gateway`` (client API, live tables, timers, bots).

It calls the wall, rules and scoring services (``--wall-addr`` …, every call with a deadline)
and reports settled hands to matchmaking through the store's outbox (``--matchmaking-addr``;
empty = no reporting).
"""

from __future__ import annotations

import contextlib

import grpc
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.addresses import DEFAULT_PORTS, INTERNAL_PORTS
from infra.binding import open_config_store, tls_files
from infra.config import Config, ServiceSpec
from infra.server import serve
from infra.settings import from_flags
from infra.tls import OPERATOR, TLSFiles
from infra.web import WebPort, WebSettings, check_web_port
from services.gateway import metrics
from services.gateway.adapters.remote import RemoteRules, RemoteScoring, RemoteWall, channel
from services.gateway.bots import engine_policy, make_bot
from services.gateway.console import CONSOLE_METHODS, MATCHMAKING_METHODS
from services.gateway.domain.session import Ports
from services.gateway.servicer import GatewayServicer
from services.gateway.settings import (
    DEFAULT_MAX_WORKERS,
    DEFAULT_WEB_ROOT,
    GatewaySettings,
    ServerSettings,
)
from services.gateway.tables import TableManager

# The services this one calls (devkit.stack gives each its address flag).
CALLS = ("wall", "rules", "scoring", "matchmaking")
SECRET_NS = "gateway-config"


def _secret(store, configured: str) -> bytes:
    """The seat-token signing secret: configured, else one kept in the store for all replicas."""
    import secrets

    from infra.store import AlreadyExists

    if configured:
        return configured.encode()
    rec = store.get(SECRET_NS, "seat_token_secret")
    if rec is None:
        with contextlib.suppress(AlreadyExists):
            store.create(SECRET_NS, "seat_token_secret", secrets.token_bytes(32))
        rec = store.get(SECRET_NS, "seat_token_secret")
    return rec.value


def _advertised(address: str, config: Config) -> str:
    """Where clients reach this replica: the flag (a bare host or IP gets the gRPC port)."""
    if not address:
        return f"{config.host}:{config.port}"
    if address.startswith("[") or address.count(":") == 1:
        return address
    if address.count(":") > 1:  # a bare IPv6 address
        return f"[{address}]:{config.port}"
    return f"{address}:{config.port}"


def _internal_advertised(public: str, config: Config) -> str:
    """Where the other replicas reach this one's mutual-TLS internal port: the advertised
    host at the internal port ("" without one)."""
    if not config.internal_port:
        return ""
    host = public.rsplit(":", 1)[0]
    return f"{host}:{config.internal_port}"


def _web_server(servicer, config: Config, tls: TLSFiles | None):
    """The web port: the gRPC port's own servicer over Connect and gRPC-Web (infra/web.py):
    on the asyncio model the coroutine servicer, on the server's event loop (a web stream holds
    no thread, forwarding and relays included); on the threads model the threaded one."""
    from mahjong.gateway.v1 import gateway_pb2

    from infra.web import web_server

    descriptor = gateway_pb2.DESCRIPTOR.services_by_name["GatewayService"]
    # matchmaking's methods are not served there: a browser has no workload certificate; the
    # console's are, for an operator's session (checked by the handlers: console.operator).
    internal = set(MATCHMAKING_METHODS)
    methods = [m.name for m in descriptor.methods if m.name not in internal]
    return web_server(servicer, descriptor, config, tls, service="gateway", methods=methods)


class _Resources:
    def __init__(self, *closables) -> None:
        self.closables = closables

    def close(self) -> None:
        for c in self.closables:
            c.close()


def add_to_server(server: grpc.Server, config: Config):
    import socket

    srv = from_flags(ServerSettings, config.extra)
    timeout = srv.rpc_timeout
    store = open_config_store(config)
    tls = tls_files(config, "gateway")
    channels = [
        channel(addr, svc, tls)
        for addr, svc in (
            (srv.wall_addr, "wall"),
            (srv.rules_addr, "rules"),
            (srv.scoring_addr, "scoring"),
        )
    ]
    ports = Ports(
        RemoteWall(channels[0], timeout),
        RemoteRules(channels[1], timeout),
        RemoteScoring(channels[2], timeout),
    )
    mm_addr = srv.matchmaking_addr
    address = _advertised(srv.advertise_address, config)
    settings = from_flags(
        GatewaySettings,
        config.extra,
        secret=_secret(store, srv.seat_secret),
        replica_id=srv.replica_id or f"{socket.gethostname()}:{config.port}",
        address=address,
        internal_address=_internal_advertised(address, config),
        report_to_matchmaking=bool(mm_addr),
    )
    taken_over: list = []  # the relay watch's, once the servicer exists

    def on_event(table, logged, what: str) -> None:
        metrics.observe(table, logged, what)
        if logged is None and what == "taken_over":
            for hook in taken_over:
                hook(table.id)

    manager = TableManager(
        store,
        ports,
        settings,
        policy=engine_policy(make_bot(srv.bot)),
        on_event=on_event,
    )
    metrics.TABLES_HELD.set_function(lambda: len(manager.tables))
    servicer = GatewayServicer(manager, tls)
    servicer.console.internal_token = config.internal_token
    taken_over.append(servicer.watch.taken_over)
    served = servicer
    if isinstance(server, grpc.aio.Server):
        from services.gateway.aio_servicer import AsyncGatewayServicer

        served = AsyncGatewayServicer(servicer)
    gateway_pb2_grpc.add_GatewayServiceServicer_to_server(served, server)
    closables = [manager, *channels]
    web = _web_server(served, config, tls)
    if web is not None:
        closables.insert(0, web)
    if mm_addr:
        from services.gateway.outbox import OutboxSender

        mm_channel = channel(mm_addr, "matchmaking", tls)
        sender = OutboxSender(
            store, mm_channel, timeout=timeout, internal_token=config.internal_token
        )
        closables += [sender.start(), mm_channel]
        from services.gateway.double_cards import MatchmakingBank

        manager.double_cards = MatchmakingBank(
            mm_channel, timeout=timeout, internal_token=config.internal_token
        )
        from services.gateway.signed_in import MatchmakingSessions

        servicer.sessions = MatchmakingSessions(
            mm_channel, timeout=timeout, internal_token=config.internal_token
        )
    closables.append(store)
    resources = _Resources(*closables)
    resources.manager = manager  # type: ignore[attr-defined]
    resources.servicer = servicer  # type: ignore[attr-defined]
    resources.web_port = web.port if web is not None else 0  # type: ignore[attr-defined]
    resources.before_stop = manager.hand_over  # type: ignore[attr-defined]
    return resources


SPEC = ServiceSpec(
    name="gateway",
    default_port=DEFAULT_PORTS["gateway"][0],
    default_metrics_port=DEFAULT_PORTS["gateway"][1],
    add_to_server=add_to_server,
    service_names=["mahjong.gateway.v1.GatewayService"],
    settings=(ServerSettings, GatewaySettings, WebSettings),
    default_max_workers=DEFAULT_MAX_WORKERS,
    server_models=("asyncio", "threads"),
    # Every method is the players' (seat tokens decide); matchmaking's CreateTable comes on the
    # mutual-TLS internal port, where its certificate makes the table the ledger's.
    default_internal_port=INTERNAL_PORTS["gateway"],
    check_config=check_web_port("gateway"),
    # The operator's console (ListTables, EndTable, InspectTable): the operator's certificate,
    # or another gateway replica carrying an operator's signed claim (services/gateway/
    # delegation.py: the handler refuses a gateway without one).
    # A suspended player's seat (SuspendSeat): matchmaking's certificate only.
    callers={
        **{method: frozenset({OPERATOR, "gateway"}) for method in CONSOLE_METHODS},
        **{method: frozenset({"matchmaking"}) for method in MATCHMAKING_METHODS},
    },
    web=WebPort(what="the same API and the web table", root=str(DEFAULT_WEB_ROOT)),
)


def main(argv: list[str] | None = None) -> None:
    serve(SPEC, argv)


if __name__ == "__main__":
    main()
