"""Every setting of the gateway, declared once (:mod:`infra.settings`).

Each setting is a field of :class:`GatewaySettings` (what the live tables run with: leases,
timers, limits) or of :class:`ServerSettings` (what the server wires: the services it calls, the
seat-token secret, the bots); the web port's are :class:`infra.web.WebSettings`. A field that is
a flag of ``mahjong serve gateway`` is declared with :func:`infra.settings.setting` — the flag's
name, help, default and type, and how the flag's value becomes the field's (seconds into
milliseconds, a floor, -1 for "the ruleset's") — and read back from
:attr:`infra.config.Config.extra` with :func:`infra.settings.from_flags`. Every flag can also
come from the environment, ``MAHJONG_GATEWAY_<FLAG>`` then ``MAHJONG_<FLAG>``. A field without a
flag is the server's to derive (:func:`services.gateway.server.add_to_server`: the stored
secret, the replica id, the advertised address).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.addresses import default_address
from infra.settings import count, setting, switch

# Worker threads: on the asyncio server (the default) they run the unary calls' blocking work
# (a table's lock, the store) while streams wait on the event loop; on the threaded server each
# call, each open Subscribe stream included, holds one for its whole life.
DEFAULT_MAX_WORKERS = 64
RPC_TIMEOUT_S = 2.0  # deadline of every call to wall, rules and scoring
DEFAULT_WEB_ROOT = Path(__file__).resolve().parents[2] / "web" / "dist"


def _ms_as_seconds(default_ms: int, name: str, help: str, *, at_least: int = 0) -> Any:
    """A duration kept in milliseconds, given in seconds (a float), ``at_least`` ms."""
    return setting(
        default_ms,
        name,
        help,
        flag_default=default_ms / 1000,
        parse=float,
        to_setting=lambda seconds: max(at_least, round(float(seconds) * 1000)),
    )


def _ruleset_ms(name: str, help: str) -> Any:
    """A timer in milliseconds, None (the flag's -1, or any negative) for the ruleset's."""
    return setting(
        None,
        name,
        help,
        flag_default=-1,
        parse=int,
        to_setting=lambda ms: None if int(ms) < 0 else int(ms),
    )


def _at_least(floor: int) -> Callable[[Any], int]:
    return lambda value: max(floor, int(value))


def _service_address(service: str) -> Any:
    """``--<service>-addr``: a gRPC target (empty: the service's default address)."""
    return setting(
        "",
        f"--{service}-addr",
        f"{service} service",
        flag_default=lambda: default_address(service),
        to_setting=lambda addr: addr or default_address(service),
    )


@dataclass
class GatewaySettings:
    """What the live tables run with (:class:`~services.gateway.tables.TableManager`)."""

    secret: bytes  # seat tokens' HMAC key: --seat-secret, else one kept in the store
    replica_id: str = field(default_factory=lambda: "gw-" + secrets.token_hex(4))
    address: str = ""  # where clients reach this replica (CreateTable, NOT_OWNER redirects)
    internal_address: str = ""  # where the other replicas reach its internal port (console)
    lease_ms: int = setting(30_000, "--lease-ms", "table lease length")
    discard_ms: int | None = _ruleset_ms("--discard-ms", "discard timer (-1: ruleset)")
    claim_ms: int | None = _ruleset_ms("--claim-ms", "claim timer (-1: ruleset)")
    # RULES §4 "Claim windows": every window's hold at tables with a person seated.
    claim_window_floor_ms: int | None = _ruleset_ms(
        "--claim-window-floor-ms", "least hold of every claim window (-1: ruleset)"
    )
    claim_window_jitter_ms: int | None = _ruleset_ms(
        "--claim-window-jitter-ms", "most random hold added to it (-1: ruleset)"
    )
    bot_delay_ms: int = setting(0, "--bot-delay-ms", "how long bots think")
    # At tables with a person seated bots think bot_delay_ms + bot_pace_ms + 0..jitter more.
    bot_pace_ms: int = setting(
        0, "--bot-pace-ms", "more think time of bots at tables with a person seated"
    )
    bot_pace_jitter_ms: int = setting(
        0, "--bot-pace-jitter-ms", "most random time added to that, drawn per decision"
    )
    auto_play_delay_ms: int = setting(1_000, "--auto-play-delay-ms", "托管 delay")
    # RULES §11 "Between hands": the pause ends early once every person seated pressed Next.
    between_hands_ms: int | None = _ruleset_ms(
        "--between-hands-ms",
        "most pause between hands, at every table (-1: the ruleset's 15 s, at tables with a "
        "person seated only)",
    )
    # A CreateTable may set its own (TableSpec.seat_wait_ms).
    seat_wait_ms: int = _ms_as_seconds(
        120_000,
        "--seat-wait-seconds",
        "how long a table with open seats waits for players before it ends unplayed "
        "(0: forever; CreateTable may set its own)",
    )
    report_to_matchmaking: bool = False  # the server's: --matchmaking-addr given
    timer_workers: int = setting(
        2,
        "--timer-workers",
        "threads running timers, bots and the service calls after actions "
        "(fewer: lower Act latency under load; more: more bot tables in parallel)",
        to_setting=_at_least(1),
    )
    finished_table_ttl_ms: int = _ms_as_seconds(
        300_000,
        "--finished-table-ttl-seconds",
        "how long a finished table stays in memory (later looks read its log)",
    )
    public_tables: bool = setting(
        True,
        "--public-tables",
        "may callers without the internal token (players, the web page) create tables: "
        "on for the local stack and `mahjong play`, off where tables come from matchmaking",
        parse=switch,
    )
    public_tables_per_minute: float = setting(
        10.0,
        "--public-tables-per-minute",
        "new tables per minute one client address may create without the internal token",
    )
    public_tables_per_address: int = setting(
        8,
        "--public-tables-per-address",
        "live tables one client address may hold that it created without the token (0: any)",
    )
    seat_calls_per_second: float = setting(
        20.0,
        "--seat-calls-per-second",
        "calls per second one seat token may make, after a burst (0: no limit)",
    )
    seat_call_burst: int = setting(40, "--seat-call-burst", "the burst allowed")
    # A stream whose client does not read: cut once one event waits this long to be written,
    # or once it is this many events behind the table (the client resumes from its last one).
    stream_write_timeout_ms: int = _ms_as_seconds(
        10_000,
        "--stream-write-timeout-seconds",
        "a Subscribe whose client reads nothing for this long ends RESOURCE_EXHAUSTED",
        at_least=1,
    )
    stream_max_lag: int = setting(
        1_000,
        "--stream-max-lag",
        "a Subscribe this many events behind its live table ends RESOURCE_EXHAUSTED",
    )
    max_spectators_per_table: int = setting(
        10_000,
        "--max-spectators-per-table",
        "spectators one table admits at once, each with a token of its own; past it "
        "JoinSeat as a spectator ends RESOURCE_EXHAUSTED SPECTATOR_LIMIT (0: any number)",
        parse=count,
    )


@dataclass(frozen=True)
class ServerSettings:
    """What the gateway's server wires (:func:`services.gateway.server.add_to_server`)."""

    wall_addr: str = _service_address("wall")
    rules_addr: str = _service_address("rules")
    scoring_addr: str = _service_address("scoring")
    matchmaking_addr: str = setting(
        "",
        "--matchmaking-addr",
        "matchmaking's mutual-TLS internal port, to report settled hands (empty: don't)",
    )
    seat_secret: str = setting("", "--seat-secret", "HMAC secret for seat tokens")
    advertise_address: str = setting("", "--advertise-address", "address returned by CreateTable")
    rpc_timeout: float = setting(RPC_TIMEOUT_S, "--rpc-timeout", "deadline of outgoing calls (s)")
    bot: str = setting("planner", "--bot", "built-in bot: planner or random")
    replica_id: str = setting(
        "",
        "--replica-id",
        "this replica's lease owner id (default: host name and port, stable across restarts)",
    )
