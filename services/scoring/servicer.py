"""ScoringService over gRPC: protobuf ↔ domain translation only. The rules live in
:mod:`services.scoring.domain`; conversion and field checks in :mod:`services.scoring.convert`;
domain errors become status codes in the server bootstrap's interceptor."""

from __future__ import annotations

from mahjong.scoring.v1 import scoring_pb2, scoring_pb2_grpc

from services.scoring import convert as S
from services.scoring import domain


class ScoringServicer(scoring_pb2_grpc.ScoringServiceServicer):
    def SettleWin(self, request, context):
        settlement = domain.settle_win(S.win_input_from_proto(request))
        return scoring_pb2.SettleWinResponse(settlement=S.settlement_to_proto(settlement))

    def SettleDraw(self, request, context):
        settlement = domain.settle_draw(S.context_from_proto(request.context))
        return scoring_pb2.SettleDrawResponse(settlement=S.settlement_to_proto(settlement))

    def SettleEscape(self, request, context):
        settlement = domain.settle_escape(
            S.context_from_proto(request.context), S.escaped_seat_from_proto(request)
        )
        return scoring_pb2.SettleEscapeResponse(settlement=S.settlement_to_proto(settlement))
