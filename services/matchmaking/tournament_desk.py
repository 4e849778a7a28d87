"""The tournament desk of :class:`~services.matchmaking.service.Matchmaking`: creation, entry by
consent (each entrant checked like a rated table, its entry held in escrow), invites, withdrawal
and cancellation with refunds, start, standings from the ledger, moving rounds on and the prizes
(:mod:`.tournaments`, :mod:`.tournament_consent`, :mod:`.tournament_purse`, :mod:`.seating`).

Nobody is entered by another's act: the creator enters only themselves (JoinTournament) and
bots; other players are invited and enter by AcceptInvite (RULES-items §3).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

import structlog

from shared.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied

from . import (
    allocated_tables,
    ledger,
    levels,
    live_seats,
    metrics,
    players,
    tournament_purse,
    tournaments,
)
from . import tournament_consent as consent
from .ruleset_choice import ruleset_with_options
from .tags import tournament_group

log = structlog.get_logger("mahjong.matchmaking")
PRIZE_ASSETS = (ledger.SILVER, ledger.ROOM_CARD, ledger.DOUBLE_CARD, ledger.MATCH_CARD)
MAX_PRIZE_AMOUNT = 10**12


class TournamentDesk:
    """Mixed into :class:`~services.matchmaking.service.Matchmaking`, whose ``store``,
    ``allocator``, ``clock``, ``config``, ``authenticate`` and ``notify`` it uses."""

    def _entrant(self, player_id: str, stake: int) -> tournaments.Entrant:
        player = players.get_player(self.store, player_id)
        if not player.bot:
            levels.check_rated_stake(ledger.balance(self.store, player_id), stake)
        return tournaments.Entrant(player.player_id, player.display_name, player.bot)

    def _bots(self, count: int, start: int) -> list[tournaments.Entrant]:
        if not 0 <= count <= tournaments.MAX_ENTRANTS:
            raise InvalidArgument(f"bot count {count} out of range 0-{tournaments.MAX_ENTRANTS}")
        out = []
        for i in range(count):
            bot = players.create_player(
                self.store, f"Bot {start + i + 1}", bot=True, now=self.clock()
            )
            out.append(tournaments.Entrant(bot.player_id, bot.display_name, True))
        return out

    def create_tournament(
        self,
        token: str,
        name: str,
        ruleset: str,
        stake: int,
        rounds: int,
        hands_per_round: int,
        bots: int = 0,
        options: Mapping[str, str] | None = None,
        *,
        entry_silver: int = 0,
        entry_match_cards: int = 0,
        prize_percent: Sequence[int] = (),
    ) -> tournaments.Tournament:
        """Create a tournament with ``bots`` bots registered; nobody else is entered (players
        join, or accept the creator's invite). Nothing is created if any check fails."""
        creator = self.authenticate(token)
        tournaments.validate_settings(rounds, hands_per_round, stake)
        consent.validate_entry(entry_silver, entry_match_cards)
        percent = consent.prize_percent_of(list(prize_percent))
        levels.level_for_stake(stake)
        if not 0 <= bots <= tournaments.MAX_ENTRANTS:
            raise InvalidArgument(f"bot count {bots} out of range", field="bots")
        ruleset, options = ruleset_with_options(ruleset, options)
        t = tournaments.Tournament(
            tournaments.new_id(),
            (name or "").strip(),
            creator.player_id,
            ruleset,
            stake,
            rounds,
            hands_per_round,
            self.clock(),
            ruleset_options=options,
            entry_silver=entry_silver,
            entry_match_cards=entry_match_cards,
            prize_percent=percent,
        )
        tournaments.create(self.store, t)
        if bots:
            t = tournaments.register(self.store, t.tournament_id, self._bots(bots, 0))
        self.notify()
        return t

    def _enter(self, player_id: str, t: tournaments.Tournament, add) -> tournaments.Tournament:
        """Check the player like a rated seat, move the entry into escrow, then ``add`` the
        entrant (a registration or an accepted invite); the entry is refunded if that fails."""
        entrant = self._entrant(player_id, t.stake)
        if t.entrant(player_id) is not None:
            tournaments.register(self.store, t.tournament_id, [entrant])  # AlreadyExists
        if tournament_purse.has_entry(t):
            needs = allocated_tables.seat_needs(self.store, player_id)
            what = f"the entry to tournament {t.tournament_id}"
            live_seats.require_kept(self.store, player_id, t.entry_silver, what, needs)
            ref = f"tournament/{t.tournament_id}/entry/{player_id}/{uuid.uuid4().hex[:12]}"
            tournament_purse.pay_entry(self.store, t, player_id, ref, self.clock())
            entrant = tournaments.Entrant(entrant.player_id, entrant.display_name, False, ref)
        try:
            t = add(entrant)
        except BaseException:
            tournament_purse.refund_entry(self.store, t, entrant, self.clock())
            raise
        self.notify()
        return t

    def register_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        """JoinTournament: the caller enters themselves (the entry moves into escrow)."""
        player = self.authenticate(token)
        t = tournaments.get(self.store, tournament_id)
        return self._enter(
            player.player_id, t, lambda e: tournaments.register(self.store, tournament_id, [e])
        )

    def withdraw_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        """LeaveTournament before the start: the entry is refunded in full."""
        player = self.authenticate(token)
        before = tournaments.get(self.store, tournament_id)
        t = tournaments.withdraw(self.store, tournament_id, player.player_id)
        left = before.entrant(player.player_id)
        if left is not None:
            tournament_purse.refund_entry(self.store, t, left, self.clock())
        self.notify()
        return t

    def invite_to_tournament(
        self, token: str, tournament_id: str, player_ids: Sequence[str]
    ) -> tournaments.Tournament:
        """The creator invites players (each enters only by accepting)."""
        creator = self.authenticate(token)
        consent.check_invite_ids(player_ids)
        for pid in player_ids:
            if pid != creator.player_id:
                found = players.find_player(self.store, pid)
                if found is None or found.bot or found.guest:
                    raise NotFound(f"no player {pid!r} to invite", player_id=pid)
        t = consent.invite(self.store, tournament_id, creator.player_id, list(player_ids))
        self.notify()
        return t

    def accept_invite(self, token: str, tournament_id: str) -> tournaments.Tournament:
        player = self.authenticate(token)
        t = tournaments.get(self.store, tournament_id)
        consent.require_invited(t, player.player_id)
        return self._enter(
            player.player_id, t, lambda e: consent.accept_invite(self.store, tournament_id, e)
        )

    def decline_invite(self, token: str, tournament_id: str) -> tournaments.Tournament:
        player = self.authenticate(token)
        t = consent.decline_invite(self.store, tournament_id, player.player_id)
        self.notify()
        return t

    def cancel_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        """The creator cancels before the first round: every entry and house prize returns."""
        player = self.authenticate(token)
        t = consent.cancel(self.store, tournament_id, player.player_id)
        self._refund_cancelled(t)
        log.info("tournament_cancelled", tournament=tournament_id)
        self.notify()
        return t

    def _refund_cancelled(self, t: tournaments.Tournament) -> None:
        now = self.clock()
        for e in t.entrants:
            tournament_purse.refund_entry(self.store, t, e, now)
        tournament_purse.return_house_prizes(self.store, t, now)

    def add_tournament_prize(
        self,
        tournament_id: str,
        rank: int,
        assets: Sequence[tuple[str, int]],
        reason: str,
        request_id: str,
    ) -> tournaments.Tournament:
        """An operator adds house-funded prizes for ``rank`` (the servicer admits only the
        operator's certificate); idempotent by ``request_id``."""
        if not request_id:
            raise InvalidArgument("request_id is required", field="request_id")
        if not (reason or "").strip():
            raise InvalidArgument("reason is required", field="reason")
        if not 1 <= rank <= tournaments.MAX_ENTRANTS:
            raise InvalidArgument(
                f"rank {rank} out of range 1-{tournaments.MAX_ENTRANTS}", field="rank"
            )
        if not assets:
            raise InvalidArgument("assets is empty", field="assets")
        for asset, amount in assets:
            if asset not in PRIZE_ASSETS:
                raise InvalidArgument(f"asset {asset!r} is no prize asset", field="assets")
            if not 0 < amount <= MAX_PRIZE_AMOUNT:
                raise InvalidArgument(
                    f"amount {amount} out of range 1-{MAX_PRIZE_AMOUNT}", field="assets"
                )
        t = tournaments.get(self.store, tournament_id)
        if t.state == tournaments.FINISHED:
            raise FailedPrecondition(
                f"tournament {tournament_id} is finished", reason="TOURNAMENT_FINISHED"
            )
        for i, (asset, amount) in enumerate(assets):
            ref = f"tournament/{tournament_id}/house-prize/{request_id}/{i}"
            prize = tournaments.HousePrize(rank, asset, amount, ref)
            tournament_purse.fund_house_prize(self.store, t, prize, reason, self.clock())
            t = consent.add_house_prize(self.store, tournament_id, prize)
        log.info("tournament_prize_added", tournament=tournament_id, rank=rank, reason=reason)
        self.notify()
        return t

    def add_tournament_bots(self, token: str, tournament_id: str, count: int):
        player = self.authenticate(token)
        t = tournaments.get(self.store, tournament_id)
        if t.creator != player.player_id:
            raise PermissionDenied(f"only the creator {t.creator} may add bots to {tournament_id}")
        if count < 1:
            raise InvalidArgument(f"bot count {count} must be at least 1", field="count")
        tournaments.register(self.store, tournament_id, [])  # refuses a started tournament
        bots = self._bots(count, sum(e.bot for e in t.entrants))
        t = tournaments.register(self.store, tournament_id, bots)
        self.notify()
        return t

    def start_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        player = self.authenticate(token)
        t = tournaments.start(self.store, tournament_id, player.player_id)
        tournament_purse.spend_at_start(self.store, t, self.clock())
        created = tournaments.allocate_tables(self.store, self.allocator, tournament_id)
        metrics.TABLES.labels("tournament").inc(created)
        log.info("tournament_started", tournament=tournament_id, tables=created)
        t = tournaments.get(self.store, tournament_id)
        if t.state == tournaments.FINISHED:  # the gateway refused its tables: entries back
            t = self._finish_purse(t)
        self.notify()
        return t

    def tournament(self, tournament_id: str) -> tournaments.Tournament:
        return tournaments.get(self.store, tournament_id)

    def live_standings(self, tournament_id: str) -> tuple[tournaments.Standing, ...]:
        """Standings now, from the ledger (mid-round included)."""
        t = tournaments.get(self.store, tournament_id)
        return tournaments.rank(t, self.tournament_chips(tournament_id))

    def tournament_chips(self, tournament_id: str) -> Mapping[str, int]:
        return ledger.chips_by_player(self.store, tournament_group(tournament_id))

    def _finish_purse(self, t: tournaments.Tournament) -> tournaments.Tournament:
        """A finished tournament's prizes, paid once (a retried finish pays nothing again),
        then it leaves the running index (kept until now so a crash before this retries)."""
        now = self.clock()
        if t.failure:
            tournament_purse.refund_failed(self.store, t, now)
        elif not t.cancelled:
            tournament_purse.spend_at_start(self.store, t, now)  # once; here after a crash
            bots = {e.player_id for e in t.entrants if e.bot}
            prizes = tournament_purse.pay_prizes(self.store, t, t.final_ranking, bots, now)
            t = consent.record_prizes(self.store, t.tournament_id, prizes)
        tournaments.done_running(self.store, t.tournament_id)
        return t

    def _advance(self, tournament_id: str) -> bool:
        """Advance a finished round; True when something changed."""
        try:
            before = tournaments.get(self.store, tournament_id)
        except NotFound:
            return False
        if before.state == tournaments.FINISHED:  # finished, its purse not settled yet
            self._finish_purse(before)
            return True
        after = tournaments.advance(
            self.store,
            tournament_id,
            lambda: self.tournament_chips(tournament_id),
            lambda table_id: ledger.hands_of_table(self.store, table_id),
        )
        if after.state == tournaments.FINISHED:
            after = self._finish_purse(after)
        if len(after.standings) == len(before.standings):
            return False
        metrics.ROUNDS.inc()
        log.info(
            "tournament_round_done",
            tournament=tournament_id,
            round=len(after.standings),
            state=after.state,
        )
        if after.current_round != before.current_round:
            created = tournaments.allocate_tables(self.store, self.allocator, tournament_id)
            metrics.TABLES.labels("tournament").inc(created)
        return True
