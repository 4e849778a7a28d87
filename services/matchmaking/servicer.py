"""MatchmakingService: a thin translation between protobuf and :class:`Matchmaking`."""

from __future__ import annotations

from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from services.matchmaking import convert as conv
from shared.errors import InvalidArgument
from shared.tls import OPERATOR, caller_workload

from . import balances, ledger, levels, queues, tournaments
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

    # --- identity ----------------------------------------------------------------------------
    def _player(self, player) -> pb.Player:
        if player.guest or player.bot:  # no ledger account
            return conv.player_to_proto(player)
        return conv.player_to_proto(player, self.mm.asset_balances(player.player_id))

    def SignIn(self, request, context):
        got = self.mm.sign_in(request.id_token, request.display_name)
        return pb.SignInResponse(
            session=conv.session_to_proto(got.session),
            player=self._player(got.player),
            created=got.created,
        )

    def SignInAsGuest(self, request, context):
        got = self.mm.sign_in_as_guest(request.display_name)
        return pb.SignInAsGuestResponse(
            session=conv.session_to_proto(got.session), player=self._player(got.player)
        )

    def RefreshSession(self, request, context):
        player, issued = self.mm.refresh_session(request.refresh_token)
        return pb.RefreshSessionResponse(
            session=conv.session_to_proto(issued), player=self._player(player)
        )

    def SignOut(self, request, context):
        ended = self.mm.sign_out(request.session_token, request.all_sessions)
        return pb.SignOutResponse(sessions_ended=ended)

    def SetDisplayName(self, request, context):
        player = self.mm.set_display_name(request.session_token, request.display_name)
        return pb.SetDisplayNameResponse(player=self._player(player))

    def CheckSession(self, request, context):
        player, claims = self.mm.authenticate_session(request.session_token)
        return pb.CheckSessionResponse(
            player_id=player.player_id,
            display_name=player.display_name,
            guest=player.guest,
            expires_at_unix_ms=claims.expires_at * 1000,
        )

    # --- players -----------------------------------------------------------------------------
    def GetPlayer(self, request, context):
        player, _ = self.mm.authenticate_session(request.session_token)
        message = self._player(player)
        message.issuer, message.subject = player.issuer, player.subject
        if not player.guest:
            message.queued_ticket_id, message.room_code = self.mm.whereabouts(player.player_id)
        return pb.GetPlayerResponse(player=message)

    def GetBalances(self, request, context):
        viewer, _ = self.mm.authenticate_session(request.session_token)
        views = balances.visible_balances(self.mm.store, viewer.player_id, request.player_ids)
        return pb.GetBalancesResponse(
            balances=[
                pb.Balance(
                    player_id=v.player_id,
                    silver=v.silver,
                    level=conv.level_to_proto(v.level),
                    own=v.own,
                )
                for v in views
            ]
        )

    def ListLedgerEntries(self, request, context):
        asset = (
            conv.asset_from_proto(request.asset) if request.asset != pb.ASSET_UNSPECIFIED else None
        )
        held, entries, next_token = self.mm.ledger_page(
            request.session_token, asset, request.page_token, request.page_size
        )
        return pb.ListLedgerEntriesResponse(
            balance=held.get(ledger.SILVER, 0),
            entries=[conv.entry_to_proto(e) for e in entries],
            next_page_token=next_token,
            balances=conv.assets_to_proto(sorted(held.items())),
        )

    # --- items and the house's books ---------------------------------------------------------
    def ListItemPrices(self, request, context):
        return pb.ListItemPricesResponse(
            prices=[
                pb.ItemPrice(asset=conv.asset_to_proto(asset), silver=silver)
                for asset, silver in self.mm.item_prices()
            ]
        )

    def BuyItems(self, request, context):
        asset = conv.asset_from_proto(request.asset)
        player, paid = self.mm.buy_items(
            request.session_token, asset, request.count, request.request_id
        )
        return pb.BuyItemsResponse(player=self._player(player), silver_paid=paid)

    def GrantAssets(self, request, context):  # operator only (server.py's callers)
        assets = [
            (conv.asset_from_proto(a.asset, f"assets[{i}].asset"), a.amount)
            for i, a in enumerate(request.assets)
        ]
        player = self.mm.grant_assets(
            caller_workload(context) or OPERATOR,
            request.player_id,
            assets,
            request.reason,
            request.request_id,
        )
        return pb.GrantAssetsResponse(player=self._player(player))

    def GetReconciliation(self, request, context):  # operator only (server.py's callers)
        books = self.mm.reconciliation(request.day)
        return pb.GetReconciliationResponse(
            day=books.day,
            house_net=books.house_net,
            players=[
                pb.HouseNet(player_id=n.player_id, silver=n.silver, alert=n.alert)
                for n in books.players
            ],
            discrepancies=list(books.discrepancies),
        )

    def ListLevels(self, request, context):
        return pb.ListLevelsResponse(levels=[conv.level_to_proto(lv) for lv in levels.LEVELS])

    # --- quick match -------------------------------------------------------------------------
    def _ticket(self, ticket: queues.Ticket) -> pb.Ticket:
        return conv.ticket_to_proto(ticket, queues.waiting_count(self.mm.store, ticket.queue))

    def JoinQueue(self, request, context):
        ticket = self.mm.join_queue(request.session_token, _name(request.ruleset), request.stake)
        return pb.JoinQueueResponse(ticket=self._ticket(ticket))

    def LeaveQueue(self, request, context):
        ticket = self.mm.leave_queue(request.session_token, request.ticket_id)
        return pb.LeaveQueueResponse(ticket=self._ticket(ticket))

    def WatchAssignments(self, request, context):
        last = None
        while True:
            version = self.mm.version
            ticket = self.mm.ticket(request.session_token, request.ticket_id)
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
            request.session_token,
            request.ruleset.name,
            request.max_hands,
            dict(request.ruleset.options),
        )
        acc = self.mm.account(room.owner)
        return pb.OpenRoomResponse(
            room=conv.room_to_proto(room, room.owner), room_cards_left=acc.room_cards
        )

    def JoinRoom(self, request, context):
        room = self.mm.join_room(request.session_token, request.code)
        return pb.JoinRoomResponse(room=self._room(request.session_token, room))

    def GetRoom(self, request, context):
        player, room = self.mm.room(request.session_token, request.code)
        return pb.GetRoomResponse(room=conv.room_to_proto(room, player.player_id))

    def LeaveRoom(self, request, context):
        room = self.mm.leave_room(request.session_token, request.code)
        return pb.LeaveRoomResponse(room=conv.room_to_proto(room))

    def SetRoomStake(self, request, context):
        room = self.mm.set_room_stake(request.session_token, request.code, request.stake)
        return pb.SetRoomStakeResponse(room=self._room(request.session_token, room))

    def AnswerRoomStake(self, request, context):
        room = self.mm.answer_room_stake(request.session_token, request.code, request.accept)
        return pb.AnswerRoomStakeResponse(room=self._room(request.session_token, room))

    def InviteBot(self, request, context):
        room = self.mm.invite_bot(request.session_token, request.code)
        return pb.InviteBotResponse(room=self._room(request.session_token, room))

    def PressStart(self, request, context):
        room = self.mm.press_start(request.session_token, request.code)
        return pb.PressStartResponse(room=self._room(request.session_token, room))

    def _room(self, token: str, room) -> pb.Room:
        return conv.room_to_proto(room, self.mm.authenticate(token).player_id)

    # --- tournaments -------------------------------------------------------------------------
    def CreateTournament(self, request, context):
        t = self.mm.create_tournament(
            request.session_token,
            request.name,
            request.ruleset.name,
            request.stake,
            request.rounds,
            request.hands_per_round,
            request.bots,  # nobody is entered by another (player_ids is reserved)
            dict(request.ruleset.options),
            entry_silver=request.entry_silver,
            entry_match_cards=request.entry_match_cards,
            prize_percent=list(request.prize_percent),
        )
        return pb.CreateTournamentResponse(tournament=conv.tournament_to_proto(t))

    def JoinTournament(self, request, context):
        t = self.mm.register_tournament(request.session_token, request.tournament_id)
        return pb.JoinTournamentResponse(tournament=conv.tournament_to_proto(t))

    def LeaveTournament(self, request, context):
        t = self.mm.withdraw_tournament(request.session_token, request.tournament_id)
        return pb.LeaveTournamentResponse(tournament=conv.tournament_to_proto(t))

    def InviteToTournament(self, request, context):
        t = self.mm.invite_to_tournament(
            request.session_token, request.tournament_id, list(request.player_ids)
        )
        return pb.InviteToTournamentResponse(tournament=conv.tournament_to_proto(t))

    def AcceptInvite(self, request, context):
        t = self.mm.accept_invite(request.session_token, request.tournament_id)
        return pb.AcceptInviteResponse(tournament=conv.tournament_to_proto(t))

    def DeclineInvite(self, request, context):
        t = self.mm.decline_invite(request.session_token, request.tournament_id)
        return pb.DeclineInviteResponse(tournament=conv.tournament_to_proto(t))

    def CancelTournament(self, request, context):
        t = self.mm.cancel_tournament(request.session_token, request.tournament_id)
        return pb.CancelTournamentResponse(tournament=conv.tournament_to_proto(t))

    def AddTournamentPrize(self, request, context):  # operator only (server.py's callers)
        assets = [
            (conv.asset_from_proto(a.asset, f"assets[{i}].asset"), a.amount)
            for i, a in enumerate(request.assets)
        ]
        t = self.mm.add_tournament_prize(
            request.tournament_id, request.rank, assets, request.reason, request.request_id
        )
        return pb.AddTournamentPrizeResponse(tournament=conv.tournament_to_proto(t))

    def AddTournamentBots(self, request, context):
        t = self.mm.add_tournament_bots(request.session_token, request.tournament_id, request.count)
        return pb.AddTournamentBotsResponse(tournament=conv.tournament_to_proto(t))

    def StartTournament(self, request, context):
        t = self.mm.start_tournament(request.session_token, request.tournament_id)
        return pb.StartTournamentResponse(tournament=conv.tournament_to_proto(t))

    def _tournament_view(self, tournament_id: str, token: str):
        """A tournament as a signed-in caller sees it (a session is required: watch streams
        are counted per player), with the caller's seat."""
        player, _ = self.mm.authenticate_session(token)
        t = self.mm.tournament(tournament_id)
        seat = t.assignment_for(player.player_id) if t.state == tournaments.RUNNING else None
        assignment = conv.assignment_to_proto(seat[1]) if seat and seat[1] else None
        return t, conv.tournament_to_proto(t), assignment

    def GetTournament(self, request, context):
        _, t, a = self._tournament_view(request.tournament_id, request.session_token)
        return pb.GetTournamentResponse(tournament=t, assignment=a)

    def GetStandings(self, request, context):
        self.mm.authenticate_session(request.session_token)
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
                request.tournament_id, request.session_token
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
        new, seats, bots = self.mm.hand_answer(conv.hand_report_from_proto(request))
        return pb.RecordHandResponse(
            duplicate=not new,
            bankrupt_seats=[conv.seat_to_proto(s) for s in seats],
            replacement_player_ids=bots,
        )

    def TableFinished(self, request, context):
        self.mm.table_finished(request.table_id, request.tag, request.hands_played)
        return pb.TableFinishedResponse()

    def HoldDoubleCard(self, request, context):  # the gateway only (server.py's callers)
        left = self.mm.hold_double_card(
            request.table_id, request.tag, request.player_id, request.hand_number, request.stake
        )
        return pb.HoldDoubleCardResponse(double_cards_left=left)

    def ReleaseDoubleCard(self, request, context):  # the gateway only
        released = self.mm.release_double_card(
            request.table_id, request.player_id, request.hand_number
        )
        return pb.ReleaseDoubleCardResponse(released=released)
