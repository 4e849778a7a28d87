"""The gateway server: ``mahjong serve gateway`` (client API, live tables, timers, bots).

It calls the wall, rules and scoring services (``--wall-addr`` …, every call with a deadline)
and reports settled hands to matchmaking through the store's outbox (``--matchmaking-addr``;
empty = no reporting).
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

import grpc
from mahjong.gateway.v1 import gateway_pb2_grpc

from services.gateway import metrics
from services.gateway.adapters.remote import RemoteRules, RemoteScoring, RemoteWall, channel
from services.gateway.bots import engine_policy, make_bot
from services.gateway.domain.session import Ports
from services.gateway.servicer import GatewayServicer
from services.gateway.tables import GatewaySettings, TableManager
from shared.addresses import DEFAULT_PORTS, INTERNAL_PORTS, WEB_PORTS, default_address
from shared.ports import listen_port, port_value
from shared.server import (
    BindError,
    Config,
    ServiceSpec,
    open_config_store,
    serve,
    serving_of,
    stream_limit,
    tls_files,
)
from shared.tls import TLSFiles

CALLS = ("wall", "rules", "scoring", "matchmaking")
# Worker threads: on the asyncio server (the default) they run the unary calls' blocking work
# (a table's lock, the store) while streams wait on the event loop; on the threaded server each
# call, each open Subscribe stream included, holds one for its whole life.
DEFAULT_MAX_WORKERS = 64
SECRET_NS = "gateway-config"
DEFAULT_WEB_ROOT = Path(__file__).resolve().parents[2] / "web" / "dist"


def _secret(store, configured: str) -> bytes:
    """The seat-token signing secret: configured, else one kept in the store for all replicas."""
    import secrets

    from shared.store import AlreadyExists

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


# Each setting's default is the GatewaySettings field's (one place): the flags show them.
_D = GatewaySettings(secret=b"")
RPC_TIMEOUT_S = 2.0  # deadline of every call to wall, rules and scoring


def _switch(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not on or off")


def _count(text: str) -> int:
    """A flag's whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative (0 means no limit)")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    for svc in ("wall", "rules", "scoring"):
        p.add_argument(f"--{svc}-addr", default=default_address(svc), help=f"{svc} service")
    p.add_argument(
        "--matchmaking-addr",
        default="",
        help="matchmaking's mutual-TLS internal port, to report settled hands (empty: don't)",
    )
    p.add_argument("--seat-secret", default="", help="HMAC secret for seat tokens")
    p.add_argument("--advertise-address", default="", help="address returned by CreateTable")
    p.add_argument(
        "--rpc-timeout", type=float, default=RPC_TIMEOUT_S, help="deadline of outgoing calls (s)"
    )
    p.add_argument("--discard-ms", type=int, default=-1, help="discard timer (-1: ruleset)")
    p.add_argument("--claim-ms", type=int, default=-1, help="claim timer (-1: ruleset)")
    p.add_argument("--bot-delay-ms", type=int, default=_D.bot_delay_ms, help="how long bots think")
    p.add_argument(
        "--auto-play-delay-ms", type=int, default=_D.auto_play_delay_ms, help="托管 delay"
    )
    p.add_argument(
        "--between-hands-ms", type=int, default=_D.between_hands_ms, help="pause between hands"
    )
    p.add_argument(
        "--seat-wait-seconds",
        type=float,
        default=_D.seat_wait_ms / 1000,
        help="how long a table with open seats waits for players before it ends unplayed "
        "(0: forever; CreateTable may set its own)",
    )
    p.add_argument("--bot", default="planner", help="built-in bot: planner or random")
    p.add_argument("--lease-ms", type=int, default=_D.lease_ms, help="table lease length")
    p.add_argument(
        "--finished-table-ttl-seconds",
        type=float,
        default=_D.finished_table_ttl_ms / 1000,
        help="how long a finished table stays in memory (later looks read its log)",
    )
    p.add_argument(
        "--timer-workers",
        type=int,
        default=_D.timer_workers,
        help="threads running timers, bots and the service calls after actions "
        "(fewer: lower Act latency under load; more: more bot tables in parallel)",
    )
    if not (os.environ.get("MAHJONG_GATEWAY_MAX_WORKERS") or os.environ.get("MAHJONG_MAX_WORKERS")):
        p.set_defaults(max_workers=DEFAULT_MAX_WORKERS)
    p.add_argument(
        "--public-tables",
        type=_switch,
        default=_D.public_tables,
        help="may callers without the internal token (players, the web page) create tables: "
        "on for the local stack and `mahjong play`, off where tables come from matchmaking",
    )
    p.add_argument(
        "--public-tables-per-minute",
        type=float,
        default=_D.public_tables_per_minute,
        help="new tables per minute one client address may create without the internal token",
    )
    p.add_argument(
        "--public-tables-per-address",
        type=int,
        default=_D.public_tables_per_address,
        help="live tables one client address may hold that it created without the token (0: any)",
    )
    p.add_argument(
        "--seat-calls-per-second",
        type=float,
        default=_D.seat_calls_per_second,
        help="calls per second one seat token may make, after a burst (0: no limit)",
    )
    p.add_argument(
        "--seat-call-burst", type=int, default=_D.seat_call_burst, help="the burst allowed"
    )
    p.add_argument(
        "--stream-write-timeout-seconds",
        type=float,
        default=_D.stream_write_timeout_ms / 1000,
        help="a Subscribe whose client reads nothing for this long ends RESOURCE_EXHAUSTED",
    )
    p.add_argument(
        "--stream-max-lag",
        type=int,
        default=_D.stream_max_lag,
        help="a Subscribe this many events behind its live table ends RESOURCE_EXHAUSTED",
    )
    p.add_argument(
        "--max-spectators-per-table",
        type=_count,
        default=_D.max_spectators_per_table,
        help="spectators one table admits at once, each with a token of its own; past it "
        "JoinSeat as a spectator ends RESOURCE_EXHAUSTED SPECTATOR_LIMIT (0: any number)",
    )
    p.add_argument(
        "--web-port",
        type=port_value,
        default=0,
        help="HTTP port for browsers: the same API over Connect and gRPC-Web, and the web table "
        f"(0: off; auto: one the OS picks; mahjong run uses {WEB_PORTS['gateway']})",
    )
    p.add_argument(
        "--web-cors-origins",
        default="",
        help="comma-separated origins whose pages may call the web port (e.g. "
        "http://localhost:5173); empty: only the page it serves itself; * any (never in "
        "production)",
    )
    p.add_argument(
        "--web-root",
        default=str(DEFAULT_WEB_ROOT),
        help="the built web table to serve on the web port (empty: the API only)",
    )
    p.add_argument(
        "--web-tls-dir",
        default="",
        help="tls.crt and tls.key (and ca.crt) for HTTPS on the web port; empty: plain HTTP, "
        "allowed only on a loopback address",
    )
    p.add_argument("--web-threads", type=int, default=64, help="web port threads (one per stream)")
    p.add_argument(
        "--web-stream-seconds",
        type=float,
        default=300.0,
        help="a web Subscribe ends after this long (the page resumes from its last event)",
    )
    p.add_argument(
        "--replica-id",
        default="",
        help="this replica's lease owner id (default: host name and port, stable across restarts)",
    )


def _web_tls(config: Config, tls: TLSFiles | None) -> TLSFiles | None:
    """The web port's HTTPS files: ``--web-tls-dir``; none (plain HTTP) only on a loopback
    address (browsers treat loopback as a secure context) or with ``--insecure``."""
    directory = str(config.extra.get("web_tls_dir", ""))
    if directory:
        return TLSFiles(Path(directory))
    if tls is None or _is_loopback(config.host):
        return None
    raise BindError(
        f"the web port listens on {config.host}, not loopback: give --web-tls-dir "
        "(MAHJONG_GATEWAY_WEB_TLS_DIR) for HTTPS, or terminate TLS in front of it and say "
        "--insecure only in tests"
    )


def _check_config(config: Config) -> None:
    """Refused before any port is bound: a plain-HTTP web port off loopback (:func:`_web_tls`)."""
    if int(config.extra.get("web_port", 0)) != 0:
        _web_tls(config, tls_files(config, "gateway"))


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _web_server(servicer: GatewayServicer, config: Config, tls: TLSFiles | None):
    """The web port: the servicer's own methods over Connect and gRPC-Web (shared/web.py)."""
    from mahjong.gateway.v1 import gateway_pb2

    from shared.web import ServiceBinding, WebServer

    x = config.extra
    threads = max(4, int(x.get("web_threads", 64)))
    binding = ServiceBinding(
        servicer,
        gateway_pb2.DESCRIPTOR.services_by_name["GatewayService"],
        serving=serving_of(config),
        max_streams=stream_limit(threads),
        stream_seconds=float(x.get("web_stream_seconds", 300.0)),
    )
    root = x.get("web_root", "")
    return WebServer(
        binding,
        host=config.host,
        port=listen_port(int(x["web_port"])),
        origins=str(x.get("web_cors_origins", "")).split(","),
        web_root=Path(root) if root else None,
        threads=threads,
        tls=_web_tls(config, tls),
    ).start()


class _Resources:
    def __init__(self, *closables) -> None:
        self.closables = closables

    def close(self) -> None:
        for c in self.closables:
            c.close()


def add_to_server(server: grpc.Server, config: Config):
    x = config.extra
    timeout = float(x.get("rpc_timeout", RPC_TIMEOUT_S))
    store = open_config_store(config)
    tls = tls_files(config, "gateway")
    channels = [
        channel(x.get(f"{svc}_addr") or default_address(svc), svc, tls)
        for svc in ("wall", "rules", "scoring")
    ]
    ports = Ports(
        RemoteWall(channels[0], timeout),
        RemoteRules(channels[1], timeout),
        RemoteScoring(channels[2], timeout),
    )
    mm_addr = x.get("matchmaking_addr", "")
    import socket

    settings = GatewaySettings(
        secret=_secret(store, x.get("seat_secret", "")),
        replica_id=x.get("replica_id") or f"{socket.gethostname()}:{config.port}",
        address=_advertised(x.get("advertise_address", ""), config),
        lease_ms=int(x.get("lease_ms", _D.lease_ms)),
        discard_ms=None if int(x.get("discard_ms", -1)) < 0 else int(x["discard_ms"]),
        claim_ms=None if int(x.get("claim_ms", -1)) < 0 else int(x["claim_ms"]),
        bot_delay_ms=int(x.get("bot_delay_ms", _D.bot_delay_ms)),
        auto_play_delay_ms=int(x.get("auto_play_delay_ms", _D.auto_play_delay_ms)),
        between_hands_ms=int(x.get("between_hands_ms", _D.between_hands_ms)),
        seat_wait_ms=max(
            0, round(float(x.get("seat_wait_seconds", _D.seat_wait_ms / 1000)) * 1000)
        ),
        report_to_matchmaking=bool(mm_addr),
        timer_workers=max(1, int(x.get("timer_workers", _D.timer_workers))),
        finished_table_ttl_ms=max(
            0,
            round(
                float(x.get("finished_table_ttl_seconds", _D.finished_table_ttl_ms / 1000)) * 1000
            ),
        ),
        public_tables=bool(x.get("public_tables", _D.public_tables)),
        public_tables_per_minute=float(
            x.get("public_tables_per_minute", _D.public_tables_per_minute)
        ),
        public_tables_per_address=int(
            x.get("public_tables_per_address", _D.public_tables_per_address)
        ),
        seat_calls_per_second=float(x.get("seat_calls_per_second", _D.seat_calls_per_second)),
        seat_call_burst=int(x.get("seat_call_burst", _D.seat_call_burst)),
        stream_write_timeout_ms=max(
            1,
            round(
                float(x.get("stream_write_timeout_seconds", _D.stream_write_timeout_ms / 1000))
                * 1000
            ),
        ),
        stream_max_lag=int(x.get("stream_max_lag", _D.stream_max_lag)),
        max_spectators_per_table=int(
            x.get("max_spectators_per_table", _D.max_spectators_per_table)
        ),
    )
    manager = TableManager(
        store,
        ports,
        settings,
        policy=engine_policy(make_bot(x.get("bot", "planner"))),
        on_event=metrics.observe,
    )
    metrics.TABLES_HELD.set_function(lambda: len(manager.tables))
    servicer = GatewayServicer(manager, tls)
    if isinstance(server, grpc.aio.Server):
        from services.gateway.aio_servicer import AsyncGatewayServicer

        aio = AsyncGatewayServicer(servicer)
        gateway_pb2_grpc.add_GatewayServiceServicer_to_server(aio, server)
    else:
        gateway_pb2_grpc.add_GatewayServiceServicer_to_server(servicer, server)
    closables = [manager, *channels]
    web = None
    if int(x.get("web_port", 0)) != 0:
        web = _web_server(servicer, config, tls)
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
    closables.append(store)
    resources = _Resources(*closables)
    resources.manager = manager  # type: ignore[attr-defined]
    resources.web_port = web.port if web is not None else 0  # type: ignore[attr-defined]
    resources.before_stop = manager.hand_over  # type: ignore[attr-defined]
    return resources


SPEC = ServiceSpec(
    name="gateway",
    default_port=DEFAULT_PORTS["gateway"][0],
    default_metrics_port=DEFAULT_PORTS["gateway"][1],
    add_to_server=add_to_server,
    service_names=["mahjong.gateway.v1.GatewayService"],
    add_arguments=add_arguments,
    server_models=("asyncio", "threads"),
    # Every method is the players' (seat tokens decide); matchmaking's CreateTable comes on the
    # mutual-TLS internal port, where its certificate makes the table the ledger's.
    default_internal_port=INTERNAL_PORTS["gateway"],
    check_config=_check_config,
)


def main(argv: list[str] | None = None) -> None:
    serve(SPEC, argv)


if __name__ == "__main__":
    main()
