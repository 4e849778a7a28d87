"""``mahjong play``: a person plays Shanghai Mahjong in a terminal through the real gateway.

By default it creates a table (CreateTable) with the person in one seat and three built-in
bots, or it joins a given table (``--table`` with ``--token``, or an open seat by JoinSeat).
Every prompt shows the table (each seat's flowers, melds, discards, 敲 flag; tiles left; the
timer), the person's tiles in mpsz with their Chinese names, and the legal options numbered:
answer with a number, a tile to discard (``5m``), ``h`` for the planning bot's hint, ``t`` to
redraw the table or ``q`` to leave. At the end of each hand the scoring breakdown is shown.

``--sign-in`` signs in to matchmaking first (``--id-token``, or in development the development
issuer's ID token for ``--name``) and plays at a private room's table with three bots, for silver.

``--local`` starts a private stack (wall, rules, scoring, gateway on free ports; matchmaking and
a development issuer of its own too with ``--sign-in``) first: :mod:`devkit.stack`, in a
checkout.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import grpc

from infra.addresses import default_address
from mahjong_client.tables import create_table
from mahjong_client.terminal import Quit, TerminalPlayer
from shared.ruleset import DEFAULT_RULESET


def register(subparsers) -> None:
    """Add ``mahjong play`` (to ``mahjong``'s subcommands: services/cli.py)."""
    p = subparsers.add_parser(
        "play",
        help="play Shanghai Mahjong in the terminal against three bots through the gateway",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--gateway-addr", default=None, help="the gateway (default: its loopback port)")
    p.add_argument("--local", action="store_true", help="start a private stack on free ports")
    p.add_argument("--table", default="", help="join this table instead of creating one")
    p.add_argument("--token", default="", help="seat token for --table (else JoinSeat)")
    p.add_argument("--name", default="you", help="your player id / display name")
    p.add_argument(
        "--seat",
        type=int,
        default=None,
        choices=range(4),
        help="your seat, 0-3 (default: 0 at a new table, your assigned or any open seat else)",
    )
    p.add_argument("--hands", type=int, default=0, help="hands to play (0: until you quit)")
    p.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="rounds (圈) to play at a new table (0: no limit; a 逛花园 ruleset sets its own)",
    )
    p.add_argument(
        "--sign-in",
        action="store_true",
        help="sign in to matchmaking (the development issuer's ID token for --name, or "
        "--id-token) and play at a private room's table with three bots, for silver",
    )
    p.add_argument("--id-token", default="", help="the studio's ID token for --sign-in")
    p.add_argument(
        "--matchmaking-addr", default=None, help="matchmaking (default: its loopback port)"
    )
    p.add_argument("--stake", type=int, default=1, help="chips per point (底分)")
    p.add_argument("--ruleset", default=DEFAULT_RULESET)
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="SECTION.OPTION=VALUE",
        help="ruleset override, e.g. timers.discard_seconds=60 (repeatable)",
    )
    p.set_defaults(func=run_play)


def run_play(
    args: argparse.Namespace, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout
) -> int:
    options = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            stdout.write(f"--option {item!r}: expected SECTION.OPTION=VALUE\n")
            return 2
        options[key.strip()] = value.strip()
    stack = None
    if args.local:
        from devkit.stack import LocalStack

        if args.sign_in:
            from devkit.stack import SIGNED_IN_STACK

            stdout.write("starting a local stack (wall, rules, scoring, gateway, matchmaking)…\n")
            stack = LocalStack(SIGNED_IN_STACK).start()
            args.matchmaking_addr = stack.matchmaking
            if not args.id_token:  # the stack's own development issuer
                args.id_token = stack.issuer.issuer.id_token(args.name, args.name)
        else:
            stdout.write("starting a local stack (wall, rules, scoring, gateway)…\n")
            stack = LocalStack().start()
        address = stack.gateway
    else:
        address = args.gateway_addr or default_address("gateway")
    try:
        return _play(args, address, options, stdin, stdout)
    except grpc.RpcError as exc:
        code = exc.code()
        stdout.write(f"mahjong play: {code.name if code else 'error'}: {exc.details()}\n")
        if code == grpc.StatusCode.UNAVAILABLE:
            stdout.write(f"is a gateway running at {address}? (make run, or play --local)\n")
        return 1
    finally:
        if stack is not None:
            stack.stop()


def _play(args, address: str, options: dict, stdin: TextIO, stdout: TextIO) -> int:
    if args.table and args.token:
        player = TerminalPlayer(
            address,
            args.table,
            args.token,
            seat=args.seat,
            stdin=stdin,
            stdout=stdout,
            name=args.name,
        )
    elif args.sign_in:
        from mahjong_client.signed_in import room_with_bots

        if not args.id_token:  # in development: the development issuer's (make run)
            from devkit.stack import dev_id_token

            args.id_token = dev_id_token(args.name)

        seat = room_with_bots(
            args.matchmaking_addr or default_address("matchmaking"),
            args.id_token,
            args.name,
            stake=args.stake,
            max_hands=args.hands,
            ruleset=args.ruleset,
            options=options,
        )
        stdout.write(
            f"signed in as {seat.player_id} ({seat.silver} silver); room {seat.room_code}, "
            f"table {seat.table_id}: you are seat {seat.seat}, three bots join you\n"
        )
        player = TerminalPlayer(
            seat.gateway_address,
            seat.table_id,
            seat.seat_token,
            seat=seat.seat,
            stdin=stdin,
            stdout=stdout,
            name=args.name,
        )
    elif args.table:
        player = TerminalPlayer.join(
            address,
            args.table,
            player_id=args.name,
            seat=args.seat,
            stdin=stdin,
            stdout=stdout,
            name=args.name,
        )
    else:
        me = args.seat if args.seat is not None else 0
        seats: list[str | None] = [None] * 4
        seats[me] = args.name
        table = create_table(
            address,
            seats,
            stake=args.stake,
            max_hands=args.hands,
            max_rounds=args.rounds,
            ruleset=args.ruleset,
            options=options,
        )
        stdout.write(f"table {table.table_id}: you are seat {me}, three bots join you\n")
        player = TerminalPlayer(
            address,
            table.table_id,
            table.seat_tokens[me],
            seat=me,
            stdin=stdin,
            stdout=stdout,
            name=args.name,
        )
    try:
        # A table created here ends by itself after --hands; on a joined table, stop after them.
        player.run(max_hands=args.hands or None if args.table else None)
    except Quit as why:
        player.say(f"leaving the table ({why})")
        try:
            penalty = player.leave()
            if penalty:
                player.say(f"escape penalty paid: {penalty} chips")
        except Exception as exc:  # the table may be gone already
            player.say(f"leave failed: {exc}")
    finally:
        player.close()
    hands = len(player.log.hand_results)
    player.say(f"played {hands} hand{'s' if hands != 1 else ''}; bye")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mahjong")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["play", *(argv if argv is not None else sys.argv[1:])])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
