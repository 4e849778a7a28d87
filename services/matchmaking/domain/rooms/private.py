"""Private rooms (开房, RULES.md §11): opened with a room card, joined by a short code.

* The player who opens a room owns it and sets 底分 (the stake); the others accept or refuse, and
  a player who refuses leaves. If the setter leaves, the next seated player (in joining order)
  becomes the setter and the stake must be set (and accepted) again; until then nobody else may
  change it.
* Start: once one player has pressed Start, every seated player who has not gets
  ``ready_seconds`` (RULES §11: 15) and is then removed from the room. A player who joins
  after that gets the same time from joining.
* Bots may be invited to fill seats; they accept and are ready at once.
* The opener may set a room service fee (房间服务费 / 台费, RULES.md §9a): ``fee_per_hand``
  silver charged to each human seat per hand and paid to the house, 0 (the default) to
  :data:`MAX_ROOM_FEE`. It is fixed when the room opens (nobody changes it later), shown to
  whoever joins, and a player who cannot cover it on top of the hand's cover is not seated.
* Start, its timer and the start of the table on a gateway are in :mod:`.start`.

Every change is one atomic update of the room record; errors change nothing. A seat also takes
the player's presence (:mod:`~services.matchmaking.domain.players.presence`), claimed atomically
before the seat and released after leaving, so a player in a room is in no queue and no other room,
even between replicas.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import asdict, dataclass, field, replace

from services.matchmaking.domain import records
from services.matchmaking.domain.players import presence
from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.domain.queues.quick_match import Assignment
from services.matchmaking.domain.rooms.repository import RoomRepository
from shared.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from shared.table import MAX_HANDS, MAX_STAKE

MAX_ROOM_FEE = 1_000_000  # silver per hand per human seat: far above any tier's cover

SEATS = 4
CODE_DIGITS = 6

OPEN, STARTING, PLAYING, FINISHED, CLOSED = "open", "starting", "playing", "finished", "closed"


@dataclass(frozen=True, slots=True)
class Member:
    player_id: str
    display_name: str
    bot: bool = False
    accepted: bool = False  # accepted the current 底分
    ready: bool = False  # pressed Start
    joined_at: float = 0.0
    ready_deadline: float | None = None  # removed at this time unless ready
    client_address: str = ""  # where the player joined from ("" = unknown)


@dataclass(frozen=True, slots=True)
class Room:
    code: str
    owner: str  # the setter of 底分 (passes on when the setter leaves)
    ruleset: str
    max_hands: int
    created_at: float
    stake: int | None = None
    members: tuple[Member, ...] = ()
    state: str = OPEN
    started_by_first_at: float | None = None
    table_id: str = ""
    gateway_address: str = ""
    seat_tokens: tuple[str, ...] = ()
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    ruleset_options: dict[str, str] = field(default_factory=dict)  # the room's house rules
    failure: str = ""  # why it finished without a table (the gateway refused it)
    opener: str = ""  # who spent the 房卡 opening it (returned if the gateway refuses the table)
    fee_per_hand: int = 0  # 台费: silver per hand from each human seat to the house (fixed)

    def member(self, player_id: str) -> Member | None:
        return next((m for m in self.members if m.player_id == player_id), None)

    def humans(self) -> list[Member]:
        return [m for m in self.members if not m.bot]

    def seat_of(self, player_id: str) -> int | None:
        return next((i for i, m in enumerate(self.members) if m.player_id == player_id), None)

    def assignment_for(self, player_id: str) -> Assignment | None:
        seat = self.seat_of(player_id)
        if seat is None or not self.table_id:
            return None
        return Assignment(self.gateway_address, self.table_id, seat, self.seat_tokens[seat])

    def to_json(self) -> bytes:
        return records.dump(asdict(self))

    @staticmethod
    def from_json(raw: bytes) -> Room:
        d = records.load(raw)
        d["members"] = tuple(Member(**m) for m in d["members"])
        d["seat_tokens"] = tuple(d["seat_tokens"])
        return Room(**d)


# --- reading -----------------------------------------------------------------------------------
def get_room(store: RoomRepository, code: str) -> Room:
    """The room with this code; NotFound for an unknown or mistyped code."""
    if not code or not code.isdigit() or len(code) != CODE_DIGITS:
        raise NotFound(f"no room with code {code!r} (codes are {CODE_DIGITS} digits)", code=code)
    room = store.room(code)
    if room is None:
        raise NotFound(f"no room with code {code}", code=code)
    return room


def room_of_player(store: RoomRepository, player_id: str) -> str | None:
    """The code of the room the player's presence names, if any."""
    held = presence.current(store, player_id)
    return held.ref if held and held.kind == presence.ROOM else None


def holds(store: RoomRepository, held: presence.Presence) -> bool:
    """Whether the room a room presence names still seats its player (open, starting or
    playing; a finished, closed or missing room, or one without the player, frees it)."""
    room = store.room(held.ref)
    if room is None:
        return False
    return room.state in (OPEN, STARTING, PLAYING) and room.member(held.player_id) is not None


def mutate_room(store: RoomRepository, code: str, fn) -> Room:
    """Apply ``fn(room) -> room`` atomically (fn raises to refuse: nothing changes)."""
    get_room(store, code)  # NotFound with a clear message first

    def tx(found: Room | None):
        if found is None:
            raise NotFound(f"no room with code {code}", code=code)
        room = fn(found)
        return room, room

    return store.update_room(code, tx)


def require_open(room: Room) -> None:
    if room.state != OPEN:
        raise FailedPrecondition(f"room {room.code} is {room.state}", reason="ROOM_NOT_OPEN")


def require_member(room: Room, player_id: str) -> Member:
    m = room.member(player_id)
    if m is None:
        raise PermissionDenied(f"player {player_id} is not in room {room.code}")
    return m


def refusal(store: RoomRepository, held: presence.Presence, code: str) -> FailedPrecondition:
    """The error for a player kept out of room ``code`` by its ``held`` presence: ``IN_QUEUE``,
    ``ALREADY_IN_ROOM`` or ``IN_ANOTHER_ROOM``."""
    pid = held.player_id
    if held.kind == presence.QUEUE:
        return queues.refusal(store, held, presence.ROOM)
    if held.ref == code:
        return FailedPrecondition(
            f"player {pid} is already in room {code}", reason="ALREADY_IN_ROOM"
        )
    return FailedPrecondition(
        f"player {pid} is in room {held.ref}; leave it first", reason="IN_ANOTHER_ROOM"
    )


def _claim_player(
    store: RoomRepository, player_id: str, code: str, now: float, holds: presence.Holds | None
) -> None:
    held = presence.claim(store, player_id, presence.ROOM, code, now, holds)
    if held is not None:
        raise refusal(store, held, code)


def _release_player(store: RoomRepository, player_id: str, code: str) -> None:
    presence.release(store, player_id, presence.ROOM, code)


# --- opening and joining -----------------------------------------------------------------------
def open_room(
    store: RoomRepository,
    owner_id: str,
    owner_name: str,
    ruleset: str,
    max_hands: int,
    now: float,
    ruleset_options: dict[str, str] | None = None,
    holds: presence.Holds | None = None,
    fee_per_hand: int = 0,
    client_address: str = "",
) -> Room:
    """A new room with a fresh code, the owner in seat 0, charging ``fee_per_hand`` silver a
    hand to each human seat (InvalidArgument outside 0-:data:`MAX_ROOM_FEE`). The caller
    spends the room card.
    The owner's presence is claimed first, atomically (FailedPrecondition ``IN_QUEUE`` /
    ``IN_ANOTHER_ROOM`` when something holds it; ``holds`` as in
    :func:`~services.matchmaking.domain.players.presence.claim`)."""
    if not 0 <= max_hands <= MAX_HANDS:
        raise InvalidArgument(
            f"max_hands {max_hands} out of range 0-{MAX_HANDS} (0: until the players leave; "
            f"{MAX_HANDS}: the most a gateway table plays)",
            field="max_hands",
        )
    check_fee(fee_per_hand)
    for _ in range(50):
        code = f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"
        _claim_player(store, owner_id, code, now, holds)
        room = Room(
            code,
            owner_id,
            ruleset,
            max_hands,
            now,
            members=(Member(owner_id, owner_name, joined_at=now, client_address=client_address),),
            ruleset_options=dict(ruleset_options or {}),
            opener=owner_id,
            fee_per_hand=fee_per_hand,
        )
        try:
            if store.add_room_once(room):
                return room
        except BaseException:
            _release_player(store, owner_id, code)
            raise
        _release_player(store, owner_id, code)  # code taken: draw another
    raise FailedPrecondition("no free room code; try again", reason="NO_CODE")


def check_fee(fee_per_hand: int) -> None:
    """InvalidArgument for a room service fee outside 0-:data:`MAX_ROOM_FEE` (a negative fee
    would pay the seats out of the house)."""
    if not 0 <= fee_per_hand <= MAX_ROOM_FEE:
        raise InvalidArgument(
            f"fee_per_hand {fee_per_hand} out of range 0-{MAX_ROOM_FEE} (silver per hand each "
            "human seat pays the house; 0 = none)",
            reason="FEE_OUT_OF_RANGE",
            field="fee_per_hand",
        )


def _require_seat(room: Room) -> None:
    require_open(room)
    if len(room.members) >= SEATS:
        raise FailedPrecondition(
            f"room {room.code} is full ({SEATS} of {SEATS} seats)", reason="ROOM_FULL"
        )


def join_room(
    store: RoomRepository,
    code: str,
    player_id: str,
    name: str,
    now: float,
    ready_seconds: float,
    holds: presence.Holds | None = None,
    client_address: str = "",
    one_per_address: bool = False,
) -> Room:
    """Take the next free seat; FailedPrecondition for a full or started room, or when the
    player's presence (claimed first, atomically) is held by a ticket or another room; with
    ``one_per_address`` (``--rooms-one-per-address``, off by default: friends share a
    connection) also ``SAME_ADDRESS`` when a player seated joined from ``client_address``."""
    _require_seat(get_room(store, code))  # the usual refusals write nothing
    if one_per_address:
        _require_other_address(get_room(store, code), client_address)
    _claim_player(store, player_id, code, now, holds)

    def fn(room: Room) -> Room:
        _require_seat(room)
        if one_per_address:
            _require_other_address(room, client_address)
        deadline = now + ready_seconds if room.started_by_first_at is not None else None
        member = Member(
            player_id, name, joined_at=now, ready_deadline=deadline, client_address=client_address
        )
        return replace(room, members=(*room.members, member))

    try:
        return mutate_room(store, code, fn)
    except BaseException:
        _release_player(store, player_id, code)
        raise


def _require_other_address(room: Room, client_address: str) -> None:
    if client_address and any(m.client_address == client_address for m in room.members):
        raise FailedPrecondition(
            f"room {room.code} seats a player who joined from the same address; this "
            "deployment seats one player per address (--rooms-one-per-address)",
            reason="SAME_ADDRESS",
        )


def invite_bot(store: RoomRepository, code: str, player_id: str, now: float) -> Room:
    """The owner fills a seat with a bot (无须担心三缺一)."""

    def fn(room: Room) -> Room:
        require_open(room)
        require_member(room, player_id)
        if room.owner != player_id:
            raise PermissionDenied(f"only the room owner {room.owner} may invite bots")
        if len(room.members) >= SEATS:
            raise FailedPrecondition(
                f"room {code} is full ({SEATS} of {SEATS} seats)", reason="ROOM_FULL"
            )
        n = sum(m.bot for m in room.members) + 1
        bot = Member(f"bot-{code}-{uuid.uuid4().hex[:8]}", f"Bot {n}", True, True, True, now)
        return replace(room, members=(*room.members, bot))

    return mutate_room(store, code, fn)


# --- 底分 agreement ----------------------------------------------------------------------------
def set_stake(store: RoomRepository, code: str, player_id: str, stake: int) -> Room:
    """The setter sets 底分; every other player must then accept or refuse it."""
    if stake <= 0:
        raise InvalidArgument(f"stake {stake} must be positive", field="stake")
    if stake > MAX_STAKE:
        raise InvalidArgument(
            f"stake {stake} exceeds the largest stake scoring settles, {MAX_STAKE}", field="stake"
        )

    def fn(room: Room) -> Room:
        require_open(room)
        require_member(room, player_id)
        if room.owner != player_id:
            raise PermissionDenied(f"only {room.owner} sets 底分 in room {code}")
        if room.stake is not None:
            raise FailedPrecondition(
                f"底分 is already {room.stake}; it changes only when the setter leaves",
                reason="STAKE_SET",
            )
        members = tuple(
            replace(m, accepted=m.bot or m.player_id == player_id) for m in room.members
        )
        return replace(room, stake=stake, members=members)

    return mutate_room(store, code, fn)


def respond_to_stake(
    store: RoomRepository, code: str, player_id: str, accept: bool, now: float
) -> Room:
    """Accept the stake, or refuse it and leave the room."""

    def fn(room: Room) -> Room:
        require_open(room)
        require_member(room, player_id)
        if room.stake is None:
            raise FailedPrecondition(f"room {code} has no 底分 to accept yet", reason="NO_STAKE")
        if room.owner == player_id:
            raise FailedPrecondition("the setter does not answer its own 底分")
        return room

    mutate_room(store, code, fn)
    if not accept:
        return leave_room(store, code, player_id, now)

    def accept_fn(room: Room) -> Room:
        fn(room)
        members = tuple(
            replace(m, accepted=True) if m.player_id == player_id else m for m in room.members
        )
        return replace(room, members=members)

    return mutate_room(store, code, accept_fn)


# --- leaving, Start and its timer ---------------------------------------------------------------
def without_players(room: Room, player_ids: set[str]) -> Room:
    members = tuple(m for m in room.members if m.player_id not in player_ids)
    humans = [m for m in members if not m.bot]
    if not humans:
        return replace(room, members=(), state=CLOSED)
    if room.owner in player_ids:
        # The setter left: the next seated player sets 底分 anew; acceptances and Starts reset.
        owner = humans[0].player_id
        members = tuple(
            replace(m, accepted=m.bot, ready=m.bot, ready_deadline=None) for m in members
        )
        return replace(room, owner=owner, stake=None, members=members, started_by_first_at=None)
    return replace(room, members=members)


def leave_room(store: RoomRepository, code: str, player_id: str, now: float) -> Room:
    """Leave an open room (an empty room closes and its code is freed)."""

    def fn(room: Room) -> Room:
        require_member(room, player_id)
        if room.state not in (OPEN, FINISHED):
            raise FailedPrecondition(
                f"room {code} is {room.state}; leave the table on the gateway",
                reason="ROOM_PLAYING",
            )
        return without_players(room, {player_id})

    room = mutate_room(store, code, fn)
    _release_player(store, player_id, code)
    if room.state == CLOSED:
        store.drop_room(code)
    return room


def finish_room(store: RoomRepository, code: str, table_id: str) -> Room | None:
    """The room's table finished: the room is done and its players are free."""
    try:
        room = get_room(store, code)
    except NotFound:
        return None
    if room.table_id != table_id:
        return room

    def fn(room: Room) -> Room:
        return replace(room, state=FINISHED) if room.state == PLAYING else room

    room = mutate_room(store, code, fn)
    for m in room.humans():
        _release_player(store, m.player_id, code)
    return room


def open_room_codes(store: RoomRepository) -> list[str]:
    """Rooms whose timers or start may need a tick (open or starting)."""
    codes = []
    for code in store.active_codes():
        room = store.room(code)
        if room is not None and room.state in (OPEN, STARTING):
            codes.append(code)
        else:
            store.deactivate(code)
    return codes
