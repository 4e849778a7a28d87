"""A stalled tournament over a real matchmaking server with TLS (issue 29): TableFinished
answers OK once the table is recorded even while the next step fails; the tournament becomes
STALLED with its reason in GetTournament and WatchTournament; only an operator's certificate
may retry it or abort it (a player and the gateway are refused, nothing changes); an abort
refunds every entry. And a large tournament's message carries no lists, which the paged
GetStandings and ListTournamentTables give instead."""

from __future__ import annotations

import grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.interceptor import internal_metadata
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tournaments import tournament as tournaments
from tests.support.grpc_server import channel_to, serving
from tests.support.identity import sign_in
from tests.support.probes import rpc_error
from tests.support.stacks import matchmaking_spec
from tests.unit.matchmaking.mm_fakes import FakeAllocator

TOKEN = "internal-test-token"
T = 10


def _stub(server, caller):
    channel = channel_to(server, "matchmaking", caller)
    return channel, pb_grpc.MatchmakingServiceStub(channel)


def _stall(mm, alloc, tid: str) -> None:
    """The gateway down through STALL_AFTER tries, the clock moved past each backoff."""
    alloc.down = True
    for _ in range(tournaments.STALL_AFTER):
        mm.clock.advance(tournaments.backoff_s(mm.tournament(tid).failures))
        mm.tick()


def test_a_stalled_tournament_says_so_and_only_an_operator_retries_or_aborts_it():
    alloc = FakeAllocator()
    with serving(matchmaking_spec(alloc), internal_token=TOKEN) as (server, channel):
        player = pb_grpc.MatchmakingServiceStub(channel)
        mm = server.resource.matchmaking
        _, creator = sign_in(player, "Creator")
        others = [sign_in(player, f"P{i}")[1] for i in range(3)]
        t = player.CreateTournament(
            pb.CreateTournamentRequest(
                session_token=creator, name="Cup", stake=1, rounds=2, hands_per_round=1,
                entry_silver=50, request_id="c1",
            ),
            timeout=T,
        ).tournament  # fmt: skip
        tid = t.tournament_id
        for i, tok in enumerate([creator, *others]):
            player.JoinTournament(
                pb.JoinTournamentRequest(session_token=tok, tournament_id=tid, request_id=f"j{i}"),
                timeout=T,
            )
        alloc.down = True
        started = player.StartTournament(
            pb.StartTournamentRequest(session_token=creator, tournament_id=tid, request_id="s"),
            timeout=T,
        ).tournament
        assert started.state == pb.TOURNAMENT_STATE_RUNNING and started.current_round == 1
        _stall(mm, alloc, tid)
        got = player.GetTournament(
            pb.GetTournamentRequest(tournament_id=tid, session_token=creator), timeout=T
        ).tournament
        assert got.state == pb.TOURNAMENT_STATE_STALLED
        assert "fake gateway is down" in got.stall_reason and got.retry_at_unix_ms > 0
        watch = player.WatchTournament(
            pb.WatchTournamentRequest(tournament_id=tid, session_token=creator), timeout=T
        )
        first = next(watch)
        watch.cancel()
        assert first.tournament.state == pb.TOURNAMENT_STATE_STALLED

        retry = pb.RetryTournamentRequest(tournament_id=tid, request_id="r1")
        abort = pb.AbortTournamentRequest(tournament_id=tid, reason="gateway gone", request_id="a1")
        code, _, _ = rpc_error(lambda: player.RetryTournament(retry, timeout=T))
        assert code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
        code, _, _ = rpc_error(lambda: player.AbortTournament(abort, timeout=T))
        assert code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
        gw_channel, gateway = _stub(server, "gateway")
        op_channel, operator = _stub(server, "operator")
        meta = internal_metadata(TOKEN)
        try:
            code, _, info = rpc_error(
                lambda: gateway.AbortTournament(abort, metadata=meta, timeout=T)
            )
            assert code == grpc.StatusCode.PERMISSION_DENIED and info.reason == "CALLER_NOT_ALLOWED"
            assert mm.tournament(tid).state == tournaments.STALLED  # nothing changed

            # The gateway is back: the operator's retry creates the tables and it runs again.
            alloc.down = False
            again = operator.RetryTournament(retry, metadata=meta, timeout=T).tournament
            assert again.state == pb.TOURNAMENT_STATE_RUNNING and not again.stall_reason
            assert all(x.table_id for x in again.tables)

            # A table's report is answered OK even while the round's next step would fail.
            x = again.tables[0]
            tag = f"tournament/{tid}/round/1/table/{x.index}"
            report = pb.RecordHandRequest(
                hand_id="h1", table_id=x.table_id, tag=tag, player_ids=x.player_ids,
                payments=[3, -1, -1, -1], hand_number=1,
            )  # fmt: skip
            gateway.RecordHand(report, metadata=meta, timeout=T)
            finished = pb.TableFinishedRequest(table_id=x.table_id, tag=tag, hands_played=1)
            gateway.TableFinished(finished, metadata=meta, timeout=T)
            gateway.TableFinished(finished, metadata=meta, timeout=T)  # a repeat: OK again

            ended = operator.AbortTournament(abort, metadata=meta, timeout=T).tournament
            assert ended.state == pb.TOURNAMENT_STATE_FINISHED and ended.cancelled
            assert ended.failure == "ended by an operator: gateway gone"
            code, _, info = rpc_error(
                lambda: operator.AbortTournament(
                    pb.AbortTournamentRequest(tournament_id=tid, reason="x", request_id="a2"),
                    metadata=meta,
                    timeout=T,
                )
            )
            assert code == grpc.StatusCode.FAILED_PRECONDITION
            empty = pb.AbortTournamentRequest(tournament_id=tid, reason=" ", request_id="a3")
            code, _, _ = rpc_error(
                lambda: operator.AbortTournament(empty, metadata=meta, timeout=T)
            )
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            # each of the operator's acts, done or refused, is in the audit log
            entries = operator.ListAuditLog(pb.ListAuditLogRequest(), timeout=T).entries
            acts = [(e.action, e.result) for e in entries if e.target == tid]
            assert acts[0] == ("RetryTournament", "OK")
            assert acts[-3:] == [
                ("AbortTournament", "OK"),
                ("AbortTournament", "FAILED_PRECONDITION"),
                ("AbortTournament", "INVALID_ARGUMENT"),
            ]
        finally:
            gw_channel.close()
            op_channel.close()
        mm.tick()
        paid = dict(zip(x.player_ids, [3, -1, -1, -1], strict=True))
        for tok in [creator, *others]:
            pid = mm.authenticate(tok).player_id
            # every entry back; the hand played before the abort moved silver as any hand does
            assert ledger.balance(mm.store, pid) == 1000 + paid[pid]
        assert ledger.reconcile(mm.store) == []


def test_a_large_tournament_is_read_a_page_at_a_time():
    alloc = FakeAllocator()
    with serving(matchmaking_spec(alloc), internal_token=TOKEN) as (server, channel):
        player = pb_grpc.MatchmakingServiceStub(channel)
        mm = server.resource.matchmaking
        _, creator = sign_in(player, "Creator")
        t = player.CreateTournament(
            pb.CreateTournamentRequest(
                session_token=creator, name="Open", stake=1, rounds=2, hands_per_round=1,
                bots=260, request_id="c",
            ),
            timeout=T,
        ).tournament  # fmt: skip
        assert t.entrant_count == 260 and t.lists_paged and not t.entrants
        tid = t.tournament_id
        player.StartTournament(
            pb.StartTournamentRequest(session_token=creator, tournament_id=tid, request_id="s"),
            timeout=T,
        )
        mm.tick()
        got = player.GetTournament(
            pb.GetTournamentRequest(tournament_id=tid, session_token=creator), timeout=T
        ).tournament
        assert got.lists_paged and not got.tables and not got.standings
        (r1,) = got.round_progress
        assert (r1.round, r1.kind, r1.tables, r1.tables_started) == (1, pb.ROUND_KIND_SWISS, 65, 65)
        seen, token = [], ""
        while True:
            page = player.ListTournamentTables(
                pb.ListTournamentTablesRequest(
                    tournament_id=tid, session_token=creator, page_size=30, page_token=token
                ),
                timeout=T,
            )
            seen += page.tables
            token = page.next_page_token
            if not token:
                break
        assert page.total == 65 and [x.index for x in seen] == list(range(65))
        assert sorted(p for x in seen for p in x.player_ids) == sorted(
            e.player_id for e in mm.tournament(tid).entrants
        )
        ranks, token = [], ""
        while True:
            page = player.GetStandings(
                pb.GetStandingsRequest(
                    tournament_id=tid, session_token=creator, page_size=100, page_token=token
                ),
                timeout=T,
            )
            ranks += [s.rank for s in page.standings]
            token = page.next_page_token
            if not token:
                break
        assert ranks == list(range(1, 261)) and page.total == 260 and not page.final
        code, _, info = rpc_error(
            lambda: player.GetStandings(
                pb.GetStandingsRequest(tournament_id=tid, session_token=creator, page_size=5000),
                timeout=T,
            )
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "page_size" in info.metadata["field"]
        code, _, _ = rpc_error(
            lambda: player.ListTournamentTables(
                pb.ListTournamentTablesRequest(
                    tournament_id=tid, session_token=creator, page_token="not-ours"
                ),
                timeout=T,
            )
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        code, _, _ = rpc_error(
            lambda: player.ListTournamentTables(
                pb.ListTournamentTablesRequest(tournament_id=tid, session_token="forged"),
                timeout=T,
            )
        )
        assert code == grpc.StatusCode.UNAUTHENTICATED
