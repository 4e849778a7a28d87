"""``mahjong`` subcommands of the development kit (services/cli.py adds them when devkit is
installed, as in a checkout; the image holds none of it).

* ``mahjong login NAME`` — the development issuer's ID token for NAME (then
  ``mahjong players sign-in``);
* ``mahjong certs`` — the development CA and every workload's certificate (:mod:`devkit.dev_ca`);
* ``mahjong run`` (what ``make run`` runs) — every service as its own process on loopback ports
  (:func:`infra.supervisor.run_all`), with the development issuer matchmaking trusts: served on
  loopback, its key under ``.data/dev-issuer``, guests allowed; ``--otlp-endpoint`` (``make run
  OTLP=host:port``) traces every call to a local OTLP receiver.
"""

from __future__ import annotations

import argparse
import sys

# ``mahjong run``'s bots, at tables with a person seated, think 0.8-2 s as a person would (bots
# alone play at full speed); between hands the ruleset's pause (15 s, or until Next) applies.
HUMAN_PACE = ("--bot-pace-ms", "800", "--bot-pace-jitter-ms", "1200")


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("run", help="run every service as its own process on loopback ports")
    r.add_argument(
        "--store-url",
        default=None,
        help="store for the stateful services (default: SQLite under .data/)",
    )
    r.add_argument("--only", nargs="*", default=None, help="run only these services")
    r.add_argument(
        "--otlp-endpoint",
        default="",
        help="trace every call and send the spans over OTLP/gRPC to this receiver (e.g. "
        "127.0.0.1:4317, a local Jaeger or OpenTelemetry Collector), all of them sampled",
    )
    r.set_defaults(func=_run)
    login = sub.add_parser(
        "login",
        help="development issuer: print an ID token for NAME (then `mahjong players sign-in`)",
    )
    login.add_argument("name", help="the subject and display name")
    login.add_argument(
        "--root", default=".data/dev-issuer", help="the issuer's key (.data/dev-issuer)"
    )
    login.add_argument(
        "--operator",
        action="store_true",
        help="the token names the operator role (roles: [operator]): its sign-in is an "
        "operator's session, for the web console (?admin)",
    )
    login.set_defaults(func=_login)
    c = sub.add_parser(
        "certs",
        help="make (or renew) the development CA and every workload's certificate under .data/tls",
    )
    c.add_argument("--root", default=".data/tls", help="where (default .data/tls)")
    c.add_argument(
        "--trust-domain", default="mahjong.local", help="the SPIFFE trust domain of the IDs"
    )
    c.set_defaults(func=_certs)


def _run(args: argparse.Namespace) -> int:
    from infra import supervisor
    from services.cli import servable

    known = servable()
    unknown = [n for n in args.only or () if n not in known]
    if unknown:
        print(
            f"mahjong run: unknown service {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(known)}",
            file=sys.stderr,
        )
        return 2
    issuer = None
    extra: dict[str, list[str]] = {}
    if "matchmaking" in known and (not args.only or "matchmaking" in args.only):
        try:
            issuer = _dev_issuer()
        except OSError as exc:
            print(f"mahjong run: cannot serve the development issuer: {exc}", file=sys.stderr)
            return 1
        extra["matchmaking"] = _trusting(issuer)
    if "gateway" in known and (not args.only or "gateway" in args.only):
        extra.setdefault("gateway", []).extend(HUMAN_PACE)
    if args.otlp_endpoint:  # every service traced, every trace kept (a developer's machine)
        for name in known:
            extra.setdefault(name, []).extend(
                ["--otlp-endpoint", args.otlp_endpoint, "--trace-sample-ratio", "1"]
            )
    try:
        return supervisor.run_all(known, store_url=args.store_url, only=args.only, extra_args=extra)
    except (supervisor.StartupError, TimeoutError) as exc:
        print(f"mahjong run: {exc} (its error is above); nothing is left running", file=sys.stderr)
        return 1
    finally:
        if issuer is not None:
            issuer.close()


def _dev_issuer():
    """``mahjong run``'s development issuer (its key under .data/dev-issuer), served on
    loopback: matchmaking fetches its key set; the web table, ``mahjong play --name`` and the
    Node client get ID tokens from its ``/token?name=NAME``."""
    from devkit.dev_issuer import DEFAULT_PORT, DevIssuer, DevIssuerServer
    from infra.supervisor import RUN_WEB_ORIGINS

    server = DevIssuerServer(
        DevIssuer.at(), port=DEFAULT_PORT, cors_origins=RUN_WEB_ORIGINS
    ).start()
    print(f"{'issuer':<12} http {server.base_url}/   (development: /token?name=NAME)", flush=True)
    return server


# Every player of a local stack joins from loopback: quick match seats them together.
LOCAL_QUEUE = ("--queue-one-per-address", "off")


def _trusting(issuer) -> list[str]:
    """Matchmaking's flags trusting the development ``issuer``, with guests on, and
    players from one address seated together (every local player is on loopback)."""
    from services.matchmaking.domain.players.issuers import format_issuer

    return ["--issuers", format_issuer(issuer.config()), "--allow-guests", *LOCAL_QUEUE]


def _certs(args: argparse.Namespace) -> int:
    from pathlib import Path

    from devkit import dev_ca
    from infra.addresses import SERVICE_ORDER

    root = dev_ca.ensure(SERVICE_ORDER, Path(args.root), args.trust_domain)
    for name in [*SERVICE_ORDER, "operator"]:
        print(f"{name:<12} {root / name}")
    print(f"{'CA':<12} {root / 'ca.crt'} (development only: its key is {root / 'ca.key'})")
    return 0


def _login(args: argparse.Namespace) -> int:
    """``mahjong login NAME``: the development issuer's ID token for ``NAME`` on stdout."""
    from pathlib import Path

    from devkit.dev_issuer import DevIssuer
    from services.matchmaking.domain.players.issuers import OPERATOR_ROLE

    name = args.name.strip()
    if not name:
        print("mahjong login: the name is empty", file=sys.stderr)
        return 2
    roles = {"roles": [OPERATOR_ROLE]} if args.operator else {}
    print(DevIssuer.at(Path(args.root)).id_token(name, name, **roles), flush=True)
    return 0
