"""ListTournaments over a real matchmaking server: any signed-in player lists the tournaments
open to join or being played, with their state and entrants; a finished (cancelled) one is not
listed; a forged, empty or signed-out session lists nothing."""

from __future__ import annotations

import grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.probes import rpc_error
from tests.support.stacks import matchmaking_spec

T = 10


def test_signed_in_players_list_open_and_running_tournaments_and_nobody_else_does():
    with serving(matchmaking_spec()) as (_, channel):
        stub = pb_grpc.MatchmakingServiceStub(channel)
        (_, host), (_, guest) = sign_in(stub, "Host"), sign_in(stub, "Guest")

        def create(name: str) -> str:
            req = pb.CreateTournamentRequest(
                session_token=host, name=name, stake=1, rounds=2, hands_per_round=1
            )
            return stub.CreateTournament(req, timeout=T).tournament.tournament_id

        open_, running, cancelled = create("Open Cup"), create("Running Cup"), create("Gone Cup")
        for tid in (open_, running):
            join = pb.JoinTournamentRequest(session_token=guest, tournament_id=tid)
            stub.JoinTournament(join, timeout=T)
        add = pb.AddTournamentBotsRequest(session_token=host, tournament_id=running, count=3)
        stub.AddTournamentBots(add, timeout=T)
        stub.StartTournament(
            pb.StartTournamentRequest(session_token=host, tournament_id=running), timeout=T
        )
        stub.CancelTournament(
            pb.CancelTournamentRequest(session_token=host, tournament_id=cancelled), timeout=T
        )

        def listed(token: str) -> dict[str, pb.TournamentSummary]:
            got = stub.ListTournaments(pb.ListTournamentsRequest(session_token=token), timeout=T)
            return {t.tournament_id: t for t in got.tournaments}

        seen = listed(guest)  # any signed-in player, not only the creator
        assert set(seen) == {open_, running}  # the cancelled one is finished: not listed
        assert seen == listed(host)
        o, r = seen[open_], seen[running]
        assert (o.name, o.state, o.entrant_count) == (
            "Open Cup",
            pb.TOURNAMENT_STATE_REGISTERING,
            1,
        )
        assert (o.started_at_unix_ms, o.current_round, o.rounds) == (0, 0, 2)
        assert (r.state, r.entrant_count, r.current_round) == (pb.TOURNAMENT_STATE_RUNNING, 4, 1)
        assert r.started_at_unix_ms > 0 and r.created_at_unix_ms > 0 and r.stake == 1

        for token in (guest[:-4] + "AAAA", ""):
            code, _, _ = rpc_error(lambda: listed(token))  # noqa: B023
            assert code == grpc.StatusCode.UNAUTHENTICATED
        stub.SignOut(pb.SignOutRequest(session_token=guest), timeout=T)
        code, _, _ = rpc_error(lambda: listed(guest))
        assert code == grpc.StatusCode.UNAUTHENTICATED
