"""The Start button of a private room and its timer (RULES.md §11), and starting the table.

* Once one player has pressed Start, every seated player who has not gets ``ready_seconds``
  (15 by default) and is then removed from the room; a player who joins later gets the same time
  from joining (:func:`services.matchmaking.domain.rooms.private.join_room`).
* With four seats taken, 底分 accepted by all and every player ready, the table is created on a
  gateway (idempotent by the room's request id; retried while the gateway is unavailable) and
  each member then finds its seat and token in the room. A gateway that refuses the table
  (:class:`~services.matchmaking.domain.tables.allocator.TableRefused`: its settings) is not asked
  again: the room is FINISHED with the refusal as its ``failure``, and its players are free.
"""

from __future__ import annotations

from dataclasses import replace

from services.matchmaking.domain.economy import room_cards
from services.matchmaking.domain.players import presence
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.rooms.private import (
    CLOSED,
    FINISHED,
    OPEN,
    PLAYING,
    SEATS,
    STARTING,
    Room,
    get_room,
    mutate_room,
    require_member,
    require_open,
    without_players,
)
from services.matchmaking.domain.rooms.repository import RoomRepository
from services.matchmaking.domain.tables.allocator import (
    SeatRequest,
    TableAllocator,
    TableRefused,
    TableRequest,
)
from services.matchmaking.domain.tables.tags import room_tag
from shared.errors import DomainError, FailedPrecondition


def press_start(
    store: RoomRepository, code: str, player_id: str, now: float, ready_seconds: float
) -> Room:
    """Press Start. The first press starts everyone else's ready timer."""

    def fn(room: Room) -> Room:
        require_open(room)
        me = require_member(room, player_id)
        if room.stake is None:
            raise FailedPrecondition(f"room {code} has no 底分 yet", reason="NO_STAKE")
        if not me.accepted:
            raise FailedPrecondition("accept 底分 before pressing Start", reason="NOT_ACCEPTED")
        first = room.started_by_first_at is None
        deadline = now + ready_seconds
        members = tuple(
            replace(m, ready=True, ready_deadline=None)
            if m.player_id == player_id
            else (replace(m, ready_deadline=deadline) if first and not m.ready else m)
            for m in room.members
        )
        return replace(room, members=members, started_by_first_at=room.started_by_first_at or now)

    return mutate_room(store, code, fn)


def expire_ready_timers(store: RoomRepository, code: str, now: float) -> list[str]:
    """Remove the players whose ready time ran out; returns their ids."""
    room = get_room(store, code)
    late = {
        m.player_id
        for m in room.members
        if room.state == OPEN
        and not m.ready
        and m.ready_deadline is not None
        and now >= m.ready_deadline
    }
    if not late:
        return []

    def fn(room: Room) -> Room:
        return without_players(room, late) if room.state == OPEN else room

    room = mutate_room(store, code, fn)
    for pid in late:
        presence.release(store, pid, presence.ROOM, code)
    if room.state == CLOSED:
        store.drop_room(code)
    return sorted(late)


def ready_to_start(room: Room) -> bool:
    return (
        room.state == OPEN
        and room.stake is not None
        and len(room.members) == SEATS
        and all(m.accepted and m.ready for m in room.members)
    )


def start_if_ready(
    store: RoomRepository,
    ledger_store: Records,
    allocator: TableAllocator,
    code: str,
    now: float = 0.0,
) -> tuple[Room, bool]:
    """Create the table on a gateway once the room is full, agreed and ready (retried while the
    gateway is unavailable, or another replica is creating it: the room stays STARTING).
    Returns the room and whether this call created its table. ``ledger_store``: where a
    refused room's 房卡 goes back (:func:`fail_room`)."""

    def begin(room: Room) -> Room:
        return replace(room, state=STARTING) if ready_to_start(room) else room

    room = mutate_room(store, code, begin)
    if room.state == FINISHED and room.failure:  # refused, and a crash cut its clean-up short
        return fail_room(store, ledger_store, code, room.failure, now), False
    if room.state != STARTING:
        return room, False
    request = TableRequest(
        request_id=f"room-{room.code}-{room.request_id}",
        ruleset=room.ruleset,
        ruleset_options=dict(room.ruleset_options),
        stake=room.stake or 1,
        seats=tuple(SeatRequest(m.player_id, m.display_name, m.bot) for m in room.members),
        max_hands=room.max_hands,
        tag=room_tag(room.code),
        fee_per_hand=room.fee_per_hand,
    )
    try:
        table = allocator.create_table(request)
    except TableRefused as refused:  # never asked again: the room fails, its players see why
        return fail_room(store, ledger_store, code, refused.message, now), False
    except DomainError:
        return room, False

    def playing(room: Room) -> Room:
        if room.state != STARTING:
            return room  # another replica moved it on
        return replace(
            room,
            state=PLAYING,
            table_id=table.table_id,
            gateway_address=table.gateway_address,
            seat_tokens=tuple(table.seat_tokens),
        )

    return mutate_room(store, code, playing), not table.reused


def fail_room(
    store: RoomRepository, ledger_store: Records, code: str, failure: str, now: float = 0.0
) -> Room:
    """A starting room whose table the gateway refused: FINISHED with ``failure`` shown to its
    players (who may leave, and play elsewhere at once), never started again; its 房卡 goes
    back to the player who spent it (once: the refund's reference)."""

    def fn(room: Room) -> Room:
        return replace(room, state=FINISHED, failure=failure) if room.state == STARTING else room

    room = mutate_room(store, code, fn)
    if room.opener:
        room_cards.refund_room_card(ledger_store, room.opener, code, now)
    for m in room.humans():
        presence.release(store, m.player_id, presence.ROOM, code)
    store.deactivate(code)
    return room
