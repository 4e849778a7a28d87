"""The tournament desk of :class:`~services.matchmaking.service.Matchmaking`: creation, entry by
consent (each entrant checked like a rated table, its entry held in escrow), invites, withdrawal
and cancellation with refunds, start, standings from the ledger, moving rounds on and the prizes
(:mod:`.tournament`, :mod:`.consent`, :mod:`.purse`, :mod:`.seating`).

Nobody is entered by another's act: the creator enters only themselves (JoinTournament) and
bots; other players are invited and enter by AcceptInvite (RULES-items §3).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import structlog

from services.matchmaking.domain.changes import Changes
from services.matchmaking.domain.clock import Clock
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.players import accounts
from services.matchmaking.domain.players.repository import PlayerRepository
from services.matchmaking.domain.ports import Metrics, Records
from services.matchmaking.domain.queues import levels
from services.matchmaking.domain.ruleset_choice import ruleset_with_options
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.domain.tables import live_seats
from services.matchmaking.domain.tables.allocator import TableAllocator
from services.matchmaking.domain.tables.repository import TableRepository
from services.matchmaking.domain.tournaments import consent
from services.matchmaking.domain.tournaments import purse as tournament_purse
from services.matchmaking.domain.tournaments import rounds as tournament_rounds
from services.matchmaking.domain.tournaments import standings as tournament_standings
from services.matchmaking.domain.tournaments import tournament as tournaments
from services.matchmaking.domain.tournaments.records import (
    Header,
    RoundProgress,
    TableState,
    done_running,
    get_progress,
    mark_running,
)
from services.matchmaking.domain.tournaments.repository import TournamentRepository
from shared.errors import (
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)

log = structlog.get_logger("mahjong.matchmaking")
PRIZE_ASSETS = (ledger.SILVER, ledger.ROOM_CARD, ledger.DOUBLE_CARD, ledger.MATCH_CARD)
MAX_PRIZE_AMOUNT = 10**12
MAX_REASON = 500


SNAPSHOT_TTL_S = 0.5


@dataclass(frozen=True, slots=True)
class TournamentSnapshot:
    version: int  # the tournament's change count on this replica when read
    at: float  # time.monotonic() when read
    tournament: tournaments.Tournament
    lists: tournament_rounds.TournamentLists | None
    progress: RoundProgress | None


class TournamentDesk:
    """A part of :class:`~services.matchmaking.service.Matchmaking`: ``authenticate`` is the
    identity desk's; ``changes`` the facade's change notification (a tournament's watchers are
    woken through it, and its snapshots kept by its version)."""

    def __init__(
        self,
        store: Records,
        players: PlayerRepository,
        tables: TableRepository,
        tournament_records: TournamentRepository,
        allocator: TableAllocator,
        clock: Clock,
        authenticate: Callable[[str], accounts.Player],
        changes: Changes,
        metrics: Metrics,
    ) -> None:
        self.store = store
        self.players = players
        self.tables = tables
        self.tournament_records = tournament_records
        self.metrics = metrics
        self.allocator = allocator
        self.clock = clock
        self.authenticate = authenticate
        self.notify_tournament = changes.notify_tournament
        self.tournament_version = changes.tournament_version
        self._snapshots: dict[str, TournamentSnapshot] = {}
        self._snapshots_lock = threading.Lock()

    def _entrant(self, player_id: str, stake: int) -> tournaments.Entrant:
        player = accounts.get_player(self.players, player_id)
        if not player.bot:
            levels.check_rated_stake(ledger.balance(self.store, player_id), stake)
        return tournaments.Entrant(player.player_id, player.display_name, player.bot)

    def _bots(self, count: int, start: int) -> list[tournaments.Entrant]:
        if not 0 <= count <= tournaments.MAX_ENTRANTS:
            raise InvalidArgument(f"bot count {count} out of range 0-{tournaments.MAX_ENTRANTS}")
        out = []
        for i in range(count):
            bot = accounts.create_player(
                self.players, f"Bot {start + i + 1}", bot=True, now=self.clock()
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
        cut_to: int = 0,
        final_rounds: int = 0,
        round_seconds: int = 0,
    ) -> tournaments.Tournament:
        """Create a tournament with ``bots`` bots registered; nobody else is entered (players
        join, or accept the creator's invite). Nothing is created if any check fails."""
        creator = self.authenticate(token)
        tournaments.validate_settings(
            rounds, hands_per_round, stake, cut_to, final_rounds, round_seconds
        )
        consent.validate_entry(entry_silver, entry_match_cards)
        percent = consent.prize_percent_of(list(prize_percent))
        levels.level_for_stake(stake)
        if not 0 <= bots <= tournaments.MAX_ENTRANTS:
            raise InvalidArgument(f"bot count {bots} out of range", field="bots")
        ruleset, options = ruleset_with_options(ruleset, options)
        header = Header(
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
            cut_to=cut_to,
            final_rounds=final_rounds,
            round_seconds=round_seconds,
        )
        t = tournaments.create(self.tournament_records, header)
        if bots:
            t = tournaments.register(self.tournament_records, t.tournament_id, self._bots(bots, 0))
        self.notify_tournament(t.tournament_id)
        return t

    def _enter(self, player_id: str, t: tournaments.Tournament, add) -> tournaments.Tournament:
        """Check the player like a rated seat, move the entry into escrow, then ``add`` the
        entrant (a registration or an accepted invite); the entry is refunded if that fails."""
        entrant = self._entrant(player_id, t.stake)
        if t.entrant(player_id) is not None:
            tournaments.register(
                self.tournament_records, t.tournament_id, [entrant]
            )  # AlreadyExists
        if tournament_purse.has_entry(t):
            needs = allocated_tables.seat_needs(self.tables, player_id)
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
        self.notify_tournament(t.tournament_id)
        return t

    def register_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        """JoinTournament: the caller enters themselves (the entry moves into escrow)."""
        player = self.authenticate(token)
        t = tournaments.get(self.tournament_records, tournament_id)
        return self._enter(
            player.player_id,
            t,
            lambda e: tournaments.register(self.tournament_records, tournament_id, [e]),
        )

    def withdraw_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        """LeaveTournament before the start: the entry is refunded in full."""
        player = self.authenticate(token)
        before = tournaments.get(self.tournament_records, tournament_id)
        t = tournaments.withdraw(self.tournament_records, tournament_id, player.player_id)
        left = before.entrant(player.player_id)
        if left is not None:
            tournament_purse.refund_entry(self.store, t, left, self.clock())
        self.notify_tournament(t.tournament_id)
        return t

    def invite_to_tournament(
        self, token: str, tournament_id: str, player_ids: Sequence[str]
    ) -> tournaments.Tournament:
        """The creator invites players (each enters only by accepting)."""
        creator = self.authenticate(token)
        consent.check_invite_ids(player_ids)
        for pid in player_ids:
            if pid != creator.player_id:
                found = accounts.find_player(self.players, pid)
                if found is None or found.bot or found.guest:
                    raise NotFound(f"no player {pid!r} to invite", player_id=pid)
        t = consent.invite(
            self.tournament_records, tournament_id, creator.player_id, list(player_ids)
        )
        self.notify_tournament(t.tournament_id)
        return t

    def accept_invite(self, token: str, tournament_id: str) -> tournaments.Tournament:
        player = self.authenticate(token)
        t = tournaments.get(self.tournament_records, tournament_id)
        consent.require_invited(t, player.player_id)
        return self._enter(
            player.player_id,
            t,
            lambda e: consent.accept_invite(self.tournament_records, tournament_id, e),
        )

    def decline_invite(self, token: str, tournament_id: str) -> tournaments.Tournament:
        player = self.authenticate(token)
        t = consent.decline_invite(self.tournament_records, tournament_id, player.player_id)
        self.notify_tournament(t.tournament_id)
        return t

    def cancel_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        """The creator cancels before the first round: every entry and house prize returns."""
        player = self.authenticate(token)
        t = tournaments.cancel(self.tournament_records, tournament_id, player.player_id)
        t = self._settle_purse(t)  # the refunds (the ticker finishes a large roll's)
        log.info("tournament_cancelled", tournament=tournament_id)
        self.notify_tournament(t.tournament_id)
        return t

    def abort_tournament(self, tournament_id: str, reason: str) -> tournaments.Tournament:
        """An operator ends a tournament that has not finished (a STALLED one, say): FINISHED
        and cancelled, every entry refunded and the house prizes returned; no prizes."""
        reason = (reason or "").strip()
        if not reason:
            raise InvalidArgument("reason is required", field="reason")
        if len(reason) > MAX_REASON:
            raise InvalidArgument(f"reason is over {MAX_REASON} characters", field="reason")
        t = tournaments.get(self.tournament_records, tournament_id)
        if t.state == tournaments.FINISHED:
            raise FailedPrecondition(
                f"tournament {tournament_id} is finished", reason="TOURNAMENT_FINISHED"
            )
        t = tournaments.fail(
            self.tournament_records,
            tournament_id,
            f"ended by an operator: {reason}",
            cancelled=True,
        )
        log.warning("tournament_aborted", tournament=tournament_id, reason=reason)
        t = self._settle_purse(t)
        self.notify_tournament(t.tournament_id)
        return t

    def retry_tournament(self, tournament_id: str) -> tournaments.Tournament:
        """An operator's retry: the next step is tried at once, the backoff reset."""
        t = tournaments.get(self.tournament_records, tournament_id)
        if t.state == tournaments.FINISHED and not tournament_purse.settled(t):
            return self._settle_purse(t)
        if t.state not in tournaments.ACTIVE:
            raise FailedPrecondition(
                f"tournament {tournament_id} is {t.state}: nothing to retry",
                reason="TOURNAMENT_NOT_RUNNING",
            )
        tournaments.retry_now(self.tournament_records, tournament_id)
        log.info("tournament_retry", tournament=tournament_id, failures=t.failures)
        self.tournament_work(tournament_id)
        self.notify_tournament(t.tournament_id)
        return tournaments.get(self.tournament_records, tournament_id)

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
        t = tournaments.get(self.tournament_records, tournament_id)
        if t.state == tournaments.FINISHED:
            raise FailedPrecondition(
                f"tournament {tournament_id} is finished", reason="TOURNAMENT_FINISHED"
            )
        for i, (asset, amount) in enumerate(assets):
            ref = f"tournament/{tournament_id}/house-prize/{request_id}/{i}"
            prize = tournaments.HousePrize(rank, asset, amount, ref)
            tournament_purse.fund_house_prize(self.store, t, prize, reason, self.clock())
            t = tournaments.add_house_prize(self.tournament_records, tournament_id, prize)
        log.info("tournament_prize_added", tournament=tournament_id, rank=rank, reason=reason)
        self.notify_tournament(t.tournament_id)
        return t

    def add_tournament_bots(self, token: str, tournament_id: str, count: int):
        player = self.authenticate(token)
        t = tournaments.get(self.tournament_records, tournament_id)
        if t.creator != player.player_id:
            raise PermissionDenied(f"only the creator {t.creator} may add bots to {tournament_id}")
        if count < 1:
            raise InvalidArgument(f"bot count {count} must be at least 1", field="count")
        tournaments.require_registering(t.header)
        bots = self._bots(count, sum(e.bot for e in t.entrants))
        t = tournaments.register(self.tournament_records, tournament_id, bots)
        self.notify_tournament(t.tournament_id)
        return t

    def start_tournament(self, token: str, tournament_id: str) -> tournaments.Tournament:
        """The creator starts it: the roll closes, round one is seated and its first tables
        created now (the ticker creates the rest, in batches)."""
        player = self.authenticate(token)
        t = tournaments.start(self.tournament_records, tournament_id, player.player_id)
        tournament_purse.spend_at_start(self.store, t, self.clock())
        log.info("tournament_started", tournament=tournament_id, entrants=len(t.entrants))
        self.tournament_work(tournament_id, count_failure=False)
        self.notify_tournament(t.tournament_id)
        return tournaments.get(self.tournament_records, tournament_id)

    def tournament(self, tournament_id: str) -> tournaments.Tournament:
        return tournaments.get(self.tournament_records, tournament_id)

    def tournament_tables(
        self, tournament_id: str, round_no: int | None = None
    ) -> list[TableState]:
        """A round's tables (the current round's by default)."""
        t = tournaments.get(self.tournament_records, tournament_id)
        return tournament_rounds.round_tables(self.tournament_records, t, round_no)

    def round_standings(
        self, tournament_id: str
    ) -> list[tuple[tournament_standings.Standing, ...]]:
        """The standings after each finished round."""
        return tournament_standings.all_standings(
            self.tournament_records, tournaments.get(self.tournament_records, tournament_id)
        )

    def final_ranking(self, tournament_id: str) -> tuple[tournament_standings.Standing, ...]:
        t = tournaments.get(self.tournament_records, tournament_id)
        return tournament_standings.final_ranking(self.tournament_records, t)

    def tournament_snapshot(self, tournament_id: str) -> TournamentSnapshot:
        """The tournament and its detail as this replica's watchers share it: read again when
        it changed here, or after :data:`SNAPSHOT_TTL_S` (another replica's changes)."""
        version = self.tournament_version(tournament_id)
        now = time.monotonic()
        with self._snapshots_lock:
            hit = self._snapshots.get(tournament_id)
        if hit is not None and hit.version == version and now - hit.at < SNAPSHOT_TTL_S:
            return hit
        t = tournaments.get(self.tournament_records, tournament_id)
        lists, progress = self.tournament_detail(t)
        snap = TournamentSnapshot(version, now, t, lists, progress)
        with self._snapshots_lock:
            self._snapshots[tournament_id] = snap
            if len(self._snapshots) > 1024:
                self._snapshots.pop(next(iter(self._snapshots)))
        return snap

    def tournament_detail(self, t: tournaments.Tournament):
        """What a tournament's message shows beside its header: a small one's lists (None for
        a large one) and the current round's progress."""
        progress = (
            get_progress(self.tournament_records, t.tournament_id, t.current_round)
            if t.current_round
            else None
        )
        return tournament_rounds.lists_of(self.tournament_records, t), progress

    def tournament_seat(self, t: tournaments.Tournament, player_id: str):
        """The player's seat in the current round once its table exists (else None)."""
        seat = tournament_rounds.seat_of(self.tournament_records, t, player_id)
        return seat[1] if seat else None

    def standings_page(self, tournament_id: str, round_no: int, size: int, token: str):
        """A page of standings: (standings, ranked, final, round, next page token)."""
        t = tournaments.get(self.tournament_records, tournament_id)
        offset, size = _page(token, size, 200, 1000)
        if round_no < 0:
            raise InvalidArgument(f"round {round_no} is negative", field="round")
        page, total, final = tournament_standings.standings_page(
            self.tournament_records, self.store, t, round_no, offset, size
        )
        nxt = str(offset + size) if offset + size < total else ""
        return page, total, final, round_no or t.current_round, nxt

    def tables_page(self, tournament_id: str, round_no: int, size: int, token: str):
        """A page of a round's tables: (tables, round, tables in the round, next page token)."""
        t = tournaments.get(self.tournament_records, tournament_id)
        offset, size = _page(token, size, 100, 500)
        if round_no < 0:
            raise InvalidArgument(f"round {round_no} is negative", field="round")
        tables, r, total = tournament_rounds.tables_page(
            self.tournament_records, t, round_no, offset, size
        )
        nxt = str(offset + size) if offset + size < total else ""
        return tables, r, total, nxt

    def live_standings(self, tournament_id: str) -> tuple[tournament_standings.Standing, ...]:
        """Standings now, from the ledger (mid-round included)."""
        t = tournaments.get(self.tournament_records, tournament_id)
        return tournament_standings.live_standings(self.tournament_records, self.store, t)

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)

    # --- the ticker's work for one tournament --------------------------------------------
    def _not_running(self, tournament_id: str) -> None:
        """Ticks stop looking at a tournament still registering (a start marks it running
        first, then closes the roll: one refused half-way leaves the mark). A start may land
        between this tick's read and the removal: read again after it, and mark it running
        again if it started meanwhile (the start marks it again after closing the roll, so one
        of the two marks is always the last word)."""
        done_running(self.tournament_records, tournament_id)
        try:
            again = tournaments.get(self.tournament_records, tournament_id)
        except NotFound:
            return
        if again.roll.closed or again.state != tournaments.REGISTERING:
            mark_running(self.tournament_records, tournament_id)

    def tournament_work(self, tournament_id: str, *, count_failure: bool = True) -> bool:
        """Whatever the tournament can do now: settle tables whose hands came late, seat the
        next round, create a batch of tables, and once it is finished its refunds or prizes.
        A failure is counted (backoff, then STALLED) and logged once per try; True when
        something changed."""
        now_ms = self._now_ms()
        try:
            t = tournaments.get(self.tournament_records, tournament_id)
        except NotFound:
            done_running(self.tournament_records, tournament_id)
            return False
        if now_ms < t.retry_at_ms:
            return False
        if t.state == tournaments.FINISHED:
            try:
                self._settle_purse(t)
            except Exception as exc:  # the ledger: tried again after the backoff
                self._step_failed(tournament_id, "purse", exc, now_ms)
                return False
            if t.failures:
                tournaments.step_succeeded(self.tournament_records, tournament_id)
            return True
        if t.state == tournaments.REGISTERING:
            if not t.roll.closed:  # a start that was refused: nothing to do
                self._not_running(tournament_id)
            return False
        step = "seat"
        try:
            changed = False
            if t.current_round:
                step = "settle"
                stuck = tournament_rounds.unsettled(
                    self.tournament_records, self.store, tournament_id, t.current_round, now_ms
                )
                if stuck:
                    x = stuck[0]
                    held = ledger.hands_of_table(self.store, x.table_id)
                    raise FailedPrecondition(
                        f"round {x.round} table {x.index} ({x.table_id}) finished after "
                        f"{x.hands_played} hands but the ledger holds {held} of them "
                        f"({len(stuck)} such tables)",
                        reason="HANDS_MISSING",
                    )
            step = "seat"
            what = tournament_rounds.advance(
                self.tournament_records, self.store, tournament_id, now_ms
            )
            if what:
                changed = True
                self.metrics.round_done()
                log.info("tournament_advanced", tournament=tournament_id, did=what)
            step = "create_tables"
            created = tournament_rounds.create_tables(
                self.tournament_records, self.allocator, tournament_id, self._now_ms
            )
            self.metrics.tables_created("tournament", created.created)
            changed |= bool(created.created)
            if created.error is not None and not created.created:
                raise created.error
        except Exception as exc:  # any failure of the step: backoff, never a tight loop
            if count_failure:
                self._step_failed(tournament_id, step, exc, now_ms)
            else:
                log.warning("tournament_step_deferred", tournament=tournament_id, step=step,
                            error=_reason(exc))  # fmt: skip
            return True
        if t.failures or t.state == tournaments.STALLED:
            tournaments.step_succeeded(self.tournament_records, tournament_id)
            log.info("tournament_recovered", tournament=tournament_id, after=t.failures)
            changed = True
        after = tournaments.get(self.tournament_records, tournament_id)
        if after.state == tournaments.FINISHED:
            changed = True
            try:
                self._settle_purse(after)
            except Exception as exc:  # the ledger: the next ticks try again, with backoff
                self._step_failed(tournament_id, "purse", exc, now_ms)
        return changed

    def _step_failed(self, tournament_id: str, step: str, exc: Exception, now_ms: int) -> None:
        self.metrics.tournament_step_failed(step)
        reason = f"{step}: {_reason(exc)}"
        try:
            h = tournaments.step_failed(self.tournament_records, tournament_id, reason, now_ms)
        except Exception as store_exc:  # the store itself: the ticker tries again later
            log.error("tournament_step_failed", tournament=tournament_id, step=step,
                      error=reason, record_error=repr(store_exc))  # fmt: skip
            return
        fields = dict(
            tournament=tournament_id,
            step=step,
            error=reason,
            failures=h.failures,
            retry_in_s=tournaments.backoff_s(h.failures),
            state=h.state,
        )
        if isinstance(exc, DomainError):
            log.warning("tournament_step_failed", **fields)
        else:  # a bug: its traceback, once per try
            log.error("tournament_step_failed", exc_info=exc, **fields)

    def _settle_purse(self, t: tournaments.Tournament) -> tournaments.Tournament:
        """A finished tournament's money, in bounded batches: refunds when it was cancelled or
        failed, else the prizes (once); then it leaves the running index."""
        now = self.clock()
        if t.failure or t.cancelled:
            done = tournament_purse.refund_batch(self.store, t, now)
            t = tournaments.record_purse_progress(self.tournament_records, t.tournament_id, done)
            if not tournament_purse.settled(t):
                return t
            tournament_purse.return_house_prizes(self.store, t, now)
        else:
            tournament_purse.spend_at_start(self.store, t, now)  # once; here after a crash
            bots = {e.player_id for e in t.entrants if e.bot}
            ranking = tournament_standings.final_ranking(self.tournament_records, t)
            prizes = tournament_purse.pay_prizes(self.store, t, ranking, bots, now)
            t = tournaments.record_prizes(self.tournament_records, t.tournament_id, prizes)
        done_running(self.tournament_records, t.tournament_id)
        return t


def _page(token: str, size: int, default: int, most: int) -> tuple[int, int]:
    """A page's offset (from its token) and size (0 = ``default``); InvalidArgument else."""
    if not 0 <= size <= most:
        raise InvalidArgument(f"page_size {size} is not in 0-{most}", field="page_size")
    if token and not (token.isdigit() and len(token) <= 9):
        raise InvalidArgument("page_token is not one this service gave", field="page_token")
    return int(token or 0), size or default


def _reason(exc: Exception) -> str:
    if isinstance(exc, DomainError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"[:300]
