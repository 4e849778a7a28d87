"""The operator's RPCs of GatewayService (ListTables, EndTable): a thin translation between
protobuf and :class:`~services.gateway.tables.operations.TableOperations`. Only the operator's
certificate reaches them (``callers`` in :mod:`services.gateway.server`) on the gRPC ports; on
the web port an operator's session does, checked with matchmaking
(:func:`~services.gateway.signed_in.operator_actor`). They are never forwarded (a forwarded
call carries no caller identity). The actor kept in the audit log is the certificate's
subject or the session's (``session:<player id>``)."""

from __future__ import annotations

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from infra.tls import OPERATOR, caller_subject
from services.gateway.convert.events import event_to_proto
from services.gateway.convert.views import view_to_proto
from services.gateway.signed_in import SessionCheck, operator_actor
from services.gateway.tables import TableManager

CONSOLE_METHODS = ("ListTables", "EndTable", "InspectTable")
MATCHMAKING_METHODS = ("SuspendSeat",)


def operator(sessions: SessionCheck | None, context) -> str:
    """Who calls (authorized): the certificate's subject, or a web call's operator session."""
    return operator_actor(sessions, context, caller_subject(context) or OPERATOR)


def list_tables(
    manager: TableManager, sessions: SessionCheck | None, request, context
) -> pb.ListTablesResponse:
    operator(sessions, context)
    found = manager.operations.list_tables(request.tag_prefix, request.stake, request.halted_only)
    return pb.ListTablesResponse(
        tables=[
            pb.TableSummary(
                table_id=t.table_id,
                tag=t.tag,
                phase=t.phase,
                stake=t.stake,
                hands_played=t.hands_played,
                hand_id=t.hand_id,
                hand_number=t.hand_number,
                player_ids=list(t.player_ids),
                auto_play=list(t.auto_play),
                chips=list(t.chips),
                last_sequence=t.last_sequence,
                finish_reason=t.finish_reason,
                left=list(t.left),
            )
            for t in found
        ]
    )


def end_table(
    manager: TableManager, sessions: SessionCheck | None, request, context
) -> pb.EndTableResponse:
    actor = operator(sessions, context)
    ended = manager.operations.end_table(request.table_id, request.reason, actor)
    return pb.EndTableResponse(
        voided_hand_id=ended.voided_hand_id, seed=ended.seed, hands_played=ended.hands_played
    )


def suspend_seat(manager: TableManager, request, context) -> pb.SuspendSeatResponse:
    seat, changed = manager.operations.suspend_player(request.table_id, request.player_id)
    return pb.SuspendSeatResponse(seat=common_pb2.SEAT_0 + seat, changed=changed)


def inspect_table(
    manager: TableManager, sessions: SessionCheck | None, request, context
) -> pb.InspectTableResponse:
    operator(sessions, context)
    view, events, after = manager.operations.inspect(
        request.table_id, request.after_sequence, request.limit
    )
    return pb.InspectTableResponse(
        table=view_to_proto(view),
        events=[event_to_proto(logged, copy) for logged, copy in events],
        next_after_sequence=after,
    )
