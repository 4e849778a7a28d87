"""``mahjong players|queue|room|tournament …``: talk to the matchmaking service from a shell.

Examples::

    mahjong players sign-in "$(mahjong login Alice)"   # prints the session and the player
    mahjong players show --token SESSION_TOKEN
    mahjong players refresh REFRESH_TOKEN     # a new session (the refresh token is rotated)
    mahjong players sign-out --token SESSION_TOKEN --all
    mahjong players balances --token SESSION_TOKEN p-2   # yours in full, others' levels
    mahjong players buy --token SESSION_TOKEN double_card 2
    mahjong players levels
    mahjong queue join --token TOKEN --stake 4 --watch
    mahjong room open --token TOKEN --max-hands 8
    mahjong tournament create --token TOKEN --name Cup --rounds 3 --hands 4 --stake 2 --bots 8
    mahjong tournament create --token TOKEN --name Open --rounds 5 --hands 1 --bots 60 \
        --cut-to 16 --final-rounds 2 --round-seconds 1800
    mahjong tournament standings --token TOKEN T-ID --page-size 100
    mahjong tournament tables --token TOKEN T-ID --round 2
    mahjong tournament retry T-ID              # operator: a STALLED tournament's step now
    mahjong tournament abort T-ID --reason "…"  # operator: end it, every entry refunded

The service address comes from ``--matchmaking-addr`` (default ``MAHJONG_MATCHMAKING_ADDR`` or
the loopback default; the operator's calls go to the internal port with the operator's
certificate, ``--tls-dir``). Output is JSON (protobuf JSON mapping), one object per line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import grpc
from google.protobuf import json_format
from mahjong.common.v1 import common_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.addresses import default_address, default_internal_address
from infra.request_ids import with_request_ids
from infra.tls import (
    TLSConfigError,
    TLSFiles,
    client_channel,
    dial,
    env_insecure,
    operator_tls_dir,
)

TIMEOUT = 10.0


def _print(message) -> None:
    print(json_format.MessageToJson(message, indent=None, ensure_ascii=False), flush=True)


def _call(args: argparse.Namespace, fn: Callable[[pb_grpc.MatchmakingServiceStub], object]) -> int:
    with client_channel(args.matchmaking_addr) as channel:
        # one call, never retried: each gets a new request id (mutating calls require one)
        stub = pb_grpc.MatchmakingServiceStub(with_request_ids(channel))
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


OPERATOR_TLS_HELP = (
    "the operator's certificate (tls.crt, tls.key, ca.crt; default MAHJONG_OPERATOR_TLS_DIR or "
    ".data/tls/operator, made by `mahjong certs`)"
)


def _operator_cmd(parser: argparse.ArgumentParser, build: Callable, *args: tuple) -> None:
    """An operator's call: mutual TLS with the operator's certificate to matchmaking's internal
    port (``--matchmaking-addr``, which the arguments give)."""
    for flags, kwargs in args:
        parser.add_argument(*flags, **kwargs)

    def run(a: argparse.Namespace) -> int:
        files = None if env_insecure() else TLSFiles(Path(a.tls_dir))
        try:
            channel = dial(a.matchmaking_addr, "matchmaking", files)
        except TLSConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        with channel:
            stub = pb_grpc.MatchmakingServiceStub(with_request_ids(channel))
            try:
                _print(build(stub, a))
            except grpc.RpcError as exc:
                print(f"error: {exc.code().name}: {exc.details()}", file=sys.stderr)
                return 1
        return 0

    parser.set_defaults(func=run)


def _token_and_key_calls(sub, key_arg: tuple, key: str, specs: tuple) -> None:
    """Subcommands whose request is just the player token and one key (room code, tournament
    id): ``(name, rpc, request type, help)`` each."""
    for name, rpc, req, help_ in specs:
        _cmd(
            sub.add_parser(name, help=help_),
            lambda s, a, rpc=rpc, req=req: getattr(s, rpc)(
                req(session_token=a.token, **{key: getattr(a, key)}), timeout=TIMEOUT
            ),
            TOKEN,
            key_arg,
        )


_ITEMS = {
    "room_card": pb.ASSET_ROOM_CARD,
    "double_card": pb.ASSET_DOUBLE_CARD,
    "match_card": pb.ASSET_MATCH_CARD,
}
TOKEN = (("--token",), {"required": True, "help": "the session token from `players sign-in`"})
CODE = (("code",), {"help": "the room's six-digit code"})
TID = (("tournament_id",), {})


def register(subparsers) -> None:
    from services.matchmaking import integrity_cli

    integrity_cli.register(subparsers, OPERATOR_TLS_HELP)
    from services.matchmaking import admin_cli

    admin_cli.register(subparsers, OPERATOR_TLS_HELP)
    # --- players -----------------------------------------------------------------------------
    p = subparsers.add_parser("players", help="matchmaking: sign in, accounts, balances, levels")
    ps = p.add_subparsers(dest="players_command", required=True)
    _cmd(
        ps.add_parser("sign-in", help="sign in with an ID token; prints the session and player"),
        lambda s, a: s.SignIn(
            pb.SignInRequest(id_token=a.id_token, display_name=a.display_name), timeout=TIMEOUT
        ),
        (("id_token",), {"help": "an ID token, e.g. $(mahjong login Alice)"}),
        (("--display-name",), {"default": ""}),
    )
    _cmd(
        ps.add_parser("guest", help="a guest session (when the deployment allows guests)"),
        lambda s, a: s.SignInAsGuest(
            pb.SignInAsGuestRequest(display_name=a.display_name), timeout=TIMEOUT
        ),
        (("display_name",), {"nargs": "?", "default": ""}),
    )
    _cmd(
        ps.add_parser("refresh", help="a new session for a refresh token (which is rotated)"),
        lambda s, a: s.RefreshSession(
            pb.RefreshSessionRequest(refresh_token=a.refresh_token), timeout=TIMEOUT
        ),
        (("refresh_token",), {}),
    )
    _cmd(
        ps.add_parser("sign-out", help="end this session (--all: every session of the player)"),
        lambda s, a: s.SignOut(
            pb.SignOutRequest(session_token=a.token, all_sessions=a.all), timeout=TIMEOUT
        ),
        TOKEN,
        (("--all",), {"action": "store_true"}),
    )
    _cmd(
        ps.add_parser("rename", help="change the player's display name"),
        lambda s, a: s.SetDisplayName(
            pb.SetDisplayNameRequest(session_token=a.token, display_name=a.display_name),
            timeout=TIMEOUT,
        ),
        TOKEN,
        (("display_name",), {}),
    )
    _cmd(
        ps.add_parser("show", help="the player's account: silver, level, room cards"),
        lambda s, a: s.GetPlayer(pb.GetPlayerRequest(session_token=a.token), timeout=TIMEOUT),
        TOKEN,
    )
    _cmd(
        ps.add_parser("ledger", help="the player's ledger entries, newest first, a page at a time"),
        lambda s, a: s.ListLedgerEntries(
            pb.ListLedgerEntriesRequest(
                session_token=a.token, page_size=a.page_size, page_token=a.page_token
            ),
            timeout=TIMEOUT,
        ),
        TOKEN,
        (("--page-size",), {"type": int, "default": 0, "help": "1-500 (default 100)"}),
        (("--page-token",), {"default": "", "help": "the previous page's nextPageToken"}),
    )
    _cmd(
        ps.add_parser("balances", help="your balance, and the levels of other players"),
        lambda s, a: s.GetBalances(
            pb.GetBalancesRequest(session_token=a.token, player_ids=a.ids), timeout=TIMEOUT
        ),
        TOKEN,
        (("ids",), {"nargs": "*", "help": "at most 100 player ids (default: yourself)"}),
    )
    _cmd(
        ps.add_parser("prices", help="the items for sale and their prices in silver"),
        lambda s, a: s.ListItemPrices(pb.ListItemPricesRequest(), timeout=TIMEOUT),
    )
    _cmd(
        ps.add_parser("buy", help="buy items with silver: room_card, double_card, match_card"),
        lambda s, a: s.BuyItems(
            pb.BuyItemsRequest(session_token=a.token, asset=_ITEMS[a.item], count=a.count),
            timeout=TIMEOUT,
        ),
        TOKEN,
        (("item",), {"choices": sorted(_ITEMS)}),
        (("count",), {"type": int, "nargs": "?", "default": 1}),
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
            pb.JoinQueueRequest(session_token=a.token, ruleset=_rules(a.ruleset), stake=a.stake),
            timeout=TIMEOUT,
        ).ticket
        if not a.watch:
            return pb.JoinQueueResponse(ticket=ticket)
        return s.WatchAssignments(
            pb.WatchAssignmentsRequest(session_token=a.token, ticket_id=ticket.ticket_id)
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
            pb.LeaveQueueRequest(session_token=a.token, ticket_id=a.ticket_id), timeout=TIMEOUT
        ),
        TOKEN,
        (("ticket_id",), {}),
    )
    _cmd(
        qs.add_parser("watch", help="stream a ticket until it is assigned"),
        lambda s, a: s.WatchAssignments(
            pb.WatchAssignmentsRequest(session_token=a.token, ticket_id=a.ticket_id)
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
                session_token=a.token,
                ruleset=_rules(a.ruleset),
                max_hands=a.max_hands,
                fee_per_hand=a.fee_per_hand,
            ),
            timeout=TIMEOUT,
        ),
        TOKEN,
        (("--ruleset",), {"default": ""}),
        (("--max-hands",), {"type": int, "default": 0}),
        (
            ("--fee-per-hand",),
            {"type": int, "default": 0, "help": "台费: silver each person pays the house a hand"},
        ),
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
            pb.SetRoomStakeRequest(session_token=a.token, code=a.code, stake=a.stake),
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
                pb.AnswerRoomStakeRequest(session_token=a.token, code=a.code, accept=accept),
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
                session_token=a.token,
                name=a.name,
                ruleset=_rules(a.ruleset),
                stake=a.stake,
                rounds=a.rounds,
                hands_per_round=a.hands,
                bots=a.bots,
                entry_silver=a.entry_silver,
                entry_match_cards=a.entry_match_cards,
                cut_to=a.cut_to,
                final_rounds=a.final_rounds,
                round_seconds=a.round_seconds,
            ),
            timeout=TIMEOUT,
        ),
        TOKEN,
        (("--name",), {"required": True}),
        (("--ruleset",), {"default": ""}),
        (("--stake",), {"type": int, "default": 1}),
        (("--rounds",), {"type": int, "default": 3}),
        (("--hands",), {"type": int, "default": 4, "help": "hands per round"}),
        (("--bots",), {"type": int, "default": 0}),
        (("--entry-silver",), {"type": int, "default": 0, "help": "entry fee (the prize pool)"}),
        (("--entry-match-cards",), {"type": int, "default": 0, "help": "entry in 比赛卡"}),
        (("--cut-to",), {"type": int, "default": 0, "help": "after the Swiss rounds, the top N"}),
        (("--final-rounds",), {"type": int, "default": 0, "help": "rounds after the cut"}),
        (("--round-seconds",), {"type": int, "default": 0, "help": "each round's time limit"}),
    )
    _token_and_key_calls(
        ts,
        TID,
        "tournament_id",
        (
            ("join", "JoinTournament", pb.JoinTournamentRequest, "register for a tournament"),
            ("leave", "LeaveTournament", pb.LeaveTournamentRequest, "withdraw before it starts"),
            ("start", "StartTournament", pb.StartTournamentRequest, "start it (the creator)"),
            ("accept", "AcceptInvite", pb.AcceptInviteRequest, "accept the creator's invite"),
            ("decline", "DeclineInvite", pb.DeclineInviteRequest, "decline an invite"),
            ("cancel", "CancelTournament", pb.CancelTournamentRequest, "cancel (the creator)"),
        ),
    )
    _cmd(
        ts.add_parser("invite", help="invite players (the creator); each accepts or declines"),
        lambda s, a: s.InviteToTournament(
            pb.InviteToTournamentRequest(
                session_token=a.token, tournament_id=a.tournament_id, player_ids=a.players
            ),
            timeout=TIMEOUT,
        ),
        TOKEN,
        TID,
        (("players",), {"nargs": "+", "help": "player ids"}),
    )
    _cmd(
        ts.add_parser("bots", help="register bots (the creator)"),
        lambda s, a: s.AddTournamentBots(
            pb.AddTournamentBotsRequest(
                session_token=a.token, tournament_id=a.tournament_id, count=a.count
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
            pb.GetTournamentRequest(tournament_id=a.tournament_id, session_token=a.token or ""),
            timeout=TIMEOUT,
        ),
        TID,
        (("--token",), {"default": ""}),
    )
    page = (
        (("--round",), {"type": int, "default": 0, "help": "0 = now"}),
        (("--page-size",), {"type": int, "default": 0}),
        (("--page-token",), {"default": ""}),
    )
    for name, help_, rpc, request in (
        ("standings", "standings from the ledger (final once finished), paged", "GetStandings",
         pb.GetStandingsRequest),
        ("tables", "a round's tables (the current round by default), paged",
         "ListTournamentTables", pb.ListTournamentTablesRequest),
    ):  # fmt: skip
        _cmd(
            ts.add_parser(name, help=help_),
            lambda s, a, rpc=rpc, request=request: getattr(s, rpc)(
                request(
                    tournament_id=a.tournament_id,
                    session_token=a.token,
                    round=a.round,
                    page_size=a.page_size,
                    page_token=a.page_token,
                ),
                timeout=TIMEOUT,
            ),
            TOKEN,
            TID,
            *page,
        )
    operator = (
        (("--tls-dir",), {"default": operator_tls_dir(), "help": OPERATOR_TLS_HELP}),
        (("--matchmaking-addr",), {"default": default_internal_address("matchmaking")}),
    )
    _operator_cmd(
        ts.add_parser("retry", help="operator: try a STALLED tournament's next step now"),
        lambda s, a: s.RetryTournament(
            pb.RetryTournamentRequest(tournament_id=a.tournament_id), timeout=TIMEOUT
        ),
        TID,
        *operator,
    )
    _operator_cmd(
        ts.add_parser("abort", help="operator: end a tournament, every entry refunded"),
        lambda s, a: s.AbortTournament(
            pb.AbortTournamentRequest(tournament_id=a.tournament_id, reason=a.reason),
            timeout=TIMEOUT,
        ),
        TID,
        (("--reason",), {"required": True, "help": "shown to the entrants"}),
        *operator,
    )
    _cmd(
        ts.add_parser("watch", help="stream the tournament until it ends"),
        lambda s, a: s.WatchTournament(
            pb.WatchTournamentRequest(tournament_id=a.tournament_id, session_token=a.token or "")
        ),
        TID,
        (("--token",), {"default": ""}),
    )
