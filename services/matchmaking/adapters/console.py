"""The operator's console RPCs of MatchmakingService (FindPlayers, SuspendPlayer,
LiftSuspension, RevokeSession, ListAuditLog): a thin translation between protobuf and
:class:`~services.matchmaking.domain.operations.console.OperatorDesk`. Only the operator's
certificate reaches them on the gRPC ports (``callers`` in :mod:`services.matchmaking.server`);
on the web port an operator's session does (:mod:`infra.operator_calls`, verified here). The
actor recorded in the audit log is the certificate's subject or the session's
(``session:<player id> <issuer>#<subject>``)."""

from __future__ import annotations

from collections.abc import Callable

from mahjong.common.v1 import common_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb

from infra.operator_calls import web_operator_token
from infra.tls import OPERATOR, caller_subject
from services.matchmaking.adapters import convert as conv
from services.matchmaking.domain.operations.audit import AuditEntry
from services.matchmaking.domain.operations.console import Dossier, OperatorDesk
from services.matchmaking.domain.operations.suspensions import Suspension

CONSOLE_METHODS = (
    "FindPlayers",
    "SuspendPlayer",
    "LiftSuspension",
    "RevokeSession",
    "ListAuditLog",
)


def actor_of(context) -> str:
    """Who acts, for the audit log (:func:`infra.tls.caller_subject`)."""
    return caller_subject(context) or OPERATOR


def suspension_to_proto(s: Suspension) -> pb.Suspension:
    return pb.Suspension(
        reason=s.reason, since_unix_ms=s.since_ms, until_unix_ms=s.until_ms, by=s.by
    )


def audit_entry_to_proto(seq: int, e: AuditEntry) -> pb.AuditEntry:
    return pb.AuditEntry(
        sequence=seq,
        at_unix_ms=e.at_ms,
        actor=e.actor,
        action=e.action,
        target=e.target,
        reason=e.reason,
        result=e.result,
        detail=e.detail,
    )


def dossier_to_proto(d: Dossier, fee_units: int) -> pb.PlayerDossier:
    player = conv.player_to_proto(d.player, d.balances or None, fee_units)
    player.issuer, player.subject = d.player.issuer, d.player.subject
    out = pb.PlayerDossier(
        player=player,
        sessions=[
            pb.SessionSummary(
                session_id=s.session_id,
                guest=s.guest,
                created_at_unix_ms=s.created_ms,
                expires_at_unix_ms=s.expires_ms,
                refresh_expires_at_unix_ms=s.refresh_expires_ms,
            )
            for s in d.sessions
        ],
        seats=[
            pb.PlayerSeat(table_id=s.table_id, seat=common_pb2.SEAT_0 + s.seat, tag=s.tag)
            for s in d.seats
        ],
        queued_ticket_id=d.queued_ticket_id,
        room_code=d.room_code,
        last_entries=[conv.entry_to_proto(e) for e in d.last_entries],
    )
    if d.suspension is not None:
        out.suspension.CopyFrom(suspension_to_proto(d.suspension))
    return out


class ConsoleCalls:
    """The console's handlers, bound onto the MatchmakingServicer."""

    def __init__(
        self, desk: OperatorDesk, fee_units: int, operator_session: Callable[[str], str]
    ) -> None:
        """``operator_session``: the actor of an operator's session token (raises for any
        other token)."""
        self.desk = desk
        self.fee_units = fee_units
        self.operator_session = operator_session

    def actor(self, context) -> str:
        """Who calls: a web call's operator session (verified), else the certificate."""
        token = web_operator_token(context)
        return actor_of(context) if token is None else self.operator_session(token)

    def FindPlayers(self, request, context):
        self.actor(context)
        found = self.desk.find_players(
            request.player_id, request.display_name, request.ledger_entries
        )
        return pb.FindPlayersResponse(players=[dossier_to_proto(d, self.fee_units) for d in found])

    def SuspendPlayer(self, request, context):
        done = self.desk.suspend(
            self.actor(context),
            request.player_id,
            request.reason,
            request.until_unix_ms,
        )
        return pb.SuspendPlayerResponse(
            suspension=suspension_to_proto(done.suspension),
            sessions_revoked=done.sessions_revoked,
            table_ids=list(done.table_ids),
            tables_not_told=list(done.not_told),
        )

    def LiftSuspension(self, request, context):
        lifted = self.desk.lift(self.actor(context), request.player_id, request.reason)
        return pb.LiftSuspensionResponse(lifted=lifted)

    def RevokeSession(self, request, context):
        revoked = self.desk.revoke_session(
            self.actor(context),
            request.player_id,
            request.session_id,
            request.reason,
        )
        return pb.RevokeSessionResponse(revoked=revoked)

    def ListAuditLog(self, request, context):
        self.actor(context)
        entries, after = self.desk.audit_page(request.after_sequence, request.limit)
        return pb.ListAuditLogResponse(
            entries=[audit_entry_to_proto(seq, e) for seq, e in entries],
            next_after_sequence=after,
        )
