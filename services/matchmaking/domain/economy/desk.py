"""The economy desk of :class:`~services.matchmaking.service.Matchmaking` (RULES-items §1, §4):
items for silver (:mod:`.items`), operator grants, every asset's balance, the ledger a page at a
time, the cover a seat needs (:mod:`.hand_cover`) at joining and after every hand (破产), and
the reconciliation report (:mod:`.reconciliation`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import structlog

from services.matchmaking.domain.clock import Clock
from services.matchmaking.domain.economy import hand_cover, items, ledger, reconciliation, statement
from services.matchmaking.domain.economy.books import books_of
from services.matchmaking.domain.economy.ledger import HandReport
from services.matchmaking.domain.players import accounts
from services.matchmaking.domain.players.repository import PlayerRepository
from services.matchmaking.domain.ports import Metrics, Records
from services.matchmaking.domain.queues import levels
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.domain.tables.repository import TableRepository
from shared.errors import FailedPrecondition

log = structlog.get_logger("mahjong.matchmaking")
WATCH_SECONDS = 60.0  # how often the ticker refreshes the reconciliation gauges and alerts


def replacement_bot_id(table_id: str, seat: int) -> str:
    """The bot that takes a bankrupt seat: one per (table, seat), so a repeated answer names
    the same one."""
    return f"bot-{table_id}-s{seat}"


class EconomyDesk:
    """A part of :class:`~services.matchmaking.service.Matchmaking`: ``authenticate`` is the
    identity desk's (a session token to its member), ``notify`` tells the facade's watchers of
    a change, ``config`` the facade's MatchmakingConfig (item prices, the bot-net alert)."""

    def __init__(
        self,
        store: Records,
        players: PlayerRepository,
        tables: TableRepository,
        clock: Clock,
        config: Any,
        authenticate: Callable[[str], accounts.Player],
        notify: Callable[[], None],
        metrics: Metrics,
    ) -> None:
        self.store = store
        self.players = players
        self.tables = tables
        self.metrics = metrics
        self.clock = clock
        self.config = config
        self.authenticate = authenticate
        self.notify = notify
        self._last_watch = float("-inf")

    # --- balances ------------------------------------------------------------------------------
    def asset_balances(self, player_id: str) -> dict[str, int]:
        """Every asset the player holds."""
        return ledger.balances(self.store, player_id)

    def ledger_page(
        self, token: str, asset: str | None, page_token: str, page_size: int
    ) -> tuple[dict[str, int], list[ledger.Entry], str, dict[str, str]]:
        """The caller's balances and a page of its entries, newest first, the next token and
        the table of each hand the page's entries name (its replay's address)."""
        player = self.authenticate(token)
        found, next_token = statement.entries_page(
            self.store, player.player_id, asset, page_token, page_size
        )
        tables = books_of(self.store).tables_of_hands({e.ref for e in found})
        return self.asset_balances(player.player_id), found, next_token, tables

    # --- items ---------------------------------------------------------------------------------
    def item_prices(self) -> list[tuple[str, int]]:
        return self.config.item_prices.listing()

    def buy_items(self, token: str, asset: str, count: int, request_id: str):
        """Buy items with silver; (the player, silver paid)."""
        player = self.authenticate(token)
        paid = items.buy(
            self.store,
            self.config.item_prices,
            player.player_id,
            asset,
            count,
            request_id,
            self.clock(),
            allocated_tables.seat_needs(self.tables, player.player_id),
        )
        self.metrics.items_bought(asset, count)
        log.info("items_bought", player=player.player_id, asset=asset, count=count, silver=paid)
        self.notify()
        return player, paid

    def grant_assets(
        self,
        operator: str,
        player_id: str,
        assets: Sequence[tuple[str, int]],
        reason: str,
        request_id: str,
    ):
        """An operator's grant from the house, logged with who and why; the player."""
        player = accounts.get_player(self.players, player_id)
        if player.bot or getattr(player, "guest", False):
            raise FailedPrecondition(f"{player_id} has no ledger account", reason="NO_WALLET")
        new = items.grant(self.store, player_id, assets, reason, operator, request_id, self.clock())
        log.warning(
            "operator_grant",
            operator=operator,
            player=player_id,
            assets=[f"{a}={n}" for a, n in assets],
            reason=reason,
            request_id=request_id,
            new=new,
        )
        self.notify()
        return player

    # --- covering a hand -----------------------------------------------------------------------
    def check_room_stake(self, room, stake: int, joining: Sequence[str] = ()) -> None:
        """Room stakes (RULES-items §4): a tier of the level table, at most what the lowest
        level among the seated humans (and ``joining``) allows, and covered by each of them;
        FailedPrecondition STAKE_NOT_ALLOWED / SILVER_BELOW_COVER listing the tiers allowed."""
        humans = [m.player_id for m in room.members if not m.bot] + list(joining)
        silver = {p: ledger.balance(self.store, p) for p in dict.fromkeys(humans)}
        fee = room.fee_per_hand  # 台费, paid on top of the cover (RULES.md §9a)
        levels.level_for_stake(stake)  # InvalidArgument for a stake that is no tier
        lowest = min((levels.level_for(x) for x in silver.values()), key=lambda lv: lv.rank)
        allowed = [
            t
            for t in levels.allowed_stakes(lowest)
            if all(
                (c := hand_cover.loss_cap(room.ruleset, room.ruleset_options, t)) is not None
                and x >= c + fee
                for x in silver.values()
            )
        ]
        if stake in allowed:
            return
        tiers = ", ".join(map(str, allowed)) or "none"
        if stake not in levels.allowed_stakes(lowest):
            raise FailedPrecondition(
                f"stake {stake} is above what the lowest level at the table ({lowest.name}, "
                f"tiers up to {lowest.base_chips}) allows; tiers allowed here: {tiers}",
                reason="STAKE_NOT_ALLOWED",
                stake=stake,
                allowed=tiers,
            )
        for p, x in silver.items():
            try:
                hand_cover.require_cover(p, x, room.ruleset, room.ruleset_options, stake, fee)
            except FailedPrecondition as exc:
                raise FailedPrecondition(
                    f"{exc.message}; tiers allowed here: {tiers}",
                    reason=exc.reason,
                    **{**exc.details, "allowed": tiers},
                ) from None

    def bankrupt_after(self, report: HandReport) -> tuple[list[int], list[str]]:
        """The seats whose player no longer covers the next hand at the table's stake and its
        room service fee (破产),
        and the bot to take each: the RecordHand answer. The allocation's seating changes with
        the answer (:func:`~services.matchmaking.domain.tables.allocated.replace_seat`): the gateway
        seats that bot before its next deal, so every later report names it there (its side is the
        house's: bots have no wallets), while a repeated report of this hand still names the player
        and gets the same answer. A hand the player cannot pay in full is cut to what they hold
        (:func:`.ledger.record_hand`), so the books stay whole either way."""
        table = allocated_tables.find(self.tables, report.table_id)
        if table is None or table.stake <= 0 or not table.ruleset:
            return [], []
        needed = hand_cover.loss_cap(table.ruleset, dict(table.ruleset_options), table.stake)
        if needed is not None:
            needed += table.fee_per_hand  # the next hand's 台费 too (RULES.md §9a)
        seats: list[int] = []
        bots: list[str] = []
        left = {(seat, pid): hand for seat, pid, hand in table.bankrupt}
        for seat, pid in enumerate(report.player_ids):
            if ledger.is_bot(pid):
                continue
            if left.get((seat, pid)) == report.hand_id:  # a repeat: the same answer
                seats.append(seat)
                bots.append(table.player_ids[seat])
                continue
            silver = ledger.balance(self.store, pid)
            if needed is None or silver < needed:
                bot = replacement_bot_id(report.table_id, seat)
                allocated_tables.replace_seat(
                    self.tables, report.table_id, seat, bot, report.hand_id
                )
                seats.append(seat)
                bots.append(bot)
                self.metrics.seat_bankrupt()
                log.info(
                    "seat_bankrupt",
                    table=report.table_id,
                    seat=seat,
                    player=pid,
                    silver=silver,
                    needed=needed,
                    bot=bot,
                )
        return seats, bots

    # --- reconciliation ------------------------------------------------------------------------
    def reconciliation(self, day: str) -> reconciliation.Reconciliation:
        return reconciliation.report_for(self.store, day, self.clock(), self.config.bot_net_alert)

    def watch_books(self) -> None:
        """From the ticker, once a minute: the reconciliation gauges and alerts of today."""
        now = self.clock()
        if now - self._last_watch < WATCH_SECONDS:
            return
        self._last_watch = now
        reconciliation.watch(self.store, now, self.config.bot_net_alert, self.metrics)
