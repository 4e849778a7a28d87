"""Recording the tables allocated before the ledger checked allocations (a one-off migration).

A store written by an earlier version knows its live tables only inside tournaments, rooms and
quick-match tickets; without an entry in :mod:`.allocated_tables` every report of those tables
would now be refused, and a tournament round in progress would wait for its hands forever.
:func:`backfill` records them once (a marker in the store; safe to run on several replicas at
once, since each record is written whole and the same by all):

* running tournaments: every table of the current round that has a table id;
* rooms that are playing: their table, members by seat;
* quick-match tickets that were assigned: grouped by match, seats from each assignment, bots in
  the seats no ticket holds.
"""

from __future__ import annotations

from infra.store.base import Store

from . import queues, rooms, tournament_rounds, tournaments
from .allocated_tables import AllocatedTable, find, record
from .tags import quick_tag, room_tag, tournament_tag

META = "mm_tables_meta"
MARKER = "backfill-v1"
SEATS = 4


def _tournament_tables(store: Store) -> list[AllocatedTable]:
    out = []
    for tid in tournaments.running_ids(store):
        t = tournaments.get(store, tid)
        for x in tournament_rounds.round_tables(store, t):
            if x.table_id:
                tag = tournament_tag(tid, x.round, x.index)
                out.append(AllocatedTable(x.table_id, tag, tuple(x.seats), ""))
    return out


def _room_tables(store: Store) -> list[AllocatedTable]:
    out = []
    for _, rec in store.scan(rooms.ROOMS):
        room = rooms.Room.from_json(rec.value)
        if room.state == rooms.PLAYING and room.table_id:
            ids = tuple(m.player_id for m in room.members)
            out.append(AllocatedTable(room.table_id, room_tag(room.code), ids, ""))
    return out


def _quick_tables(store: Store) -> list[AllocatedTable]:
    by_match: dict[str, dict] = {}
    for _, rec in store.scan(queues.TICKETS):
        ticket = queues.Ticket.from_json(rec.value)
        a = ticket.assignment
        if ticket.state != queues.ASSIGNED or a is None:
            continue
        match = by_match.setdefault(ticket.match_id, {"table_id": a.table_id, "seats": {}})
        match["seats"][a.seat] = ticket.player_id
    return [
        AllocatedTable(
            m["table_id"],
            quick_tag(match_id),
            tuple(m["seats"].get(i) or queues.quick_bot_id(match_id, i) for i in range(SEATS)),
            "",
        )
        for match_id, m in by_match.items()
    ]


def backfill(store: Store) -> int:
    """Record the tables of an earlier version's store once; returns how many were added."""
    if store.get(META, MARKER) is not None:
        return 0
    added = 0
    for table in (*_tournament_tables(store), *_room_tables(store), *_quick_tables(store)):
        if find(store, table.table_id) is None:
            record(store, table)
            added += 1
    store.put(META, MARKER, b"")
    return added
