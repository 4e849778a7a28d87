"""``mahjong players|queue|room|tournament …``: talk to the matchmaking service from a shell.

Examples::

    mahjong players register Alice            # prints the id and the player token
    mahjong players show --token TOKEN
    mahjong players balances p-1 p-2 house
    mahjong players levels
    mahjong queue join --token TOKEN --stake 4 --watch
    mahjong room open --token TOKEN --max-hands 8
    mahjong tournament create --token TOKEN --name Cup --rounds 3 --hands 4 --stake 2 --bots 8
    mahjong tournament standings T-ID

The service address comes from ``--matchmaking-addr`` (default ``MAHJONG_MATCHMAKING_ADDR`` or
the loopback default). Output is JSON (protobuf JSON mapping), one object per line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import grpc
from google.protobuf import json_format
from mahjong.common.v1 import common_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from shared.addresses import default_address
from shared.tls import client_channel

TIMEOUT = 10.0


def _print(message) -> None:
    print(json_format.MessageToJson(message, indent=None, ensure_ascii=False), flush=True)


def _call(args: argparse.Namespace, fn: Callable[[pb_grpc.MatchmakingServiceStub], object]) -> int:
    with client_channel(args.matchmaking_addr) as channel:
        stub = pb_grpc.MatchmakingServiceStub(channel)
        try:
            result = fn(stub)
            if hasattr(result, "DESCRIPTOR"):
                _print(result)
            else:
                for message in result:
                    _print(message)
        except grpc.RpcError as exc:
            print(f"error: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
    return 0


def _rules(name: str) -> common_pb2.RulesetRef:
    return common_pb2.RulesetRef(name=name)


def _cmd(parser: argparse.ArgumentParser, build: Callable, *args: tuple) -> None:
    for flags, kwargs in args:
        parser.add_argument(*flags, **kwargs)
    parser.add_argument("--matchmaking-addr", default=default_address("matchmaking"))
    parser.set_defaults(func=lambda a: _call(a, lambda stub: build(stub, a)))


def _token_and_key_calls(sub, key_arg: tuple, key: str, specs: tuple) -> None:
    """Subcommands whose request is just the player token and one key (room code, tournament
    id): ``(name, rpc, request type, help)`` each."""
    for name, rpc, req, help_ in specs:
        _cmd(
            sub.add_parser(name, help=help_),
            lambda s, a, rpc=rpc, req=req: getattr(s, rpc)(
                req(player_token=a.token, **{key: getattr(a, key)}), timeout=TIMEOUT
            ),
            TOKEN,
            key_arg,
        )


TOKEN = (("--token",), {"required": True, "help": "the player token from `players register`"})
CODE = (("code",), {"help": "the room's six-digit code"})
TID = (("tournament_id",), {})


def register(subparsers) -> None:
    # --- players -----------------------------------------------------------------------------
    p = subparsers.add_parser("players", help="matchmaking: register players, balances, levels")
    ps = p.add_subparsers(dest="players_command", required=True)
    _cmd(
        ps.add_parser("register", help="register a player; prints its id and token"),
        lambda s, a: s.RegisterPlayer(
            pb.RegisterPlayerRequest(display_name=a.display_name), timeout=TIMEOUT
        ),
        (("display_name",), {}),
    )
    _cmd(
        ps.add_parser("show", help="the player's account: silver, level, room cards"),
        lambda s, a: s.GetPlayer(pb.GetPlayerRequest(player_token=a.token), timeout=TIMEOUT),
        TOKEN,
    )
    _cmd(
        ps.add_parser("ledger", help="the player's ledger entries"),
        lambda s, a: s.ListLedgerEntries(
            pb.ListLedgerEntriesRequest(player_token=a.token), timeout=TIMEOUT
        ),
        TOKEN,
    )
    _cmd(
        ps.add_parser("balances", help="silver of players, bots or 'house'"),
        lambda s, a: s.GetBalances(pb.GetBalancesRequest(player_ids=a.ids), timeout=TIMEOUT),
        (("ids",), {"nargs": "+"}),
    )
    _cmd(
        ps.add_parser("levels", help="the level table (RULES §11)"),
        lambda s, a: s.ListLevels(pb.ListLevelsRequest(), timeout=TIMEOUT),
    )

    # --- quick match -------------------------------------------------------------------------
    q = subparsers.add_parser("queue", help="matchmaking: quick match queues")
    qs = q.add_subparsers(dest="queue_command", required=True)

    def join(s, a):
        ticket = s.JoinQueue(
            pb.JoinQueueRequest(player_token=a.token, ruleset=_rules(a.ruleset), stake=a.stake),
            timeout=TIMEOUT,
        ).ticket
        if not a.watch:
            return pb.JoinQueueResponse(ticket=ticket)
        return s.WatchAssignments(
            pb.WatchAssignmentsRequest(player_token=a.token, ticket_id=ticket.ticket_id)
        )

    _cmd(
        qs.add_parser("join", help="join a queue (--watch: wait for the table)"),
        join,
        TOKEN,
        (("--ruleset",), {"default": ""}),
        (("--stake",), {"type": int, "default": 0, "help": "0 = your level's tier"}),
        (("--watch",), {"action": "store_true"}),
    )
    _cmd(
        qs.add_parser("leave", help="leave the queue"),
        lambda s, a: s.LeaveQueue(
            pb.LeaveQueueRequest(player_token=a.token, ticket_id=a.ticket_id), timeout=TIMEOUT
        ),
        TOKEN,
        (("ticket_id",), {}),
    )
    _cmd(
        qs.add_parser("watch", help="stream a ticket until it is assigned"),
        lambda s, a: s.WatchAssignments(
            pb.WatchAssignmentsRequest(player_token=a.token, ticket_id=a.ticket_id)
        ),
        TOKEN,
        (("ticket_id",), {}),
    )

    # --- rooms -------------------------------------------------------------------------------
    r = subparsers.add_parser("room", help="matchmaking: private rooms (开房)")
    rs = r.add_subparsers(dest="room_command", required=True)
    _cmd(
        rs.add_parser("open", help="open a room (costs one room card)"),
        lambda s, a: s.OpenRoom(
            pb.OpenRoomRequest(
                player_token=a.token, ruleset=_rules(a.ruleset), max_hands=a.max_hands
            ),
            timeout=TIMEOUT,
        ),
        TOKEN,
        (("--ruleset",), {"default": ""}),
        (("--max-hands",), {"type": int, "default": 0}),
    )
    _token_and_key_calls(
        rs,
        CODE,
        "code",
        (
            ("join", "JoinRoom", pb.JoinRoomRequest, "join a room by its code"),
            ("show", "GetRoom", pb.GetRoomRequest, "the room (with your seat once playing)"),
            ("leave", "LeaveRoom", pb.LeaveRoomRequest, "leave the room"),
            ("bot", "InviteBot", pb.InviteBotRequest, "invite a bot (the owner)"),
            ("start", "PressStart", pb.PressStartRequest, "press Start"),
        ),
    )
    _cmd(
        rs.add_parser("stake", help="set 底分 (the setter only)"),
        lambda s, a: s.SetRoomStake(
            pb.SetRoomStakeRequest(player_token=a.token, code=a.code, stake=a.stake),
            timeout=TIMEOUT,
        ),
        TOKEN,
        CODE,
        (("stake",), {"type": int}),
    )
    for name, accept in (("accept", True), ("refuse", False)):
        _cmd(
            rs.add_parser(name, help=f"{name} the room's 底分"),
            lambda s, a, accept=accept: s.AnswerRoomStake(
                pb.AnswerRoomStakeRequest(player_token=a.token, code=a.code, accept=accept),
                timeout=TIMEOUT,
            ),
            TOKEN,
            CODE,
        )

    # --- tournaments -------------------------------------------------------------------------
    t = subparsers.add_parser("tournament", help="matchmaking: tournaments")
    ts = t.add_subparsers(dest="tournament_command", required=True)
    _cmd(
        ts.add_parser("create", help="create a tournament"),
        lambda s, a: s.CreateTournament(
            pb.CreateTournamentRequest(
                player_token=a.token,
                name=a.name,
                ruleset=_rules(a.ruleset),
                stake=a.stake,
                rounds=a.rounds,
                hands_per_round=a.hands,
                player_ids=a.players,
                bots=a.bots,
            ),
            timeout=TIMEOUT,
        ),
        TOKEN,
        (("--name",), {"required": True}),
        (("--ruleset",), {"default": ""}),
        (("--stake",), {"type": int, "default": 1}),
        (("--rounds",), {"type": int, "default": 3}),
        (("--hands",), {"type": int, "default": 4, "help": "hands per round"}),
        (("--players",), {"nargs": "*", "default": [], "help": "player ids to register"}),
        (("--bots",), {"type": int, "default": 0}),
    )
    _token_and_key_calls(
        ts,
        TID,
        "tournament_id",
        (
            ("join", "JoinTournament", pb.JoinTournamentRequest, "register for a tournament"),
            ("leave", "LeaveTournament", pb.LeaveTournamentRequest, "withdraw before it starts"),
            ("start", "StartTournament", pb.StartTournamentRequest, "start it (the creator)"),
        ),
    )
    _cmd(
        ts.add_parser("bots", help="register bots (the creator)"),
        lambda s, a: s.AddTournamentBots(
            pb.AddTournamentBotsRequest(
                player_token=a.token, tournament_id=a.tournament_id, count=a.count
            ),
            timeout=TIMEOUT,
        ),
        TOKEN,
        TID,
        (("count",), {"type": int}),
    )
    _cmd(
        ts.add_parser("show", help="the tournament (with your seat given --token)"),
        lambda s, a: s.GetTournament(
            pb.GetTournamentRequest(tournament_id=a.tournament_id, player_token=a.token or ""),
            timeout=TIMEOUT,
        ),
        TID,
        (("--token",), {"default": ""}),
    )
    _cmd(
        ts.add_parser("standings", help="standings from the ledger (final once finished)"),
        lambda s, a: s.GetStandings(
            pb.GetStandingsRequest(tournament_id=a.tournament_id), timeout=TIMEOUT
        ),
        TID,
    )
    _cmd(
        ts.add_parser("watch", help="stream the tournament until it ends"),
        lambda s, a: s.WatchTournament(
            pb.WatchTournamentRequest(tournament_id=a.tournament_id, player_token=a.token or "")
        ),
        TID,
        (("--token",), {"default": ""}),
    )
