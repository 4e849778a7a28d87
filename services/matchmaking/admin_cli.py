"""``mahjong admin …``: the operator's console from a terminal — find a player, suspend and lift,
revoke a session, read and export the audit log. Each is a call to matchmaking's internal port
with the operator's certificate (mutual TLS); a change carries ``--reason`` (required: it goes
into the audit log) and a new request id. Registered by :func:`services.matchmaking.cli.register`.

    mahjong admin find (--player-id P | --name NAME) [--entries N]
    mahjong admin suspend P --reason "…" [--until 2027-01-01T00:00:00Z]
    mahjong admin lift P --reason "…"
    mahjong admin revoke-session P S --reason "…"
    mahjong admin audit [--after SEQ] [--limit N]     # a page, as JSON
    mahjong admin audit --export > audit.jsonl         # every entry, one JSON object a line
    mahjong admin tables [--tag-prefix room/] [--stake N] [--halted]   # the whole cluster's
    mahjong admin inspect TABLE [--after SEQ] [--limit N]   # public state and log
    mahjong admin end-table TABLE --reason "…"

The last three call a gateway replica's internal port (``--gateway-addr``), any replica: it
lists every replica's tables, and sends InspectTable and EndTable on to the table's owner with
the operator's claim (README "Operations").
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Callable
from pathlib import Path

import grpc
from google.protobuf import json_format
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.addresses import default_internal_address
from infra.request_ids import with_request_ids
from infra.tls import TLSConfigError, TLSFiles, dial, env_insecure, operator_tls_dir

TIMEOUT = 30.0
EXPORT_PAGE = 1000


def _json(message) -> str:
    return json_format.MessageToJson(message, indent=None, ensure_ascii=False)


def until_ms(text: str) -> int:
    """``--until``: an ISO 8601 time (UTC when no offset is given), or unix milliseconds."""
    if not text:
        return 0
    if text.isdigit():
        return int(text)
    try:
        when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--until {text!r}: not an ISO 8601 time") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return int(when.timestamp() * 1000)


def _operator(
    parser: argparse.ArgumentParser, tls_help: str, run: Callable, service: str = "matchmaking"
) -> None:
    parser.add_argument("--tls-dir", default=operator_tls_dir(), help=tls_help)
    flag = f"--{service}-addr"
    parser.add_argument(flag, dest="addr", default=default_internal_address(service))

    def call(args: argparse.Namespace) -> int:
        files = None if env_insecure() else TLSFiles(Path(args.tls_dir))
        try:
            channel = dial(args.addr, service, files)
        except TLSConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        with channel:
            if service == "gateway":
                stub = gateway_pb2_grpc.GatewayServiceStub(channel)
            else:
                stub = pb_grpc.MatchmakingServiceStub(with_request_ids(channel))
            try:
                run(stub, args)
            except grpc.RpcError as exc:
                print(f"error: {exc.code().name}: {exc.details()}", file=sys.stderr)
                return 1
        return 0

    parser.set_defaults(func=call)


def _find(stub, a) -> None:
    request = pb.FindPlayersRequest(
        player_id=a.player_id, display_name=a.name, ledger_entries=a.entries
    )
    print(_json(stub.FindPlayers(request, timeout=TIMEOUT)), flush=True)


def _suspend(stub, a) -> None:
    request = pb.SuspendPlayerRequest(player_id=a.player_id, reason=a.reason, until_unix_ms=a.until)
    print(_json(stub.SuspendPlayer(request, timeout=TIMEOUT)), flush=True)


def _lift(stub, a) -> None:
    request = pb.LiftSuspensionRequest(player_id=a.player_id, reason=a.reason)
    print(_json(stub.LiftSuspension(request, timeout=TIMEOUT)), flush=True)


def _revoke(stub, a) -> None:
    request = pb.RevokeSessionRequest(
        player_id=a.player_id, session_id=a.session_id, reason=a.reason
    )
    print(_json(stub.RevokeSession(request, timeout=TIMEOUT)), flush=True)


def _audit(stub, a) -> None:
    if not a.export:
        request = pb.ListAuditLogRequest(after_sequence=a.after, limit=a.limit)
        print(_json(stub.ListAuditLog(request, timeout=TIMEOUT)), flush=True)
        return
    after = a.after
    while True:  # every entry from --after on, one JSON object a line (JSON lines)
        request = pb.ListAuditLogRequest(after_sequence=after, limit=EXPORT_PAGE)
        page = stub.ListAuditLog(request, timeout=TIMEOUT)
        for entry in page.entries:
            print(_json(entry), flush=True)
        if not page.next_after_sequence:
            return
        after = page.next_after_sequence


def _tables(stub, a) -> None:
    request = gateway_pb2.ListTablesRequest(
        tag_prefix=a.tag_prefix, stake=a.stake, halted_only=a.halted
    )
    print(_json(stub.ListTables(request, timeout=TIMEOUT)), flush=True)


def _inspect(stub, a) -> None:
    request = gateway_pb2.InspectTableRequest(
        table_id=a.table_id, after_sequence=a.after, limit=a.limit
    )
    print(_json(stub.InspectTable(request, timeout=TIMEOUT)), flush=True)


def _end_table(stub, a) -> None:
    request = gateway_pb2.EndTableRequest(table_id=a.table_id, reason=a.reason)
    print(_json(stub.EndTable(request, timeout=TIMEOUT)), flush=True)


def register(subparsers, tls_help: str) -> None:
    p = subparsers.add_parser("admin", help="operator: the console (players, suspensions, audit)")
    sub = p.add_subparsers(dest="admin_command", required=True)
    reason = {"required": True, "help": "why (required; kept in the audit log)"}

    find = sub.add_parser("find", help="a player by id or display name, with what they hold")
    who = find.add_mutually_exclusive_group(required=True)
    who.add_argument("--player-id", default="")
    who.add_argument("--name", default="", help="a display name (exact, any case)")
    find.add_argument("--entries", type=int, default=10, help="last ledger entries (0-100)")
    _operator(find, tls_help, _find)

    suspend = sub.add_parser("suspend", help="suspend a player: sessions end, calls refused")
    suspend.add_argument("player_id")
    suspend.add_argument("--reason", **reason)
    suspend.add_argument(
        "--until",
        type=until_ms,
        default=0,
        help="when it ends: ISO 8601 (UTC unless an offset is given) or unix ms; "
        "default: until lifted",
    )
    _operator(suspend, tls_help, _suspend)

    lift = sub.add_parser("lift", help="lift a player's suspension")
    lift.add_argument("player_id")
    lift.add_argument("--reason", **reason)
    _operator(lift, tls_help, _lift)

    revoke = sub.add_parser("revoke-session", help="end one session of a player")
    revoke.add_argument("player_id")
    revoke.add_argument("session_id")
    revoke.add_argument("--reason", **reason)
    _operator(revoke, tls_help, _revoke)

    audit = sub.add_parser("audit", help="the audit log: a page, or --export as JSON lines")
    audit.add_argument("--after", type=int, default=0, help="entries after this sequence")
    audit.add_argument("--limit", type=int, default=100, help="entries per page (1-1000)")
    audit.add_argument("--export", action="store_true", help="every entry, one JSON a line")
    _operator(audit, tls_help, _audit)

    tables = sub.add_parser("tables", help="every gateway replica's tables, filtered")
    tables.add_argument("--tag-prefix", default="", help="room/, room/CODE, tournament/ID/, quick/")
    tables.add_argument("--stake", type=int, default=0, help="only this stake (0: any)")
    tables.add_argument("--halted", action="store_true", help="only halted tables")
    _operator(tables, tls_help, _tables, "gateway")

    inspect = sub.add_parser("inspect", help="a table's public state and log, as a spectator's")
    inspect.add_argument("table_id")
    inspect.add_argument("--after", type=int, default=0, help="events after this sequence")
    inspect.add_argument("--limit", type=int, default=200, help="events (1-1000)")
    _operator(inspect, tls_help, _inspect, "gateway")

    end = sub.add_parser("end-table", help="end a table: its hand voided, its wall revealed")
    end.add_argument("table_id")
    end.add_argument("--reason", **reason)
    _operator(end, tls_help, _end_table, "gateway")
