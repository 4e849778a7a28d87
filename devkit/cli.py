"""``mahjong`` subcommands of the development kit (services/cli.py adds them when devkit is
installed, as in a checkout; the image holds none of it).

* ``mahjong certs`` — the development CA and every workload's certificate (:mod:`devkit.dev_ca`);
* ``mahjong run`` (what ``make run`` runs) — every service as its own process on loopback ports
  (:func:`infra.supervisor.run_all`), with the development issuer matchmaking trusts: served on
  loopback, its key under ``.data/dev-issuer``, guests allowed.
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("run", help="run every service as its own process on loopback ports")
    r.add_argument(
        "--store-url",
        default=None,
        help="store for the stateful services (default: SQLite under .data/)",
    )
    r.add_argument("--only", nargs="*", default=None, help="run only these services")
    r.set_defaults(func=_run)
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
    from infra.supervisor import RUN_WEB_ORIGINS
    from services.matchmaking.identity.dev_issuer import DEFAULT_PORT, DevIssuer, DevIssuerServer

    server = DevIssuerServer(
        DevIssuer.at(), port=DEFAULT_PORT, cors_origins=RUN_WEB_ORIGINS
    ).start()
    print(f"{'issuer':<12} http {server.base_url}/   (development: /token?name=NAME)", flush=True)
    return server


def _trusting(issuer) -> list[str]:
    """Matchmaking's flags trusting the development ``issuer``, with guests on."""
    from services.matchmaking.identity.issuers import format_issuer

    return ["--issuers", format_issuer(issuer.config()), "--allow-guests"]


def _certs(args: argparse.Namespace) -> int:
    from pathlib import Path

    from devkit import dev_ca
    from infra.addresses import SERVICE_ORDER

    root = dev_ca.ensure(SERVICE_ORDER, Path(args.root), args.trust_domain)
    for name in [*SERVICE_ORDER, "operator"]:
        print(f"{name:<12} {root / name}")
    print(f"{'CA':<12} {root / 'ca.crt'} (development only: its key is {root / 'ca.key'})")
    return 0
