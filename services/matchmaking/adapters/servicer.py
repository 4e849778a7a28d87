"""MatchmakingService: a thin translation between protobuf and :class:`Matchmaking`."""

from __future__ import annotations

import threading
import time

from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.convert.common import seat_to_proto
from infra.interceptor import peer_address
from services.matchmaking.adapters import convert as conv
from services.matchmaking.adapters.console import ConsoleCalls, actor_of
from services.matchmaking.domain.economy import balances, ledger
from services.matchmaking.domain.integrity import scoring as integrity_scoring
from services.matchmaking.domain.queues import levels
from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.domain.tournaments import tournament as tournaments
from services.matchmaking.service import Matchmaking
from shared.errors import InvalidArgument

WATCH_MIN_INTERVAL_S = 1.0  # a WatchTournament stream's messages at most this often


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
        self._messages: dict[str, tuple[object, pb.Tournament]] = {}
        self._messages_lock = threading.Lock()
        self.console = ConsoleCalls(
            mm.operations, mm.config.level_fee_units, mm.authenticate_operator
        )

    # --- identity ----------------------------------------------------------------------------
    def _player(self, player) -> pb.Player:
        if player.guest or player.bot:  # no ledger account
            return conv.player_to_proto(player, None, self.mm.config.level_fee_units)
        return conv.player_to_proto(
            player, self.mm.asset_balances(player.player_id), self.mm.config.level_fee_units
        )

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
            operator=bool((record := self.mm.sessions.record(claims)) and record.operator),
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
        views = balances.visible_balances(
            self.mm.store, self.mm.players, viewer.player_id, request.player_ids
        )
        return pb.GetBalancesResponse(
            balances=[
                pb.Balance(
                    player_id=v.player_id,
                    silver=v.silver,
                    level=conv.level_to_proto(v.level, self.mm.config.level_fee_units),
                    own=v.own,
                )
                for v in views
            ]
        )

    def ListLiveSeats(self, request, context):
        return pb.ListLiveSeatsResponse(
            seats=[
                pb.LiveSeat(
                    table_id=s.table.table_id,
                    seat=seat_to_proto(s.seat),
                    tag=s.table.tag,
                    ruleset=s.table.ruleset,
                    stake=s.table.stake,
                )
                for s in self.mm.seated(request.session_token)
            ]
        )

    def ListLedgerEntries(self, request, context):
        asset = (
            conv.asset_from_proto(request.asset) if request.asset != pb.ASSET_UNSPECIFIED else None
        )
        held, entries, next_token, tables = self.mm.ledger_page(
            request.session_token, asset, request.page_token, request.page_size
        )
        return pb.ListLedgerEntriesResponse(
            balance=held.get(ledger.SILVER, 0),
            entries=[conv.entry_to_proto(e, tables.get(e.ref, "")) for e in entries],
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
            actor_of(context),
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
            hand_payments=books.hand_payments,
            room_fees=books.room_fees,
            house_take=books.house_take,
            room_fees_booked=books.room_fees_booked,
        )

    def ListSuspiciousPairs(self, request, context):  # operator only (server.py's callers)
        pairs, token, total = self.mm.suspicious_pairs(
            request.limit, request.page_token, request.only_suspicious
        )
        return pb.ListSuspiciousPairsResponse(
            pairs=[conv.suspicious_pair_to_proto(p) for p in pairs],
            next_page_token=token,
            total_pairs=total,
            threshold=integrity_scoring.THRESHOLD,
        )

    # --- the operator's console (operator only: server.py's callers) ------------------------
    def FindPlayers(self, request, context):
        return self.console.FindPlayers(request, context)

    def SuspendPlayer(self, request, context):
        return self.console.SuspendPlayer(request, context)

    def LiftSuspension(self, request, context):
        return self.console.LiftSuspension(request, context)

    def RevokeSession(self, request, context):
        return self.console.RevokeSession(request, context)

    def ListAuditLog(self, request, context):
        return self.console.ListAuditLog(request, context)

    def ListLevels(self, request, context):
        units = self.mm.config.level_fee_units
        return pb.ListLevelsResponse(
            levels=[conv.level_to_proto(lv, units) for lv in levels.LEVELS]
        )

    # --- quick match -------------------------------------------------------------------------
    def ticket_message(self, ticket: queues.Ticket) -> pb.Ticket:
        return conv.ticket_to_proto(
            ticket, queues.waiting_count(self.mm.queue_records, ticket.queue)
        )

    def JoinQueue(self, request, context):
        ticket = self.mm.join_queue(
            request.session_token,
            _name(request.ruleset),
            request.stake,
            peer_address(context.peer())[0],
        )
        return pb.JoinQueueResponse(ticket=self.ticket_message(ticket))

    def LeaveQueue(self, request, context):
        ticket = self.mm.leave_queue(request.session_token, request.ticket_id)
        return pb.LeaveQueueResponse(ticket=self.ticket_message(ticket))

    def WatchAssignments(self, request, context):
        last = None
        while True:
            version = self.mm.version
            ticket = self.mm.ticket(request.session_token, request.ticket_id)
            message = self.ticket_message(ticket)
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
            request.fee_per_hand,
            peer_address(context.peer())[0],
        )
        acc = self.mm.account(room.owner)
        return pb.OpenRoomResponse(
            room=conv.room_to_proto(room, room.owner), room_cards_left=acc.room_cards
        )

    def JoinRoom(self, request, context):
        room = self.mm.join_room(
            request.session_token, request.code, peer_address(context.peer())[0]
        )
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
            cut_to=request.cut_to,
            final_rounds=request.final_rounds,
            round_seconds=request.round_seconds,
        )
        return pb.CreateTournamentResponse(tournament=self._tournament(t))

    def JoinTournament(self, request, context):
        t = self.mm.register_tournament(request.session_token, request.tournament_id)
        return pb.JoinTournamentResponse(tournament=self._tournament(t))

    def LeaveTournament(self, request, context):
        t = self.mm.withdraw_tournament(request.session_token, request.tournament_id)
        return pb.LeaveTournamentResponse(tournament=self._tournament(t))

    def InviteToTournament(self, request, context):
        t = self.mm.invite_to_tournament(
            request.session_token, request.tournament_id, list(request.player_ids)
        )
        return pb.InviteToTournamentResponse(tournament=self._tournament(t))

    def AcceptInvite(self, request, context):
        t = self.mm.accept_invite(request.session_token, request.tournament_id)
        return pb.AcceptInviteResponse(tournament=self._tournament(t))

    def DeclineInvite(self, request, context):
        t = self.mm.decline_invite(request.session_token, request.tournament_id)
        return pb.DeclineInviteResponse(tournament=self._tournament(t))

    def CancelTournament(self, request, context):
        t = self.mm.cancel_tournament(request.session_token, request.tournament_id)
        return pb.CancelTournamentResponse(tournament=self._tournament(t))

    def AddTournamentPrize(self, request, context):  # operator only (server.py's callers)
        assets = [
            (conv.asset_from_proto(a.asset, f"assets[{i}].asset"), a.amount)
            for i, a in enumerate(request.assets)
        ]
        tid = request.tournament_id

        def prize():
            t = self.mm.add_tournament_prize(
                tid, request.rank, assets, request.reason, request.request_id
            )
            return t, f"prize for rank {request.rank}: " + ", ".join(f"{a}={n}" for a, n in assets)

        t = self.mm.operations.act(
            actor_of(context), "AddTournamentPrize", tid, request.reason, prize
        )
        return pb.AddTournamentPrizeResponse(tournament=self._tournament(t))

    def AddTournamentBots(self, request, context):
        t = self.mm.add_tournament_bots(request.session_token, request.tournament_id, request.count)
        return pb.AddTournamentBotsResponse(tournament=self._tournament(t))

    def StartTournament(self, request, context):
        t = self.mm.start_tournament(request.session_token, request.tournament_id)
        return pb.StartTournamentResponse(tournament=self._tournament(t))

    def _tournament(self, t) -> pb.Tournament:
        lists, progress = self.mm.tournament_detail(t)
        return conv.tournament_to_proto(t, lists, progress)

    def _tournament_view(self, tournament_id: str, token: str):
        """A tournament as a signed-in caller sees it, with the caller's seat."""
        player, _ = self.mm.authenticate_session(token)
        t = self.mm.tournament(tournament_id)
        seat = self.mm.tournament_seat(t, player.player_id)
        assignment = conv.assignment_to_proto(seat) if seat else None
        return t, self._tournament(t), assignment

    def ListTournaments(self, request, context):
        return pb.ListTournamentsResponse(
            tournaments=[
                conv.tournament_summary_to_proto(s)
                for s in self.mm.open_tournaments(request.session_token)
            ]
        )

    def GetTournament(self, request, context):
        _, t, a = self._tournament_view(request.tournament_id, request.session_token)
        return pb.GetTournamentResponse(tournament=t, assignment=a)

    def GetStandings(self, request, context):
        self.mm.authenticate_session(request.session_token)
        page, total, final, round_no, token = self.mm.standings_page(
            request.tournament_id, request.round, request.page_size, request.page_token
        )
        return pb.GetStandingsResponse(
            standings=[conv.standing_to_proto(s) for s in page],
            round=round_no,
            final=final,
            next_page_token=token,
            total=total,
        )

    def ListTournamentTables(self, request, context):
        self.mm.authenticate_session(request.session_token)
        tables, round_no, total, token = self.mm.tables_page(
            request.tournament_id, request.round, request.page_size, request.page_token
        )
        return pb.ListTournamentTablesResponse(
            tables=[conv.tournament_table_to_proto(x) for x in tables],
            round=round_no,
            next_page_token=token,
            total=total,
        )

    def RetryTournament(self, request, context):  # operator only (server.py's callers)
        tid = request.tournament_id
        t = self.mm.operations.act(
            actor_of(context),
            "RetryTournament",
            tid,
            "",  # the request carries no reason
            lambda: (self.mm.retry_tournament(tid), "retried"),
        )
        return pb.RetryTournamentResponse(tournament=self._tournament(t))

    def AbortTournament(self, request, context):  # operator only
        tid = request.tournament_id
        t = self.mm.operations.act(
            actor_of(context),
            "AbortTournament",
            tid,
            request.reason,
            lambda: (self.mm.abort_tournament(tid, request.reason), "aborted: entries refunded"),
        )
        return pb.AbortTournamentResponse(tournament=self._tournament(t))

    def WatchTournament(self, request, context):
        """The tournament and the caller's seat now, then on every change, until it finishes.
        Built for thousands of watchers of one tournament: they wake only for its changes,
        share one snapshot of it per replica (:meth:`Matchmaking.tournament_snapshot`) and one
        encoding of it, read their own seat once per round, and get at most one message per
        :data:`WATCH_MIN_INTERVAL_S` (the last change always arrives)."""
        tid = request.tournament_id
        player, _ = self.mm.authenticate_session(request.session_token)
        last = None
        seat: tuple[int, pb.Assignment | None] = (-1, None)
        quiet_until = 0.0
        while True:
            version = self.mm.tournament_version(tid)
            self.mm.authenticate_session(request.session_token)  # a revoked session ends it
            snap = self.mm.tournament_snapshot(tid)
            t = snap.tournament
            if seat[0] != t.current_round or seat[1] is None:
                found = self.mm.tournament_seat(t, player.player_id)
                seat = (t.current_round, conv.assignment_to_proto(found) if found else None)
            out = pb.WatchTournamentResponse(tournament=self.snapshot_message(snap))
            if seat[1] is not None:
                out.assignment.CopyFrom(seat[1])
            if out != last:
                pause = quiet_until - time.monotonic()
                if pause > 0 and t.state != tournaments.FINISHED:
                    time.sleep(pause)
                    continue  # read again: what changed meanwhile goes in this message
                yield out
                last = out
                quiet_until = time.monotonic() + WATCH_MIN_INTERVAL_S
            if t.state == tournaments.FINISHED or not context.is_active():
                return
            self.mm.wait_for_tournament(tid, version, self.poll_seconds)

    def snapshot_message(self, snap) -> pb.Tournament:
        """One encoding per snapshot, shared by its watchers."""
        with self._messages_lock:
            hit = self._messages.get(snap.tournament.tournament_id)
            if hit is not None and hit[0] is snap:
                return hit[1]
        message = conv.tournament_to_proto(snap.tournament, snap.lists, snap.progress)
        with self._messages_lock:
            self._messages[snap.tournament.tournament_id] = (snap, message)
            if len(self._messages) > 1024:
                self._messages.pop(next(iter(self._messages)))
        return message

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
