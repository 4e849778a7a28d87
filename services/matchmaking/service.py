"""The matchmaking facade: what the servicer (and the CLI, and tests) call.

:class:`Matchmaking` authenticates every player call by its signed token, applies the level
rules, spends room cards, and delegates to the one-concept modules. ``tick()`` drives the timers
(queue bot fill, the room Start timer) and the work that waits on the gateway (tables to create,
rounds to advance); the server calls it periodically, tests call it after moving a
:class:`~services.matchmaking.clock.ManualClock`. Everything lives in the store, so a restart
(or another replica on the same store) carries on where it stopped.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

import structlog

from shared.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)
from shared.ruleset import DEFAULT_RULESET, RulesetError, resolve_ruleset
from shared.store.base import Store

from . import (
    ledger,
    levels,
    metrics,
    players,
    queues,
    room_cards,
    room_start,
    rooms,
    tokens,
    tournaments,
)
from .allocator import TableAllocator
from .clock import Clock, system_clock
from .tags import parse_room, parse_tournament, tournament_group

log = structlog.get_logger("mahjong.matchmaking")


@dataclass(frozen=True)
class MatchmakingConfig:
    token_secret: bytes | None = None  # None: generated once and kept in the store
    starting_silver: int = 1000  # granted on registration (正式工 ... 副主管 at 800+)
    free_room_cards: int = 3  # 房卡 a new player receives
    bot_fill_seconds: float = 30.0  # a queue's oldest ticket waits this long, then bots fill
    ready_seconds: float | None = None  # room Start timer; None = the ruleset's (RULES §11: 15)


@dataclass(frozen=True, slots=True)
class Account:
    player: players.Player
    silver: int
    level: levels.Level


class Matchmaking:
    def __init__(
        self,
        store: Store,
        allocator: TableAllocator,
        clock: Clock = system_clock,
        config: MatchmakingConfig | None = None,
    ) -> None:
        self.store = store
        self.allocator = allocator
        self.clock = clock
        self.config = config or MatchmakingConfig()
        self._secret = self.config.token_secret or tokens.load_or_create_secret(store)
        self._changed = threading.Condition()
        self._version = 0

    # --- change notification (streams wait on it) ------------------------------------------
    @property
    def version(self) -> int:
        return self._version

    def notify(self) -> None:
        with self._changed:
            self._version += 1
            self._changed.notify_all()

    def wait_for_change(self, since: int, timeout: float) -> int:
        """Block until something changed after ``since`` (or ``timeout``); the new version."""
        with self._changed:
            self._changed.wait_for(lambda: self._version != since, timeout)
            return self._version

    # --- players -----------------------------------------------------------------------------
    def register(self, display_name: str) -> tuple[players.Player, str]:
        """A new player with its starting silver and free room cards; returns its token."""
        now = self.clock()
        player = players.create_player(
            self.store, display_name, bot=False, room_cards=self.config.free_room_cards, now=now
        )
        ledger.grant(self.store, player.player_id, "registration", self.config.starting_silver, now)
        return player, tokens.sign_player_token(self._secret, player.player_id)

    def authenticate(self, token: str) -> players.Player:
        player_id = tokens.verify_player_token(self._secret, token)
        player = players.find_player(self.store, player_id)
        if player is None:
            raise Unauthenticated(f"player_token names no known player {player_id}")
        return player

    def account(self, player_id: str) -> Account:
        player = players.get_player(self.store, player_id)
        silver = ledger.balance(self.store, player_id)
        return Account(player, silver, levels.level_for(silver))

    def public_balance(self, account: str) -> int:
        """Any ledger account's balance: a player, a quick-match bot or ``house`` (its share of
        escape penalties); NotFound for an id that is no player and has no entries."""
        unknown = account != ledger.HOUSE and players.find_player(self.store, account) is None
        if unknown and not ledger.entries(self.store, account):
            raise NotFound(f"no player or ledger account {account!r}", player_id=account)
        return ledger.balance(self.store, account)

    def entries(self, token: str) -> tuple[Account, list[ledger.Entry]]:
        player = self.authenticate(token)
        return self.account(player.player_id), ledger.entries(self.store, player.player_id)

    # --- the gateway's reports ---------------------------------------------------------------
    def record_hand(self, report: ledger.HandReport) -> bool:
        """Record a settled hand (idempotent by hand id); True when new."""
        new = ledger.record_hand(self.store, report, self.clock())
        metrics.HANDS.labels("new" if new else "repeat").inc()
        log.info(
            "hand_recorded", hand=report.hand_id, table=report.table_id, tag=report.tag, new=new
        )
        where = parse_tournament(report.tag)
        if where:
            self._advance(where.tournament_id)
        self.notify()
        return new

    def table_finished(self, table_id: str, tag: str, hands_played: int) -> None:
        if not table_id:
            raise InvalidArgument("table_id is empty", field="table_id")
        if hands_played < 0:
            raise InvalidArgument(f"hands_played {hands_played} is negative")
        where = parse_tournament(tag)
        if where:
            tournaments.table_finished(
                self.store, where.tournament_id, where.round, where.table, table_id, hands_played
            )
            self._advance(where.tournament_id)
        elif code := parse_room(tag):
            rooms.finish_room(self.store, code, table_id)
        self.notify()

    # --- quick match -------------------------------------------------------------------------
    def join_queue(self, token: str, ruleset: str, stake: int) -> queues.Ticket:
        """Join the (ruleset, stake tier) queue; stake 0 = the player's own level's tier."""
        player = self.authenticate(token)
        name = _ruleset_name(ruleset)
        silver = ledger.balance(self.store, player.player_id)
        stake = levels.check_rated_stake(silver, stake)
        ticket = queues.join(
            self.store,
            "tk-" + uuid.uuid4().hex[:16],
            player.player_id,
            player.display_name,
            name,
            stake,
            self.clock(),
        )
        self.notify()
        return ticket

    def leave_queue(self, token: str, ticket_id: str) -> queues.Ticket:
        player = self.authenticate(token)
        ticket = queues.leave(self.store, ticket_id, player.player_id)
        self.notify()
        return ticket

    def ticket(self, token: str, ticket_id: str) -> queues.Ticket:
        player = self.authenticate(token)
        return queues.owned_ticket(self.store, ticket_id, player.player_id)

    # --- private rooms -----------------------------------------------------------------------
    def _ready_seconds(self, room: rooms.Room) -> float:
        if self.config.ready_seconds is not None:
            return self.config.ready_seconds
        rules = resolve_ruleset(room.ruleset, room.ruleset_options)
        return float(rules.timers.ready_seconds)

    def open_room(
        self,
        token: str,
        ruleset: str,
        max_hands: int,
        options: Mapping[str, str] | None = None,
    ) -> rooms.Room:
        """Open a room (spends one 房卡) with a preset and optional house rules ("section.option"
        overrides); nothing is spent if the room cannot be opened."""
        player = self.authenticate(token)
        name, options = _ruleset_choice(ruleset, options)
        if room_cards.room_cards(self.store, player.player_id) < 1:
            raise FailedPrecondition(
                f"player {player.player_id} has no room card (房卡) to open a room",
                reason="NO_ROOM_CARD",
            )
        room = rooms.open_room(
            self.store,
            player.player_id,
            player.display_name,
            name,
            max_hands,
            self.clock(),
            options,
        )
        try:
            room_cards.spend_room_card(self.store, player.player_id)
        except BaseException:
            rooms.leave_room(self.store, room.code, player.player_id, self.clock())
            raise
        self.notify()
        return room

    def room(self, token: str, code: str) -> tuple[players.Player, rooms.Room]:
        return self.authenticate(token), rooms.get_room(self.store, code)

    def join_room(self, token: str, code: str) -> rooms.Room:
        player = self.authenticate(token)
        room = rooms.get_room(self.store, code)
        room = rooms.join_room(
            self.store,
            code,
            player.player_id,
            player.display_name,
            self.clock(),
            self._ready_seconds(room),
        )
        self.notify()
        return room

    def leave_room(self, token: str, code: str) -> rooms.Room:
        player = self.authenticate(token)
        room = rooms.leave_room(self.store, code, player.player_id, self.clock())
        self.notify()
        return room

    def set_room_stake(self, token: str, code: str, stake: int) -> rooms.Room:
        player = self.authenticate(token)
        room = rooms.set_stake(self.store, code, player.player_id, stake)
        self.notify()
        return room

    def answer_room_stake(self, token: str, code: str, accept: bool) -> rooms.Room:
        player = self.authenticate(token)
        room = rooms.respond_to_stake(self.store, code, player.player_id, accept, self.clock())
        self.notify()
        return room

    def invite_bot(self, token: str, code: str) -> rooms.Room:
        player = self.authenticate(token)
        rooms.invite_bot(self.store, code, player.player_id, self.clock())
        room = self._start_room(code)
        self.notify()
        return room

    def press_start(self, token: str, code: str) -> rooms.Room:
        player = self.authenticate(token)
        room = rooms.get_room(self.store, code)
        room_start.press_start(
            self.store, code, player.player_id, self.clock(), self._ready_seconds(room)
        )
        room = self._start_room(code)
        self.notify()
        return room

    # --- tournaments -------------------------------------------------------------------------
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
        if not 0 <= bots <= tournaments.MAX_ENTRANTS - len(player_ids):
            raise InvalidArgument(f"bot count {bots} out of range", field="bots")
        ruleset, options = _ruleset_choice(ruleset, options)
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

    # --- timers and pending work -------------------------------------------------------------
    def tick(self) -> bool:
        """Form quick-match tables (bots after the wait), expire room Start timers, start full
        rooms, create pending tournament tables and advance finished rounds. Watchers are woken
        only when something changed; returns whether it did."""
        now = self.clock()
        changed = False
        for formed in queues.form_tables(
            self.store, self.allocator, now, self.config.bot_fill_seconds
        ):
            changed = True
            metrics.TABLES.labels("quick").inc()
            metrics.BOT_SEATS.inc(formed.bots)
            for t in formed.tickets:
                metrics.QUEUE_WAIT.labels(str(t.stake)).observe(max(now - t.created_at, 0))
            log.info("quick_table", match=formed.match_id, bots=formed.bots)
        for code in rooms.open_room_codes(self.store):
            try:
                removed = room_start.expire_ready_timers(self.store, code, now)
                if removed:
                    changed = True
                    log.info("room_ready_timeout", room=code, removed=removed)
                before = rooms.get_room(self.store, code).state
                changed |= self._start_room(code).state != before
            except NotFound:
                changed = True  # closed meanwhile
        for tid in tournaments.running_ids(self.store):
            created = tournaments.allocate_tables(self.store, self.allocator, tid)
            metrics.TABLES.labels("tournament").inc(created)
            changed |= bool(created)
            changed |= self._advance(tid)
        if changed:
            self.notify()
        return changed

    def _start_room(self, code: str) -> rooms.Room:
        before = rooms.get_room(self.store, code).state
        room = room_start.start_if_ready(self.store, self.allocator, code)
        if room.state == rooms.PLAYING and before != rooms.PLAYING:
            metrics.TABLES.labels("room").inc()
            log.info("room_table", room=code, table=room.table_id)
        return room


def _ruleset_choice(name: str, options: Mapping[str, str] | None) -> tuple[str, dict[str, str]]:
    """A preset with per-table overrides, checked (InvalidArgument names the bad option)."""
    options = {str(k): str(v) for k, v in (options or {}).items()}
    try:
        return resolve_ruleset(name or DEFAULT_RULESET, options).name, options
    except RulesetError as exc:
        raise InvalidArgument(str(exc), field="ruleset") from None


def _ruleset_name(name: str) -> str:
    """A known preset name (empty = the default); InvalidArgument otherwise."""
    try:
        return resolve_ruleset(name or DEFAULT_RULESET).name
    except RulesetError as exc:
        raise InvalidArgument(str(exc), field="ruleset") from None
