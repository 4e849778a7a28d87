"""The ``mahjong`` command.

``mahjong serve NAME`` runs one service. Each service adds its own subcommands from
``services/<name>/cli.py`` (a ``register(subparsers)`` function), found at start-up, so no
central list needs editing. So do the packages beside ``services/`` when they are installed
(:data:`COMMAND_MODULES`): the terminal client's ``mahjong play`` and the development kit's
``mahjong run`` (every service as a process, with the development issuer).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import services

# Subcommands of the packages beside services/: a checkout installs them (`make install`); the
# image holds neither, so its `mahjong` only serves. Found by name, never imported by a service
# (pyproject.toml's import contracts: services/ imports nothing of them).
COMMAND_MODULES = ("mahjong_client.play", "devkit.cli")


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


def _command_modules() -> list[object]:
    """The installed modules of :data:`COMMAND_MODULES`."""
    found = []
    for name in COMMAND_MODULES:
        try:
            found.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            if exc.name not in (name, name.partition(".")[0]):
                raise
    return found


def servable() -> dict[str, object]:
    """Services that have a ``server.py`` with a ``SPEC``."""
    return {n: m for n, m in _service_modules("server").items() if hasattr(m, "SPEC")}


def _serve(args: argparse.Namespace) -> int:
    from infra.server import serve

    mods = servable()
    if args.service not in mods:
        print(
            f"mahjong serve: unknown service {args.service!r}; known: {', '.join(mods)}",
            file=sys.stderr,
        )
        return 2
    serve(mods[args.service].SPEC, args.rest)
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
    for module in [*_service_modules("cli").values(), *_command_modules()]:
        module.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
