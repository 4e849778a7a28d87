"""加倍卡 at the gateway (RULES-items §2): a seated player plays a double card for the table's
next hand (PlayDoubleCard, :class:`~services.gateway.tables.acting.DoubleCardCalls`), the card
held at matchmaking (:class:`MatchmakingBank`, the
:class:`~services.gateway.domain.ports.DoubleCardBank` port).

The table checks the play (:meth:`TableSession.check_double_card`: a seated human, a table
whose ruleset allows it and no tournament table, between hands or before the first deal, once
per hand); matchmaking then holds one of the player's cards for (table, hand number) after
checking their silver covers twice the most a hand costs (HoldDoubleCard, the gateway's
identity on matchmaking's internal port); then the table records ``double_card_played``
(public) and the hand's scoring doubles. All under the table's lock, so no hand starts between
the check and the record; a record that fails returns the card (ReleaseDoubleCard). The hand's
RecordHand consumes the hold; TableFinished returns the holds of hands that never started.

Idempotent by request id like Act: a retry answers the first result and holds nothing twice
(matchmaking's hold is itself idempotent by table, hand and player).
"""

from __future__ import annotations

import grpc
from mahjong.matchmaking.v1 import matchmaking_pb2, matchmaking_pb2_grpc

from infra.interceptor import internal_metadata
from services.gateway.forwarding import error_of


class MatchmakingBank:
    """:class:`~services.gateway.domain.ports.DoubleCardBank` over matchmaking's internal port."""

    def __init__(self, channel: grpc.Channel, *, timeout: float = 2.0, internal_token: str = ""):
        self.stub = matchmaking_pb2_grpc.MatchmakingServiceStub(channel)
        self.timeout = timeout
        self.metadata = internal_metadata(internal_token)

    def _call(self, method, request):
        try:
            return method(request, timeout=self.timeout, metadata=self.metadata)
        except grpc.RpcError as exc:
            raise error_of(exc) from exc

    def hold(self, table_id: str, tag: str, player_id: str, hand_number: int, stake: int) -> int:
        request = matchmaking_pb2.HoldDoubleCardRequest(
            table_id=table_id, tag=tag, player_id=player_id, hand_number=hand_number, stake=stake
        )
        return self._call(self.stub.HoldDoubleCard, request).double_cards_left

    def release(self, table_id: str, player_id: str, hand_number: int) -> bool:
        request = matchmaking_pb2.ReleaseDoubleCardRequest(
            table_id=table_id, player_id=player_id, hand_number=hand_number
        )
        return self._call(self.stub.ReleaseDoubleCard, request).released
