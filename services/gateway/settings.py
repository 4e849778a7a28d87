"""Every setting of the gateway, declared once.

Each setting is a field of :class:`GatewaySettings` (what the live tables run with: leases,
timers, limits) or of :class:`ServerSettings` (what the server wires: the services it calls, the
seat-token secret, the bots, the web port). A field that is a flag of ``mahjong serve gateway``
holds its :class:`Flag` in its metadata — the flag's name, help, default and argparse type, and
how the flag's value becomes the field's (seconds into milliseconds, a floor, -1 for "the
ruleset's") — from which :func:`add_arguments` adds the flags and :func:`from_flags` reads them
back from :attr:`infra.config.Config.extra` (a key missing there takes the flag's default).
Every flag can also come from the environment, ``MAHJONG_GATEWAY_<FLAG>`` then
``MAHJONG_<FLAG>`` (:func:`infra.config.parse_config`). A field without a flag is the server's
to derive (:func:`services.gateway.server.add_to_server`: the stored secret, the replica id,
the advertised address).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from infra.addresses import WEB_PORTS, default_address
from infra.ports import port_value

# Worker threads: on the asyncio server (the default) they run the unary calls' blocking work
# (a table's lock, the store) while streams wait on the event loop; on the threaded server each
# call, each open Subscribe stream included, holds one for its whole life.
DEFAULT_MAX_WORKERS = 64
RPC_TIMEOUT_S = 2.0  # deadline of every call to wall, rules and scoring
DEFAULT_WEB_ROOT = Path(__file__).resolve().parents[2] / "web" / "dist"


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


@dataclass(frozen=True)
class Flag:
    """One setting as a flag: ``name`` (``--lease-ms``), ``help``, ``default`` (in the flag's
    own unit; a function of no arguments when it is looked up as the flags are added, e.g. from
    the environment), ``parse`` (argparse's ``type``; None: text) and ``to_setting`` (the flag's
    value to the field's; None: the value as the default's type)."""

    name: str
    help: str
    default: Any
    parse: Callable[[str], Any] | None = None
    to_setting: Callable[[Any], Any] | None = None

    @property
    def dest(self) -> str:
        """The flag's key in argparse's namespace and in ``Config.extra``."""
        return self.name.removeprefix("--").replace("-", "_")

    def default_value(self) -> Any:
        return self.default() if callable(self.default) else self.default

    def value(self, extra: Mapping[str, Any]) -> Any:
        """The field's value from the flags' values (the default where ``extra`` has none)."""
        raw = extra.get(self.dest, self.default_value())
        if self.to_setting is not None:
            return self.to_setting(raw)
        return type(self.default_value())(raw)


_SAME: Any = object()


def setting(
    default: Any,
    name: str,
    help: str,
    *,
    flag_default: Any = _SAME,
    parse: Callable[[str], Any] | None = None,
    to_setting: Callable[[Any], Any] | None = None,
) -> Any:
    """A field of ``default`` that is the flag ``name`` (default ``flag_default``, else the
    field's; parsed as an int or a float when the default is one, unless ``parse`` says)."""
    shown = default if flag_default is _SAME else flag_default
    if parse is None and not isinstance(shown, bool) and isinstance(shown, int | float):
        parse = type(shown)
    flag = Flag(name, help, shown, parse, to_setting)
    return field(default=default, metadata={"flag": flag})


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
    lease_ms: int = setting(30_000, "--lease-ms", "table lease length")
    discard_ms: int | None = _ruleset_ms("--discard-ms", "discard timer (-1: ruleset)")
    claim_ms: int | None = _ruleset_ms("--claim-ms", "claim timer (-1: ruleset)")
    bot_delay_ms: int = setting(0, "--bot-delay-ms", "how long bots think")
    auto_play_delay_ms: int = setting(1_000, "--auto-play-delay-ms", "托管 delay")
    between_hands_ms: int = setting(0, "--between-hands-ms", "pause between hands")
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
        parse=_switch,
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
        parse=_count,
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
    web_port: int = setting(
        0,
        "--web-port",
        "HTTP port for browsers: the same API over Connect and gRPC-Web, and the web table "
        f"(0: off; auto: one the OS picks; mahjong run uses {WEB_PORTS['gateway']})",
        parse=port_value,
    )
    web_cors_origins: str = setting(
        "",
        "--web-cors-origins",
        "comma-separated origins whose pages may call the web port (e.g. "
        "http://localhost:5173); empty: only the page it serves itself; * any (never in "
        "production)",
    )
    web_root: str = setting(
        str(DEFAULT_WEB_ROOT),
        "--web-root",
        "the built web table to serve on the web port (empty: the API only)",
    )
    web_tls_dir: str = setting(
        "",
        "--web-tls-dir",
        "tls.crt and tls.key (and ca.crt) for HTTPS on the web port; empty: plain HTTP, "
        "allowed only on a loopback address",
    )
    web_max_streams: int = setting(
        20_000,
        "--web-max-streams",
        "streams the web port holds at once (each a connection, about 10 KiB, no thread); "
        "past it a stream ends RESOURCE_EXHAUSTED (0: no limit)",
        to_setting=_at_least(0),
    )
    replica_id: str = setting(
        "",
        "--replica-id",
        "this replica's lease owner id (default: host name and port, stable across restarts)",
    )


def flags(cls: type) -> list[Flag]:
    """The flags of a settings dataclass, in the order of its fields."""
    return [f.metadata["flag"] for f in dataclasses.fields(cls) if "flag" in f.metadata]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Every gateway flag (``mahjong serve gateway --help``)."""
    for cls in (ServerSettings, GatewaySettings):
        for flag in flags(cls):
            p.add_argument(flag.name, type=flag.parse, default=flag.default_value(), help=flag.help)
    if not (os.environ.get("MAHJONG_GATEWAY_MAX_WORKERS") or os.environ.get("MAHJONG_MAX_WORKERS")):
        p.set_defaults(max_workers=DEFAULT_MAX_WORKERS)


S = TypeVar("S")


def from_flags(cls: type[S], extra: Mapping[str, Any], **derived: Any) -> S:
    """``cls`` from the flags' values in ``extra``, with the fields that are no flag given."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    values = {f.name: f.metadata["flag"].value(extra) for f in fields if "flag" in f.metadata}
    return cls(**values, **derived)
