"""Who may move items, over a real matchmaking server with TLS: a 加倍卡 is held only for the
gateway's certificate (HoldDoubleCard), a tournament prize is funded only by an operator's
(AddTournamentPrize) — a player is refused and nothing moves; and a CreateTournament that still
sends the old player_ids (field 7) on the wire enters nobody (an unknown field)."""

from __future__ import annotations

import grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.interceptor import internal_metadata
from services.matchmaking.domain.economy import ledger
from tests.support.grpc_server import channel_to, serving
from tests.support.identity import sign_in
from tests.support.probes import rpc_error
from tests.support.stacks import matchmaking_spec, queued_table, table_fees
from tests.unit.matchmaking.mm_fakes import FakeAllocator

TOKEN = "internal-test-token"
T = 10


def _as(server, caller):
    return channel_to(server, "matchmaking", caller)


def test_double_cards_are_held_for_the_gateway_alone():
    alloc = FakeAllocator()
    with serving(matchmaking_spec(alloc), internal_token=TOKEN) as (server, channel):
        player = pb_grpc.MatchmakingServiceStub(channel)
        mm = server.resource.matchmaking
        table_id, tag, ids = queued_table(player, mm, alloc, T)
        legs = [
            ledger.Leg(ids[0], ledger.DOUBLE_CARD, 2, ledger.OPERATOR_GRANT, "test"),
            ledger.Leg(ledger.HOUSE, ledger.DOUBLE_CARD, -2, ledger.OPERATOR_GRANT, "test"),
        ]
        ledger.transact(mm.store, "test/cards", legs, mm.clock())
        hold = pb.HoldDoubleCardRequest(
            table_id=table_id, tag=tag, player_id=ids[0], hand_number=1, stake=1
        )
        code, _, info = rpc_error(
            lambda: player.HoldDoubleCard(hold, metadata=internal_metadata(TOKEN), timeout=T)
        )
        assert code == grpc.StatusCode.UNAUTHENTICATED  # a player: no workload certificate
        assert info.reason == "NO_WORKLOAD_CERTIFICATE"
        assert ledger.balance(mm.store, ids[0], ledger.DOUBLE_CARD) == 2
        gw_channel = _as(server, "gateway")
        try:
            gateway = pb_grpc.MatchmakingServiceStub(gw_channel)
            meta = internal_metadata(TOKEN)
            assert gateway.HoldDoubleCard(hold, metadata=meta, timeout=T).double_cards_left == 1
            assert gateway.HoldDoubleCard(hold, metadata=meta, timeout=T).double_cards_left == 1
            report = pb.RecordHandRequest(
                hand_id="h1", table_id=table_id, tag=tag, player_ids=ids,
                payments=[-20, 20, 0, 0], hand_number=1, doubled_seats=[1],  # seat 0 = SEAT_0
                fees=table_fees(alloc, table_id),
            )  # fmt: skip
            gateway.RecordHand(report, metadata=meta, timeout=T)
            release = pb.ReleaseDoubleCardRequest(
                table_id=table_id, player_id=ids[0], hand_number=1
            )
            assert gateway.ReleaseDoubleCard(release, metadata=meta, timeout=T).released is False
        finally:
            gw_channel.close()
        assert ledger.balance(mm.store, ids[0], ledger.DOUBLE_CARD) == 1  # held once, consumed
        assert ledger.reconcile(mm.store) == []


def test_only_an_operator_funds_a_prize_and_field_7_enters_nobody():
    with serving(matchmaking_spec(FakeAllocator()), internal_token=TOKEN) as (server, channel):
        player = pb_grpc.MatchmakingServiceStub(channel)
        mm = server.resource.matchmaking
        _, creator = sign_in(player, "Creator")
        victim, _ = sign_in(player, "Victim")
        request = pb.CreateTournamentRequest(
            session_token=creator, name="Cup", stake=1, rounds=1, hands_per_round=1
        )
        # the wire of an old client: player_ids (field 7, a repeated string) = [victim]
        raw = request.SerializeToString() + b"\x3a" + bytes([len(victim.player_id)])
        raw += victim.player_id.encode()
        t = player.CreateTournament(pb.CreateTournamentRequest.FromString(raw), timeout=T)
        tid = t.tournament.tournament_id
        assert list(t.tournament.entrants) == []
        prize = pb.AddTournamentPrizeRequest(
            tournament_id=tid, rank=1, reason="cup", request_id="p1",
            assets=[pb.AssetAmount(asset=pb.ASSET_SILVER, amount=500)],
        )  # fmt: skip
        code, _, _ = rpc_error(lambda: player.AddTournamentPrize(prize, timeout=T))
        assert code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
        gw_channel = _as(server, "gateway")  # another workload is no operator either
        try:
            code, _, info = rpc_error(
                lambda: pb_grpc.MatchmakingServiceStub(gw_channel).AddTournamentPrize(
                    prize, metadata=internal_metadata(TOKEN), timeout=T
                )
            )
            assert code == grpc.StatusCode.PERMISSION_DENIED and info.reason == "CALLER_NOT_ALLOWED"
        finally:
            gw_channel.close()
        assert mm.tournament(tid).house_prizes == ()
        op_channel = _as(server, "operator")
        try:
            got = pb_grpc.MatchmakingServiceStub(op_channel).AddTournamentPrize(
                prize, metadata=internal_metadata(TOKEN), timeout=T
            )
        finally:
            op_channel.close()
        assert [(h.asset, h.amount) for h in got.tournament.house_prizes] == [
            (pb.ASSET_SILVER, 500)
        ]
