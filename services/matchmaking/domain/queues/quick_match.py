"""Quick match (快速开始): a queue per (ruleset, stake tier); four tickets make a table.

When fewer than four wait and the oldest has waited ``bot_fill_seconds``, bots fill the empty
seats (无须担心三缺一). A player holds at most one ticket at a time, and none while it sits in
a private room, and may leave its queue until it is matched. A waiting ticket holds the player's
presence (:mod:`~services.matchmaking.domain.players.presence`): claimed atomically before the
ticket is written, released once the ticket is cancelled or assigned.

Forming a table is crash-safe and safe between replicas: a *match* record listing the seats is
written first, each ticket is claimed atomically (waiting → matched), the gateway table is
created with the match id as its request id (idempotent), and only then are the tickets
assigned. A match left pending by a crash is completed by the next :func:`form_tables`.

One table per client address (``one_per_address``, on by default: ``--queue-one-per-address``):
two tickets joined from the same client address (the peer address the service saw) are never
seated at one table; the later one waits for the next table (or its own bots). Two accounts on
one machine are the cheapest collusion there is (串通): each sees both hands.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from services.matchmaking.domain import records
from services.matchmaking.domain.players import presence
from services.matchmaking.domain.queues.levels import FEE_STAKE_UNITS, fee_for_stake
from services.matchmaking.domain.tables.allocator import (
    SeatRequest,
    TableAllocator,
    TableRefused,
    TableRequest,
)
from services.matchmaking.domain.tables.tags import quick_tag
from shared.errors import DomainError, FailedPrecondition, NotFound, PermissionDenied

if TYPE_CHECKING:
    from services.matchmaking.domain.queues.repository import QueueRepository

WAITING, MATCHED, ASSIGNED, CANCELLED = "waiting", "matched", "assigned", "cancelled"


@dataclass(frozen=True, slots=True)
class Assignment:
    """Where a player plays: the gateway, the table, the seat (0-3) and its token."""

    gateway_address: str
    table_id: str
    seat: int
    seat_token: str


@dataclass(frozen=True, slots=True)
class Ticket:
    ticket_id: str
    player_id: str
    display_name: str
    ruleset: str
    stake: int
    created_at: float
    state: str = WAITING
    match_id: str = ""
    assignment: Assignment | None = None
    failure: str = ""  # why matchmaking cancelled it (the gateway refused its table)
    client_address: str = ""  # where the player joined from ("" = unknown: never a conflict)

    @property
    def queue(self) -> str:
        return queue_key(self.ruleset, self.stake)

    def to_json(self) -> bytes:
        return records.dump(asdict(self))

    @staticmethod
    def from_json(raw: bytes) -> Ticket:
        data = records.load(raw)
        if data["assignment"]:
            data["assignment"] = Assignment(**data["assignment"])
        return Ticket(**data)


def quick_bot_id(match_id: str, seat: int) -> str:
    """The player id of the bot filling ``seat`` of a quick-match table."""
    return f"bot-{match_id[:12]}-{seat}"


def queue_key(ruleset: str, stake: int) -> str:
    return f"{ruleset}|{stake}"


def plan_tables(
    waiting: Sequence[tuple[str, float] | tuple[str, float, str]],
    now: float,
    bot_fill_seconds: float,
    one_per_address: bool = False,
) -> list[tuple[str | None, ...]]:
    """Tables from one queue's waiting tickets ``(ticket id, joined at[, client address])`` in
    arrival order.

    Each ticket takes the first forming table with a free seat (and, with ``one_per_address``,
    nobody from its address; "" is no address); every table of four is seated, and one short of
    four whose oldest has waited at least ``bot_fill_seconds`` is seated with bots (None) in the
    empty seats. Without addresses this is every four in arrival order.
    """
    forming: list[tuple[list[str], set[str], float]] = []  # tickets, addresses, oldest's time
    for ticket in waiting:
        tid, joined = ticket[0], ticket[1]
        address = ticket[2] if one_per_address and len(ticket) > 2 else ""  # type: ignore[misc]
        for ids, addresses, _ in forming:
            if len(ids) < 4 and not (address and address in addresses):
                break
        else:
            ids, addresses = [], set()
            forming.append((ids, addresses, joined))
        ids.append(tid)
        if address:
            addresses.add(address)
    tables: list[tuple[str | None, ...]] = []
    for ids, _, oldest in forming:
        if len(ids) == 4:
            tables.append(tuple(ids))
        elif now - oldest >= bot_fill_seconds:
            tables.append((*ids, *(None,) * (4 - len(ids))))
    return tables


def get_ticket(store: QueueRepository, ticket_id: str) -> Ticket:
    ticket = store.ticket(ticket_id)
    if ticket is None:
        raise NotFound(f"no ticket {ticket_id!r}", ticket_id=ticket_id)
    return ticket


def owned_ticket(store: QueueRepository, ticket_id: str, player_id: str) -> Ticket:
    """The ticket, when it is the player's; PermissionDenied otherwise."""
    ticket = get_ticket(store, ticket_id)
    if ticket.player_id != player_id:
        raise PermissionDenied(f"ticket {ticket_id} belongs to another player")
    return ticket


def join(
    store: QueueRepository,
    ticket_id: str,
    player_id: str,
    name: str,
    ruleset: str,
    stake: int,
    now: float,
    holds: presence.Holds | None = None,
    client_address: str = "",
) -> Ticket:
    """Put a player in the (ruleset, stake) queue; FailedPrecondition if it already holds a
    ticket (``ALREADY_QUEUED``) or sits in a room (``IN_ROOM``). The player's presence is claimed
    first, atomically (:mod:`~services.matchmaking.domain.players.presence`; ``holds`` tells a
    crash's leftover from a live one). The caller has checked the stake against the player's
    level."""
    ticket = Ticket(ticket_id, player_id, name, ruleset, stake, now, client_address=client_address)
    held = presence.claim(store, player_id, presence.QUEUE, ticket_id, now, holds)
    if held is not None:
        raise refusal(store, held, presence.QUEUE)
    try:
        store.add_ticket(ticket)
    except BaseException:
        store.drop_ticket(ticket_id)
        presence.release(store, player_id, presence.QUEUE, ticket_id)
        raise
    return ticket


def refusal(store: QueueRepository, held: presence.Presence, wanted: str) -> FailedPrecondition:
    """The error for a player whose ``held`` presence keeps it out of a queue (``wanted`` QUEUE:
    ``ALREADY_QUEUED`` or ``IN_ROOM``) or, held by a ticket, out of a room (``IN_QUEUE``; the
    room-against-room cases are :func:`services.matchmaking.domain.rooms.private.refusal`)."""
    pid = held.player_id
    if held.kind == presence.ROOM:
        return FailedPrecondition(
            f"player {pid} sits in room {held.ref}; leave it first", reason="IN_ROOM"
        )
    if wanted == presence.ROOM:
        return FailedPrecondition(
            f"player {pid} waits in a queue with ticket {held.ref}; leave it first",
            reason="IN_QUEUE",
        )
    ticket = store.ticket(held.ref)
    where = f" {ticket.queue}" if ticket else ""
    return FailedPrecondition(
        f"player {pid} is already in queue{where} with ticket {held.ref}; leave it first",
        reason="ALREADY_QUEUED",
        ticket_id=held.ref,
    )


def holds(store: QueueRepository, held: presence.Presence) -> bool:
    """Whether the ticket a queue presence names still holds its player (waiting or being
    matched; an assigned or cancelled ticket frees it)."""
    t = store.ticket(held.ref)
    if t is None:
        return False
    return t.player_id == held.player_id and t.state in (WAITING, MATCHED)


def leave(store: QueueRepository, ticket_id: str, player_id: str) -> Ticket:
    """Cancel a waiting ticket; FailedPrecondition once it is matched to a table."""
    owned_ticket(store, ticket_id, player_id)

    def fn(t: Ticket):
        if t.state != WAITING:
            raise FailedPrecondition(
                f"ticket {ticket_id} is {t.state}; only a waiting ticket can leave its queue",
                reason="NOT_WAITING",
            )
        t = replace(t, state=CANCELLED)
        return t, t

    ticket = store.update_ticket(ticket_id, fn)
    store.unlist_ticket(ticket)
    presence.release(store, player_id, presence.QUEUE, ticket_id)
    return ticket


def waiting_count(store: QueueRepository, queue: str) -> int:
    return len(store.listed(queue))


def _set_state(
    store: QueueRepository, ticket_id: str, want: str, state: str, match_id: str
) -> bool:
    """Move a ticket from ``want`` to ``state`` atomically. Claiming (→ MATCHED) records
    ``match_id``; releasing (MATCHED →) only the match's own tickets and clears it."""

    def fn(t: Ticket):
        if t.state != want or (want == MATCHED and t.match_id != match_id):
            return None, False
        new_match = match_id if state == MATCHED else ""
        return replace(t, state=state, match_id=new_match), True

    return store.update_ticket(ticket_id, fn)


def _match_id(ticket_ids: Sequence[str | None], now: float) -> str:
    text = "|".join(t or "-" for t in ticket_ids) + f"@{now}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class Formed:
    """A table formed from a queue: its match id and the players' assigned tickets."""

    match_id: str
    tickets: tuple[Ticket, ...]
    bots: int


STALE_MATCH_SECONDS = 60.0  # a match not fully claimed by then was abandoned by a crash


def form_tables(
    store: QueueRepository,
    allocator: TableAllocator,
    now: float,
    bot_fill_seconds: float,
    fee_units: int = FEE_STAKE_UNITS,
    one_per_address: bool = True,
) -> list[Formed]:
    """Form every table the queues allow and create them on a gateway. Pending matches from an
    earlier (crashed or failed) pass are retried first. A match's room service fee (its level's,
    ``fee_units`` per stake unit) is fixed when it is formed. ``one_per_address``: no two
    tickets from one client address at a table (:func:`plan_tables`)."""
    done = [f for f in (_complete(store, allocator, k, now) for k in store.match_ids()) if f]
    for queue in store.queues():
        waiting = []
        for ticket_id in store.listed(queue):
            t = get_ticket(store, ticket_id)
            if t.state == WAITING:
                waiting.append((t.ticket_id, t.created_at, t.client_address))
        for seats in plan_tables(waiting, now, bot_fill_seconds, one_per_address):
            match_id = _start_match(store, queue, seats, now, fee_units)
            formed = _complete(store, allocator, match_id, now) if match_id else None
            if formed:
                done.append(formed)
    return done


def _start_match(
    store: QueueRepository,
    queue: str,
    seats: tuple[str | None, ...],
    now: float,
    fee_units: int = FEE_STAKE_UNITS,
):
    match_id = _match_id(seats, now)
    fee = fee_for_stake(int(queue.rsplit("|", 1)[1]), fee_units)
    body = {"queue": queue, "seats": list(seats), "created_at": now, "fee": fee}
    store.put_match(match_id, body)
    claimed = []
    for tid in seats:
        if tid is None:
            continue
        if not _set_state(store, tid, WAITING, MATCHED, match_id):
            for back in claimed:  # a ticket left (or another replica took it): undo
                _set_state(store, back, MATCHED, WAITING, match_id)
            store.drop_match(match_id)
            return None
        claimed.append(tid)
    return match_id


def _complete(store: QueueRepository, allocator: TableAllocator, match_id: str, now: float):
    """Create the match's table and assign its tickets; None while the gateway is unavailable
    (the match stays pending and is retried), while its tickets are still being claimed, or
    when another replica created its table (this call only finished the assignment)."""
    match = store.match(match_id)
    if match is None:
        return None
    tickets = [get_ticket(store, t) if t else None for t in match["seats"]]
    if not all(t.state == MATCHED and t.match_id == match_id for t in tickets if t):
        if now - match["created_at"] >= STALE_MATCH_SECONDS:
            for t in tickets:  # abandoned half-way by a crash: the tickets wait again
                if t:
                    _set_state(store, t.ticket_id, MATCHED, WAITING, match_id)
            store.drop_match(match_id)
        return None
    ruleset, stake = match["queue"].rsplit("|", 1)
    seats = tuple(
        SeatRequest(t.player_id, t.display_name)
        if t
        else SeatRequest(quick_bot_id(match_id, i), f"Bot {i + 1}", bot=True)
        for i, t in enumerate(tickets)
    )
    request = TableRequest(
        request_id=f"quick-{match_id}",
        ruleset=ruleset,
        stake=int(stake),
        seats=seats,
        tag=quick_tag(match_id),
        fee_per_hand=int(match.get("fee", 0)),  # the level's 台费 when formed (RULES.md §9a)
    )
    try:
        table = allocator.create_table(request)
    except TableRefused as refused:  # never asked again: the players are free to queue again
        _fail_match(store, match_id, tickets, refused.message)
        return None
    except DomainError:
        return None
    assigned = []
    for seat, t in enumerate(tickets):
        if t is None:
            continue
        assignment = Assignment(
            table.gateway_address, table.table_id, seat, table.seat_tokens[seat]
        )

        def fn(cur: Ticket, a=assignment):
            if cur.state == MATCHED and cur.match_id == match_id:
                cur = replace(cur, state=ASSIGNED, assignment=a)
            return cur, cur

        assigned.append(store.update_ticket(t.ticket_id, fn))
        store.unlist_ticket(t)
        presence.release(store, t.player_id, presence.QUEUE, t.ticket_id)
    store.drop_match(match_id)
    if table.reused:  # another replica created it (and counts it)
        return None
    return Formed(match_id, tuple(assigned), sum(t is None for t in tickets))


def _fail_match(
    store: QueueRepository, match_id: str, tickets: Sequence[Ticket | None], failure: str
) -> None:
    """The gateway refused the match's table: its tickets are cancelled with the reason (their
    players see it and may queue again) and the match is dropped."""
    for t in tickets:
        if t is None:
            continue

        def fn(cur: Ticket):
            if cur.state != MATCHED or cur.match_id != match_id:
                return None, cur
            cur = replace(cur, state=CANCELLED, match_id="", failure=failure)
            return cur, cur

        store.update_ticket(t.ticket_id, fn)
        store.unlist_ticket(t)
        presence.release(store, t.player_id, presence.QUEUE, t.ticket_id)
    store.drop_match(match_id)
