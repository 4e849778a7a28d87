"""加倍卡 at the gateway (RULES-items §2): a seated player plays a double card for the table's
next hand (PlayDoubleCard).

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

from typing import Protocol

import grpc
from mahjong.matchmaking.v1 import matchmaking_pb2, matchmaking_pb2_grpc

from infra.interceptor import internal_metadata
from services.gateway.forwarding import error_of
from services.gateway.tables.records import Refusal, check_id
from shared.errors import DomainError, FailedPrecondition, PermissionDenied

LEFT_BITS = 32  # a remembered result: hand number << 32 | cards left


class DoubleCardBank(Protocol):
    """Where the cards are held: matchmaking's ledger."""

    def hold(self, table_id: str, tag: str, player_id: str, hand_number: int, stake: int) -> int:
        """Hold one card for the hand; the cards left. DomainError naming a refusal."""

    def release(self, table_id: str, player_id: str, hand_number: int) -> bool: ...


class MatchmakingBank:
    """:class:`DoubleCardBank` over matchmaking's internal port."""

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


def play_double_card(manager, table_id: str, token: str, request_id: str) -> tuple[int, int]:
    """The token's seat plays a 加倍卡 for the next hand: (hand number, cards left)."""
    check_id(request_id, "request_id")
    bank: DoubleCardBank | None = manager.double_cards
    table = manager.table(table_id)
    with table.lock:
        seat = manager._actor(table, token, None)
        if seat is None:
            raise PermissionDenied("a spectator plays no 加倍卡", field="seat_token")
        rid = "double:" + request_id
        if (seat, rid) in table.requests:
            result = table.requests[(seat, rid)].replay()
            return result >> LEFT_BITS, result & ((1 << LEFT_BITS) - 1)
        if not table.owned:
            raise manager._not_owner(table.id)
        manager._refuse_if_over(table)
        session = manager._session(table)
        try:
            number = session.check_double_card(seat)
            if bank is None or not table.report_hands:
                raise FailedPrecondition(
                    "this table keeps no ledger: 加倍卡 are for rated tables and rooms",
                    reason="DOUBLE_CARD_NOT_ALLOWED",
                )
            player_id = session.seats[seat].player_id
            left = bank.hold(table.id, table.tag, player_id, number, session.config.stake)
        except DomainError as exc:
            if exc.reason.startswith("DOUBLE_CARD_"):  # a definite refusal: kept
                with manager.step(table):
                    manager._remember(table, seat, rid, refusal=Refusal.of(exc))
            raise
        try:
            with manager.step(table):
                session.play_double_card(seat)
                manager._remember(table, seat, rid, result=number << LEFT_BITS | left)
        except BaseException:
            bank.release(table.id, player_id, number)
            raise
        return number, left
