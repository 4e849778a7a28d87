"""The matchmaking facade: what the servicer (and the CLI, and tests) call.

:class:`Matchmaking` is composed of the domain's parts, each given its dependencies (the store,
the clock, the configuration, and the calls it makes to another part: ``authenticate``,
``notify``, ``holds``, the stake check): the identity desk, the economy and 加倍卡 desks, the
quick-match, room and tournament desks, the gateway's reports, and change notification
(:class:`~services.matchmaking.domain.changes.Changes`, which the asyncio servicer observes). The
facade binds the calls the adapters make, and keeps what spans the parts: accounts,
whereabouts, and ``tick()``, which drives the timers (queue bot fill, the room Start timer) and
the work that waits on the gateway (tables to create, rounds to advance); the server calls it
periodically, tests call it after moving a :class:`~tests.doubles.clock.ManualClock`.
Everything lives in the store, so a restart (or another replica on the same store) carries on
where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import structlog

from infra.signing import stored_secret
from infra.store.base import Store
from services.matchmaking.domain.changes import Changes
from services.matchmaking.domain.clock import Clock, system_clock
from services.matchmaking.domain.economy import items, ledger, statement
from services.matchmaking.domain.economy.desk import EconomyDesk
from services.matchmaking.domain.economy.double_card_desk import DoubleCardDesk
from services.matchmaking.domain.integrity import counts as integrity
from services.matchmaking.domain.integrity import scoring as integrity_scoring
from services.matchmaking.domain.operations.console import OperatorDesk
from services.matchmaking.domain.players import accounts as players
from services.matchmaking.domain.players import presence
from services.matchmaking.domain.players import sessions as identity_sessions
from services.matchmaking.domain.players.desk import IdentityDesk
from services.matchmaking.domain.players.issuers import Issuer
from services.matchmaking.domain.ports import Metrics
from services.matchmaking.domain.queues import levels
from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.domain.queues.desk import QueueDesk
from services.matchmaking.domain.rooms import private as rooms
from services.matchmaking.domain.rooms import start as room_start
from services.matchmaking.domain.rooms.desk import RoomDesk
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.domain.tables import live_seats
from services.matchmaking.domain.tables.allocator import TableAllocator
from services.matchmaking.domain.tables.reports import ReportDesk
from services.matchmaking.domain.tournaments import listing
from services.matchmaking.domain.tournaments import tournament as tournaments
from services.matchmaking.domain.tournaments.desk import TournamentDesk
from services.matchmaking.domain.tournaments.records import running_ids
from services.matchmaking.metrics import PrometheusMetrics
from services.matchmaking.storage.hold_records import HoldRecords
from services.matchmaking.storage.integrity_records import RecordsIntegrity
from services.matchmaking.storage.operation_records import AuditRecords, OperationRecords
from services.matchmaking.storage.player_records import PlayerRecords
from services.matchmaking.storage.queue_records import QueueRecords
from services.matchmaking.storage.room_records import RoomRecords
from services.matchmaking.storage.table_claims import RecordingAllocator
from services.matchmaking.storage.table_records import TableRecords
from services.matchmaking.storage.tournament_records import TournamentRecords
from shared.errors import NotFound

log = structlog.get_logger("mahjong.matchmaking")


@dataclass(frozen=True)
class MatchmakingConfig:
    # Seals CreateTable request ids (allocated_tables); None: generated once, kept in the store.
    token_secret: bytes | None = None
    starting_silver: int = 1000  # the welcome grant, once per identity (副主管 at 800+)
    free_room_cards: int = 3  # 房卡 a new player receives
    item_prices: items.ItemPrices = field(default_factory=items.ItemPrices)  # --items-*-price
    bot_net_alert: int = 10_000  # house.bot_net_alert: a player's net from bots in a day
    # Identity (issue 21): the trusted OpenID Connect issuers, guests, session lifetimes and the
    # session-signing key's PEM file ("" = generated once and kept in the store).
    issuers: tuple[Issuer, ...] = ()
    allow_guests: bool = False
    session_lifetime_seconds: int = identity_sessions.DEFAULT_LIFETIME_SECONDS
    refresh_lifetime_seconds: int = identity_sessions.DEFAULT_REFRESH_LIFETIME_SECONDS
    session_key_file: str = ""
    bot_fill_seconds: float = 30.0  # a queue's oldest ticket waits this long, then bots fill
    ready_seconds: float | None = None  # room Start timer; None = the ruleset's (RULES §11: 15)
    # How long a replica that died while creating a table keeps others from recording it (its
    # creation claim's lease, renewed while it lives: allocated_tables); --lease-ms.
    claim_ms: int = allocated_tables.CLAIM_TTL_MS
    # The room service fee (台费, RULES.md §9a) of quick-match tables, in stake units: a level's
    # tables charge each human seat base chips × this per hand; 0 = none (--level-fee-units).
    level_fee_units: int = levels.FEE_STAKE_UNITS
    # No two players from one client address at a quick-match table (--queue-one-per-address).
    queue_one_per_address: bool = True
    # The same in private rooms (--rooms-one-per-address): off, friends may share a connection.
    rooms_one_per_address: bool = False


@dataclass(frozen=True, slots=True)
class Account:
    player: players.Player
    silver: int
    level: levels.Level
    assets: dict[str, int] | None = None  # every asset's balance (silver too)

    @property
    def room_cards(self) -> int:  # 房卡
        return (self.assets or {}).get(ledger.ROOM_CARD, 0)


class Matchmaking:
    """The facade: the parts below, each given what it uses, and the calls that span them
    (accounts, the gateway's reports, quick match, ``tick``). The adapters call the parts'
    methods through the names bound here."""

    def __init__(
        self,
        store: Store,
        allocator: TableAllocator,
        clock: Clock = system_clock,
        config: MatchmakingConfig | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        """``metrics``: what the parts count on (default: the service's Prometheus metrics)."""
        self.store = store
        self.players = player_records = PlayerRecords(store)
        self.queue_records = queue_records = QueueRecords(store)
        self.room_records = room_records = RoomRecords(store)
        self.table_records = table_records = TableRecords(store)
        self.tournament_records = tournament_records = TournamentRecords(store)
        self.holds = holds = HoldRecords(store)
        self.metrics = metrics = metrics or PrometheusMetrics()
        self.clock = clock
        self.config = config = config or MatchmakingConfig()
        self._secret = config.token_secret or stored_secret(store, "mm_config", "token_secret")
        # Every table goes through the recorder: the ledger accepts reports only for these.
        self.allocator = RecordingAllocator(
            store, allocator, self._secret, claim_ms=config.claim_ms
        )

        # --- the parts, each with its dependencies ------------------------------------------
        self.changes = changes = Changes()
        operation_records = OperationRecords(store, player_records, table_records)
        self.identity = identity = IdentityDesk(
            store, player_records, clock, config, operation_records
        )
        self.economy = economy = EconomyDesk(
            store,
            player_records,
            table_records,
            clock,
            config,
            identity.authenticate,
            changes.notify,
            metrics,
        )
        self.double_card_desk = DoubleCardDesk(store, table_records, holds, clock, changes.notify)
        self.room_desk = room_desk = RoomDesk(
            store,
            room_records,
            self.allocator,
            clock,
            config,
            identity.authenticate,
            changes.notify,
            self._holds,
            economy.check_room_stake,
            metrics,
        )
        self.tournament_desk = tournament_desk = TournamentDesk(
            store,
            player_records,
            table_records,
            tournament_records,
            self.allocator,
            clock,
            identity.authenticate,
            changes,
            metrics,
        )
        self.queue_desk = queue_desk = QueueDesk(
            store,
            queue_records,
            clock,
            identity.authenticate,
            changes.notify,
            self._holds,
            config.level_fee_units,
        )
        # Collusion signals (串通), counted as hands are recorded and tables formed.
        self.integrity = RecordsIntegrity(store)
        self.reports = reports = ReportDesk(
            store,
            room_records,
            table_records,
            tournament_records,
            holds,
            clock,
            changes,
            economy.bankrupt_after,
            metrics,
            self.integrity,
        )

        # The operator's console: every action and every grant goes into the audit log.
        self.operations = OperatorDesk(
            operation_records,
            AuditRecords(store),
            clock,
            self.whereabouts,
            economy.asset_balances,
            lambda player_id, n: statement.entries_page(store, player_id, None, "", n)[0],
            # the gateway client's SuspendSeat (an allocator without one: no gateway to tell)
            getattr(allocator, "suspend_seat", None),
        )

        # --- what the adapters call, by part ------------------------------------------------
        # change notification (streams wait on it)
        self.notify = changes.notify
        self.wait_for_change = changes.wait_for_change
        self.notify_tournament = changes.notify_tournament
        self.tournament_version = changes.tournament_version
        self.wait_for_tournament = changes.wait_for_tournament
        # identity
        self.sessions = identity.sessions
        self.sign_in = identity.sign_in
        self.sign_in_as_guest = identity.sign_in_as_guest
        self.refresh_session = identity.refresh_session
        self.sign_out = identity.sign_out
        self.set_display_name = identity.set_display_name
        self.peek_session = identity.peek_session
        self.authenticate_session = identity.authenticate_session
        self.authenticate = identity.authenticate
        self.authenticate_operator = identity.authenticate_operator
        # economy and 加倍卡
        self.asset_balances = economy.asset_balances
        self.ledger_page = economy.ledger_page
        self.item_prices = economy.item_prices
        self.buy_items = economy.buy_items
        self.check_room_stake = economy.check_room_stake
        self.bankrupt_after = economy.bankrupt_after
        self.reconciliation = economy.reconciliation
        self.watch_books = economy.watch_books
        self.hold_double_card = self.double_card_desk.hold_double_card
        self.release_double_card = self.double_card_desk.release_double_card
        # quick match
        self.join_queue = queue_desk.join_queue
        self.leave_queue = queue_desk.leave_queue
        self.ticket = queue_desk.ticket
        # the gateway's reports
        self.record_hand = reports.record_hand
        self.hand_answer = reports.hand_answer
        self.table_finished = reports.table_finished
        # private rooms
        self.open_room = room_desk.open_room
        self.room = room_desk.room
        self.join_room = room_desk.join_room
        self.leave_room = room_desk.leave_room
        self.set_room_stake = room_desk.set_room_stake
        self.answer_room_stake = room_desk.answer_room_stake
        self.invite_bot = room_desk.invite_bot
        self.press_start = room_desk.press_start
        # tournaments
        self.create_tournament = tournament_desk.create_tournament
        self.register_tournament = tournament_desk.register_tournament
        self.withdraw_tournament = tournament_desk.withdraw_tournament
        self.invite_to_tournament = tournament_desk.invite_to_tournament
        self.accept_invite = tournament_desk.accept_invite
        self.decline_invite = tournament_desk.decline_invite
        self.cancel_tournament = tournament_desk.cancel_tournament
        self.abort_tournament = tournament_desk.abort_tournament
        self.retry_tournament = tournament_desk.retry_tournament
        self.add_tournament_prize = tournament_desk.add_tournament_prize
        self.add_tournament_bots = tournament_desk.add_tournament_bots
        self.start_tournament = tournament_desk.start_tournament
        self.tournament = tournament_desk.tournament
        self.tournament_tables = tournament_desk.tournament_tables
        self.round_standings = tournament_desk.round_standings
        self.final_ranking = tournament_desk.final_ranking
        self.tournament_snapshot = tournament_desk.tournament_snapshot
        self.tournament_detail = tournament_desk.tournament_detail
        self.tournament_seat = tournament_desk.tournament_seat
        self.standings_page = tournament_desk.standings_page
        self.tables_page = tournament_desk.tables_page
        self.live_standings = tournament_desk.live_standings
        self.tournament_work = tournament_desk.tournament_work

    def suspicious_pairs(self, limit: int, page_token: str, only_suspicious: bool):
        """A page of the ordered pairs ranked by their collusion score
        (:func:`~.domain.integrity.scoring.suspicious_pairs`); operators only (the server)."""
        return integrity_scoring.suspicious_pairs(
            self.integrity, limit, page_token, only_suspicious
        )

    def grant_assets(
        self, operator: str, player_id: str, assets, reason: str, request_id: str
    ) -> players.Player:
        """An operator's grant (:meth:`EconomyDesk.grant_assets`), in the audit log."""

        def run():
            player = self.economy.grant_assets(operator, player_id, assets, reason, request_id)
            return player, "granted " + ", ".join(f"{a}={n}" for a, n in assets)

        return self.operations.act(operator, "GrantAssets", player_id, reason, run)

    @property
    def version(self) -> int:
        return self.changes.version

    # --- accounts (signing in: the identity desk) ---------------------------------------
    def account(self, player_id: str) -> Account:
        player = players.get_player(self.players, player_id)
        assets = self.asset_balances(player_id)
        silver = assets[ledger.SILVER]
        return Account(player, silver, levels.level_for(silver), assets)

    def whereabouts(self, player_id: str) -> tuple[str, str]:
        """The player's waiting ticket id and private room code ("" when none)."""
        held = presence.current(self.queue_records, player_id)
        if held is None or not self._holds(held):
            return "", ""
        return (held.ref, "") if held.kind == presence.QUEUE else ("", held.ref)

    def _holds(self, held: presence.Presence) -> bool:
        """Whether the ticket or room a presence names still holds its player (what lets a
        claim take over the leftover of a crash, :mod:`.domain.players.presence`)."""
        if held.kind == presence.QUEUE:
            return queues.holds(self.queue_records, held)
        return rooms.holds(self.room_records, held)

    def public_balance(self, account: str) -> int:
        """Any ledger account's balance: a player, a quick-match bot or ``house`` (its share of
        escape penalties); NotFound for an id that is no player and has no entries."""
        unknown = account != ledger.HOUSE and players.find_player(self.players, account) is None
        if unknown and not ledger.has_account(self.store, account):
            raise NotFound(f"no player or ledger account {account!r}", player_id=account)
        return ledger.balance(self.store, account)

    def seated(self, token: str) -> list[live_seats.LiveSeat]:
        """The session's player's live seats (ListLiveSeats): their own only."""
        player = self.authenticate(token)
        return live_seats.seats_of(self.table_records, player.player_id)

    def open_tournaments(self, token: str) -> list[listing.TournamentSummary]:
        """The tournaments open to join or being played (ListTournaments): any signed-in
        player."""
        self.authenticate(token)
        return listing.open_tournaments(self.tournament_records)

    def entries(self, token: str) -> tuple[Account, list[ledger.Entry]]:
        player = self.authenticate(token)
        return self.account(player.player_id), ledger.entries(self.store, player.player_id)

    # --- timers and pending work -------------------------------------------------------------
    def tick(self) -> bool:
        """Form quick-match tables (bots after the wait), expire room Start timers, start full
        rooms, create pending tournament tables and advance finished rounds. Watchers are woken
        only when something changed; returns whether it did."""
        now = self.clock()
        changed = False
        for formed in queues.form_tables(
            self.queue_records,
            self.allocator,
            now,
            self.config.bot_fill_seconds,
            self.config.level_fee_units,
            self.config.queue_one_per_address,
        ):
            changed = True
            waits = [(t.stake, now - t.created_at) for t in formed.tickets]
            self.metrics.quick_table(formed.bots, waits)
            joined = [(t.player_id, t.created_at) for t in formed.tickets]
            integrity.record_table(self.integrity, formed.match_id, joined)
            log.info("quick_table", match=formed.match_id, bots=formed.bots)
        for code in rooms.open_room_codes(self.room_records):
            try:
                removed = room_start.expire_ready_timers(self.room_records, code, now)
                if removed:
                    changed = True
                    log.info("room_ready_timeout", room=code, removed=removed)
                before = rooms.get_room(self.room_records, code).state
                changed |= self.room_desk.start_room(code).state != before
            except NotFound:
                changed = True  # closed meanwhile
        stalled = 0
        for tid in running_ids(self.tournament_records):
            if self.tournament_work(tid):
                self.notify_tournament(tid)
            stalled += tournaments.is_stalled(tournaments.get(self.tournament_records, tid).header)
        self.metrics.tournaments_stalled(stalled)
        try:
            self.watch_books()  # the reconciliation gauges and alerts, once a minute
        except Exception as exc:  # the books' check must never stop the timers
            log.exception("reconciliation_failed", error=repr(exc))
        if changed:
            self.notify()
        return changed
