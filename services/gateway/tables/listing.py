"""ListTables across the cluster (README "Operations"): every live table of every gateway
replica, whichever replica the operator asks.

The table registry is the store's leases (``gateway-table/<table id>``, :mod:`.leases`), which
every replica writes already; so the listing is correct under faults, not only when every
replica answers:

* the tables whose lease this replica holds, and the finished or halted tables it holds
  read-only (its own summaries, :meth:`.operations.TableOperations.list_tables`);
* every other replica holding a running lease is asked for the tables it runs (a ListTables
  sent to its internal port with the operator's claim, :mod:`services.gateway.console`); its
  answer is the owner's word on its tables;
* a table whose owner did not answer (dead, paused, cut off: its lease still runs), and one
  whose lease expired with nobody taking it over yet (its owner died a moment ago), is
  summarized from its log (:func:`summary_from_log`: phase, seats, hand, last sequence — no
  chips, which only a replay gives) until another replica takes it over;
* a halted table whose owner died or drained keeps no running lease: every replica loads it
  read-only from its log (:mod:`.keeper` adopts orphans), so it is among each replica's own.

A released lease is a finished table's (its end released it) or one a draining replica handed
over, which another replica takes over within a second: listed by that replica from then on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from infra.store import Store
from services.gateway.domain.events import kinds as K
from services.gateway.domain.session import FINISHED, HALTED
from services.gateway.domain.session.config import BETWEEN_HANDS, PLAYING, WAITING
from services.gateway.tables.leases import LEASE_PREFIX
from services.gateway.tables.log import read_table_log
from services.gateway.tables.operations import TableSummary

# replica ids -> each one's tables, or None for a replica that did not answer
AskPeers = Callable[[list[str]], dict[str, list[TableSummary] | None]]


def matches(t: TableSummary, tag_prefix: str, stake: int, halted_only: bool) -> bool:
    return (
        t.tag.startswith(tag_prefix)
        and (not stake or t.stake == stake)
        and (not halted_only or t.phase == HALTED)
    )


def cluster_tables(
    store: Store,
    replica_id: str,
    mine: Iterable[TableSummary],
    ask_peers: AskPeers,
    tag_prefix: str,
    stake: int,
    halted_only: bool,
) -> list[TableSummary]:
    """The tables of the cluster (see the module docstring), ``mine`` (this replica's, already
    filtered) included, filtered as ListTables asks; by table id."""
    found = {t.table_id: t for t in mine}
    running: dict[str, str] = {}  # table id -> its owner (another replica)
    orphaned: list[str] = []  # an owner's lease that expired, nobody has taken it over yet
    for lease in store.scan_leases(LEASE_PREFIX):
        table_id = lease.name[len(LEASE_PREFIX) :]
        if lease.held and lease.owner != replica_id:
            running[table_id] = lease.owner
        elif not lease.held and lease.owner:
            orphaned.append(table_id)
    answers = ask_peers(sorted(set(running.values())))
    silent = []
    for tables in answers.values():
        for t in tables or ():
            found[t.table_id] = t  # the owner's word on its tables
    for table_id, owner in running.items():
        if answers.get(owner) is None and table_id not in found:
            silent.append(table_id)
    for table_id in [*silent, *(t for t in orphaned if t not in found)]:
        summary = summary_from_log(store, table_id)
        live = summary is not None and summary.phase != FINISHED
        if live and matches(summary, tag_prefix, stake, halted_only):
            found[table_id] = summary
    return [found[k] for k in sorted(found)]


def summary_from_log(store: Store, table_id: str) -> TableSummary | None:
    """A table's summary read from its log alone (its owner does not answer): tag, stake,
    seats, 托管 and who left, its phase, the running hand and the last sequence; chips are
    left out (only the owner's replay knows them). None for a table with no log."""
    log = read_table_log(store, table_id)
    started = next((e.event for e in log if isinstance(e.event, K.TableStarted)), None)
    if started is None:
        return None
    players = [s.player_id for s in started.seats]
    auto = [False] * len(players)
    left = [False] * len(players)
    phase = WAITING if any(not s.player_id and not s.bot for s in started.seats) else PLAYING
    hand_id, number, hands, finish_reason, settled = "", 0, 0, "", False
    for entry in log:
        ev = entry.event
        if isinstance(ev, K.SeatChanged) and 0 <= ev.seat < len(players):
            players[ev.seat] = ev.player_id or players[ev.seat]
            auto[ev.seat] = ev.reason == "auto_play_on" or (
                auto[ev.seat] and ev.reason != "auto_play_off"
            )
            left[ev.seat] = left[ev.seat] or ev.reason == "left"
        elif isinstance(ev, K.HandStarted):
            phase, hand_id, number, settled = PLAYING, ev.hand_id, ev.hand_number, False
        elif isinstance(ev, K.HandResult):
            settled = True
        elif isinstance(ev, K.SeedRevealed) and settled:
            phase, hand_id, hands, settled = BETWEEN_HANDS, "", hands + 1, False
        elif isinstance(ev, K.TableFinished):
            phase, finish_reason, hand_id = FINISHED, ev.reason, ""
        elif isinstance(ev, K.TableHalted):
            phase, finish_reason = HALTED, "halted"
    return TableSummary(
        table_id,
        started.tag,
        phase,
        started.stake,
        hands,
        hand_id,
        number,
        tuple(players),
        tuple(auto),
        (),
        log[-1].seq,
        finish_reason,
        tuple(left),
    )
