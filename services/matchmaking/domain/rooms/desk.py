"""The private-room desk of :class:`~services.matchmaking.service.Matchmaking`: each call
authenticated by the player's token, then :mod:`.private` / :mod:`.start` (and 房卡 from
:mod:`~services.matchmaking.domain.economy.room_cards`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import structlog

from services.matchmaking.domain.clock import Clock
from services.matchmaking.domain.economy import room_cards
from services.matchmaking.domain.players import accounts as players
from services.matchmaking.domain.players import presence
from services.matchmaking.domain.ports import Metrics, Records
from services.matchmaking.domain.rooms import private as rooms
from services.matchmaking.domain.rooms import start as room_start
from services.matchmaking.domain.rooms.repository import RoomRepository
from services.matchmaking.domain.ruleset_choice import ready_seconds, ruleset_with_options
from services.matchmaking.domain.tables.allocator import TableAllocator
from shared.errors import FailedPrecondition, PermissionDenied

log = structlog.get_logger("mahjong.matchmaking")


class RoomDesk:
    """A part of :class:`~services.matchmaking.service.Matchmaking`. Opening or joining a room
    claims the player's presence atomically
    (:mod:`~services.matchmaking.domain.players.presence`): a player waiting in a queue or
    sitting in another room is refused, nothing spent.

    ``authenticate``: the identity desk's; ``notify``: tells the facade's watchers of a change;
    ``holds``: whether a presence's ticket or room still holds its player; ``check_stake``: the
    economy desk's check of a room stake (its tier, and the cover of the humans seated and
    joining); ``config``: the facade's MatchmakingConfig (``ready_seconds``)."""

    def __init__(
        self,
        store: Records,
        room_records: RoomRepository,
        allocator: TableAllocator,
        clock: Clock,
        config: Any,
        authenticate: Callable[[str], players.Player],
        notify: Callable[[], None],
        holds: presence.Holds,
        check_stake: Callable[..., None],
        metrics: Metrics,
    ) -> None:
        self.metrics = metrics
        self.store = store  # the ledger's (房卡)
        self.room_records = room_records
        self.allocator = allocator
        self.clock = clock
        self.config = config
        self.authenticate = authenticate
        self.notify = notify
        self._holds = holds
        self.check_room_stake = check_stake

    def _ready_seconds(self, room: rooms.Room) -> float:
        if self.config.ready_seconds is not None:
            return self.config.ready_seconds
        return ready_seconds(room.ruleset, room.ruleset_options)

    def open_room(
        self,
        token: str,
        ruleset: str,
        max_hands: int,
        options: Mapping[str, str] | None = None,
        fee_per_hand: int = 0,
        client_address: str = "",
    ) -> rooms.Room:
        """Open a room (spends one 房卡) with a preset and optional house rules ("section.option"
        overrides) and its room service fee (台费, 0 = none); nothing is spent if the room
        cannot be opened."""
        player = self.authenticate(token)
        rooms.check_fee(fee_per_hand)
        name, options = ruleset_with_options(ruleset, options)
        if room_cards.room_cards(self.store, player.player_id) < 1:
            raise FailedPrecondition(
                f"player {player.player_id} has no room card (房卡) to open a room",
                reason="NO_ROOM_CARD",
            )
        room = rooms.open_room(
            self.room_records,
            player.player_id,
            player.display_name,
            name,
            max_hands,
            self.clock(),
            options,
            self._holds,
            fee_per_hand,
            client_address,
        )
        try:
            room_cards.spend_room_card(self.store, player.player_id, room.code, self.clock())
        except BaseException:
            rooms.leave_room(self.room_records, room.code, player.player_id, self.clock())
            raise
        self.notify()
        return room

    def room(self, token: str, code: str) -> tuple[players.Player, rooms.Room]:
        """A room of the caller's own (a member of it); another's is PERMISSION_DENIED."""
        player = self.authenticate(token)
        room = rooms.get_room(self.room_records, code)
        if room.member(player.player_id) is None:
            raise PermissionDenied(
                f"{player.player_id} is not in room {code}: join it first",
                reason="NOT_IN_ROOM",
                field="code",
            )
        return player, room

    def join_room(self, token: str, code: str, client_address: str = "") -> rooms.Room:
        player = self.authenticate(token)
        room = rooms.get_room(self.room_records, code)
        if room.stake is not None:  # the player must allow and cover the stake set
            self.check_room_stake(room, room.stake, [player.player_id])
        room = rooms.join_room(
            self.room_records,
            code,
            player.player_id,
            player.display_name,
            self.clock(),
            self._ready_seconds(room),
            self._holds,
            client_address,
            self.config.rooms_one_per_address,
        )
        self.notify()
        return room

    def leave_room(self, token: str, code: str) -> rooms.Room:
        player = self.authenticate(token)
        room = rooms.leave_room(self.room_records, code, player.player_id, self.clock())
        self.notify()
        return room

    def set_room_stake(self, token: str, code: str, stake: int) -> rooms.Room:
        player = self.authenticate(token)
        if stake > 0:
            self.check_room_stake(rooms.get_room(self.room_records, code), stake)
        room = rooms.set_stake(self.room_records, code, player.player_id, stake)
        self.notify()
        return room

    def answer_room_stake(self, token: str, code: str, accept: bool) -> rooms.Room:
        player = self.authenticate(token)
        current = rooms.get_room(self.room_records, code)
        if accept and current.stake is not None:
            self.check_room_stake(current, current.stake)
        room = rooms.respond_to_stake(
            self.room_records, code, player.player_id, accept, self.clock()
        )
        self.notify()
        return room

    def invite_bot(self, token: str, code: str) -> rooms.Room:
        player = self.authenticate(token)
        rooms.invite_bot(self.room_records, code, player.player_id, self.clock())
        room = self.start_room(code)
        self.notify()
        return room

    def press_start(self, token: str, code: str) -> rooms.Room:
        player = self.authenticate(token)
        room = rooms.get_room(self.room_records, code)
        room_start.press_start(
            self.room_records, code, player.player_id, self.clock(), self._ready_seconds(room)
        )
        room = self.start_room(code)
        self.notify()
        return room

    def start_room(self, code: str) -> rooms.Room:
        room, created = room_start.start_if_ready(
            self.room_records, self.store, self.allocator, code, self.clock()
        )
        if created:
            self.metrics.tables_created("room")
            log.info("room_table", room=code, table=room.table_id)
        return room
