"""The tournament desk of :class:`~services.matchmaking.service.Matchmaking`: creation and
registration (each entrant checked like a rated table), start, standings from the ledger, and
moving rounds on (:mod:`.tournaments`, :mod:`.seating`)."""

from __future__ import annotations

from collections.abc import Mapping

import structlog

from shared.errors import InvalidArgument, NotFound, PermissionDenied

from . import ledger, levels, metrics, players, tournaments
from .ruleset_choice import ruleset_with_options
from .tags import tournament_group

log = structlog.get_logger("mahjong.matchmaking")


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
                self.store, f"Bot {start + i + 1}", bot=True, room_cards=0, now=self.clock()
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
        player_ids: list[str],
        bots: int,
        options: Mapping[str, str] | None = None,
    ) -> tournaments.Tournament:
        """Create a tournament, registering the listed players (each checked like a
        registration) and ``bots`` bots; nothing is created if any check fails."""
        creator = self.authenticate(token)
        tournaments.validate_settings(rounds, hands_per_round, stake)
        levels.level_for_stake(stake)
        if len(player_ids) > tournaments.MAX_ENTRANTS:
            raise InvalidArgument(
                f"player_ids has {len(player_ids)} entries; at most {tournaments.MAX_ENTRANTS}",
                field="player_ids",
            )
        if not 0 <= bots <= tournaments.MAX_ENTRANTS - len(player_ids):
            raise InvalidArgument(f"bot count {bots} out of range", field="bots")
        ruleset, options = ruleset_with_options(ruleset, options)
        entrants = [self._entrant(pid, stake) for pid in player_ids]
        if len({e.player_id for e in entrants}) != len(entrants):
            raise InvalidArgument("player_ids repeat a player", field="player_ids")
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
        )
        tournaments.create(self.store, t)
        entrants += self._bots(bots, 0)
        if entrants:
            t = tournaments.register(self.store, t.tournament_id, entrants)
        self.notify()
        return t

    def register_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        player = self.authenticate(token)
        t = tournaments.get(self.store, tournament_id)
        t = tournaments.register(
            self.store, tournament_id, [self._entrant(player.player_id, t.stake)]
        )
        self.notify()
        return t

    def withdraw_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        player = self.authenticate(token)
        t = tournaments.withdraw(self.store, tournament_id, player.player_id)
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
        tournaments.start(self.store, tournament_id, player.player_id)
        created = tournaments.allocate_tables(self.store, self.allocator, tournament_id)
        metrics.TABLES.labels("tournament").inc(created)
        log.info("tournament_started", tournament=tournament_id, tables=created)
        self.notify()
        return tournaments.get(self.store, tournament_id)

    def tournament(self, tournament_id: str) -> tournaments.Tournament:
        return tournaments.get(self.store, tournament_id)

    def live_standings(self, tournament_id: str) -> tuple[tournaments.Standing, ...]:
        """Standings now, from the ledger (mid-round included)."""
        t = tournaments.get(self.store, tournament_id)
        return tournaments.rank(t, self.tournament_chips(tournament_id))

    def tournament_chips(self, tournament_id: str) -> Mapping[str, int]:
        return ledger.chips_by_player(self.store, tournament_group(tournament_id))

    def _advance(self, tournament_id: str) -> bool:
        """Advance a finished round; True when something changed."""
        try:
            before = tournaments.get(self.store, tournament_id)
        except NotFound:
            return False
        after = tournaments.advance(
            self.store,
            tournament_id,
            lambda: self.tournament_chips(tournament_id),
            lambda table_id: ledger.hands_of_table(self.store, table_id),
        )
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
