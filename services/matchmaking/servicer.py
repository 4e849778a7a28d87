"""MatchmakingService: a thin translation between protobuf and :class:`Matchmaking`."""

from __future__ import annotations

from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from services.matchmaking import convert as conv
from shared.errors import InvalidArgument

from . import levels, queues, tournaments
from .service import Matchmaking


def _name(ref) -> str:
    """A quick-match queue is a preset: house rules belong to private rooms and tournaments."""
    if ref.options:
        raise InvalidArgument(
            "quick-match queues play presets; per-table options are for rooms and tournaments",
            field="ruleset.options",
        )
    return ref.name


class MatchmakingServicer(pb_grpc.MatchmakingServiceServicer):
    def __init__(self, mm: Matchmaking, poll_seconds: float = 0.5) -> None:
        self.mm = mm
        self.poll_seconds = poll_seconds  # streams also re-read the store (other replicas)

    # --- players -----------------------------------------------------------------------------
    def RegisterPlayer(self, request, context):
        player, token = self.mm.register(request.display_name)
        silver = self.mm.account(player.player_id).silver
        return pb.RegisterPlayerResponse(
            player=conv.player_to_proto(player, silver), player_token=token
        )

    def GetPlayer(self, request, context):
        player = self.mm.authenticate(request.player_token)
        acc = self.mm.account(player.player_id)
        message = conv.player_to_proto(acc.player, acc.silver)
        message.queued_ticket_id, message.room_code = self.mm.whereabouts(player.player_id)
        return pb.GetPlayerResponse(player=message)

    def GetBalances(self, request, context):
        out = []
        for pid in request.player_ids:
            if not pid:
                raise InvalidArgument("a player id is empty", field="player_ids")
            silver = self.mm.public_balance(pid)
            out.append(
                pb.Balance(
                    player_id=pid,
                    silver=silver,
                    level=conv.level_to_proto(levels.level_for(silver)),
                )
            )
        return pb.GetBalancesResponse(balances=out)

    def ListLedgerEntries(self, request, context):
        acc, entries = self.mm.entries(request.player_token)
        return pb.ListLedgerEntriesResponse(
            balance=acc.silver, entries=[conv.entry_to_proto(e) for e in entries]
        )

    def ListLevels(self, request, context):
        return pb.ListLevelsResponse(levels=[conv.level_to_proto(lv) for lv in levels.LEVELS])

    # --- quick match -------------------------------------------------------------------------
    def _ticket(self, ticket: queues.Ticket) -> pb.Ticket:
        return conv.ticket_to_proto(ticket, queues.waiting_count(self.mm.store, ticket.queue))

    def JoinQueue(self, request, context):
        ticket = self.mm.join_queue(request.player_token, _name(request.ruleset), request.stake)
        return pb.JoinQueueResponse(ticket=self._ticket(ticket))

    def LeaveQueue(self, request, context):
        ticket = self.mm.leave_queue(request.player_token, request.ticket_id)
        return pb.LeaveQueueResponse(ticket=self._ticket(ticket))

    def WatchAssignments(self, request, context):
        last = None
        while True:
            version = self.mm.version
            ticket = self.mm.ticket(request.player_token, request.ticket_id)
            message = self._ticket(ticket)
            if message != last:
                yield pb.WatchAssignmentsResponse(ticket=message)
                last = message
            if ticket.state in (queues.ASSIGNED, queues.CANCELLED) or not context.is_active():
                return
            self.mm.wait_for_change(version, self.poll_seconds)

    # --- rooms -------------------------------------------------------------------------------
    def OpenRoom(self, request, context):
        room = self.mm.open_room(
            request.player_token,
            request.ruleset.name,
            request.max_hands,
            dict(request.ruleset.options),
        )
        acc = self.mm.account(room.owner)
        return pb.OpenRoomResponse(
            room=conv.room_to_proto(room, room.owner), room_cards_left=acc.player.room_cards
        )

    def JoinRoom(self, request, context):
        room = self.mm.join_room(request.player_token, request.code)
        return pb.JoinRoomResponse(room=self._room(request.player_token, room))

    def GetRoom(self, request, context):
        player, room = self.mm.room(request.player_token, request.code)
        return pb.GetRoomResponse(room=conv.room_to_proto(room, player.player_id))

    def LeaveRoom(self, request, context):
        room = self.mm.leave_room(request.player_token, request.code)
        return pb.LeaveRoomResponse(room=conv.room_to_proto(room))

    def SetRoomStake(self, request, context):
        room = self.mm.set_room_stake(request.player_token, request.code, request.stake)
        return pb.SetRoomStakeResponse(room=self._room(request.player_token, room))

    def AnswerRoomStake(self, request, context):
        room = self.mm.answer_room_stake(request.player_token, request.code, request.accept)
        return pb.AnswerRoomStakeResponse(room=self._room(request.player_token, room))

    def InviteBot(self, request, context):
        room = self.mm.invite_bot(request.player_token, request.code)
        return pb.InviteBotResponse(room=self._room(request.player_token, room))

    def PressStart(self, request, context):
        room = self.mm.press_start(request.player_token, request.code)
        return pb.PressStartResponse(room=self._room(request.player_token, room))

    def _room(self, token: str, room) -> pb.Room:
        return conv.room_to_proto(room, self.mm.authenticate(token).player_id)

    # --- tournaments -------------------------------------------------------------------------
    def CreateTournament(self, request, context):
        t = self.mm.create_tournament(
            request.player_token,
            request.name,
            request.ruleset.name,
            request.stake,
            request.rounds,
            request.hands_per_round,
            list(request.player_ids),
            request.bots,
            dict(request.ruleset.options),
        )
        return pb.CreateTournamentResponse(tournament=conv.tournament_to_proto(t))

    def JoinTournament(self, request, context):
        t = self.mm.register_tournament(request.player_token, request.tournament_id)
        return pb.JoinTournamentResponse(tournament=conv.tournament_to_proto(t))

    def LeaveTournament(self, request, context):
        t = self.mm.withdraw_tournament(request.player_token, request.tournament_id)
        return pb.LeaveTournamentResponse(tournament=conv.tournament_to_proto(t))

    def AddTournamentBots(self, request, context):
        t = self.mm.add_tournament_bots(request.player_token, request.tournament_id, request.count)
        return pb.AddTournamentBotsResponse(tournament=conv.tournament_to_proto(t))

    def StartTournament(self, request, context):
        t = self.mm.start_tournament(request.player_token, request.tournament_id)
        return pb.StartTournamentResponse(tournament=conv.tournament_to_proto(t))

    def _tournament_view(self, tournament_id: str, token: str):
        t = self.mm.tournament(tournament_id)
        assignment = None
        if token:
            player = self.mm.authenticate(token)
            seat = t.assignment_for(player.player_id) if t.state == tournaments.RUNNING else None
            assignment = conv.assignment_to_proto(seat[1]) if seat else None
        return t, conv.tournament_to_proto(t), assignment

    def GetTournament(self, request, context):
        _, t, a = self._tournament_view(request.tournament_id, request.player_token)
        return pb.GetTournamentResponse(tournament=t, assignment=a)

    def GetStandings(self, request, context):
        t = self.mm.tournament(request.tournament_id)
        final = t.state == tournaments.FINISHED
        standings = t.final_ranking if final else self.mm.live_standings(request.tournament_id)
        return pb.GetStandingsResponse(
            standings=[conv.standing_to_proto(s) for s in standings],
            round=t.current_round,
            final=final,
        )

    def WatchTournament(self, request, context):
        last = None
        while True:
            version = self.mm.version
            t, message, assignment = self._tournament_view(
                request.tournament_id, request.player_token
            )
            out = pb.WatchTournamentResponse(tournament=message, assignment=assignment)
            if out != last:
                yield out
                last = out
            if t.state == tournaments.FINISHED or not context.is_active():
                return
            self.mm.wait_for_change(version, self.poll_seconds)

    # --- the gateway's reports ---------------------------------------------------------------
    def RecordHand(self, request, context):
        new = self.mm.record_hand(conv.hand_report_from_proto(request))
        return pb.RecordHandResponse(duplicate=not new)

    def TableFinished(self, request, context):
        self.mm.table_finished(request.table_id, request.tag, request.hands_played)
        return pb.TableFinishedResponse()
