"""The ``mahjong`` command.

``mahjong serve NAME`` runs one service; ``mahjong run`` runs them all as processes. Each
service adds its own subcommands from ``services/<name>/cli.py`` (a ``register(subparsers)``
function), found at start-up, so no central list needs editing.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import services


def _service_modules(leaf: str) -> dict[str, object]:
    found = {}
    for info in sorted(pkgutil.iter_modules(services.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        try:
            found[info.name] = importlib.import_module(f"services.{info.name}.{leaf}")
        except ModuleNotFoundError as exc:
            if exc.name != f"services.{info.name}.{leaf}":
                raise
    return found


def servable() -> dict[str, object]:
    """Services that have a ``server.py`` with a ``SPEC``."""
    return {n: m for n, m in _service_modules("server").items() if hasattr(m, "SPEC")}


def _serve(args: argparse.Namespace) -> int:
    from shared.server import serve

    mods = servable()
    if args.service not in mods:
        print(
            f"mahjong serve: unknown service {args.service!r}; known: {', '.join(mods)}",
            file=sys.stderr,
        )
        return 2
    serve(mods[args.service].SPEC, args.rest)
    return 0


def _run(args: argparse.Namespace) -> int:
    from shared import supervisor

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
    from devkit.dev_issuer import DEFAULT_PORT, DevIssuer, DevIssuerServer
    from shared.supervisor import RUN_WEB_ORIGINS

    server = DevIssuerServer(
        DevIssuer.at(), port=DEFAULT_PORT, cors_origins=RUN_WEB_ORIGINS
    ).start()
    print(f"{'issuer':<12} http {server.base_url}/   (development: /token?name=NAME)", flush=True)
    return server


def _trusting(issuer) -> list[str]:
    """Matchmaking's flags trusting the development ``issuer``, with guests on."""
    from services.matchmaking.domain.players.issuers import format_issuer

    return ["--issuers", format_issuer(issuer.config()), "--allow-guests"]


def _certs(args: argparse.Namespace) -> int:
    from pathlib import Path

    from shared import dev_ca
    from shared.addresses import SERVICE_ORDER

    root = dev_ca.ensure(SERVICE_ORDER, Path(args.root), args.trust_domain)
    for name in [*SERVICE_ORDER, "operator"]:
        print(f"{name:<12} {root / name}")
    print(f"{'CA':<12} {root / 'ca.crt'} (development only: its key is {root / 'ca.key'})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mahjong", description="Shanghai Mahjong backend tools.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    s = sub.add_parser(
        "serve", help="run one service (flags: mahjong serve NAME --help)", add_help=False
    )
    s.add_argument("service")
    s.add_argument("rest", nargs=argparse.REMAINDER)
    s.set_defaults(func=_serve)
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
    for module in _service_modules("cli").values():
        module.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
