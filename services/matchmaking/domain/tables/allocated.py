"""The tables matchmaking allocated (分桌记录), and the check every gateway report passes.

The ledger moves silver only for tables matchmaking itself created on a gateway — a quick-match,
room or tournament table — and only with the players it seated there. Reports for any other
table (one created directly on a gateway, e.g. a casual ``mahjong play`` table, or a forged one)
are refused and change nothing.

* :class:`RecordingAllocator` wraps the gateway port: before asking for a table it notes the
  request as *pending* (its tag and seats), and once the gateway answers it records
  ``table id -> tag, player ids by seat`` (namespace ``mm_tables``).
* The request id sent to the gateway is *sealed*: the domain's logical id plus an HMAC of it
  under matchmaking's secret. The gateway's CreateTable is idempotent by request id and returns
  the existing table (with its seat tokens) to whoever repeats an id; a guessable id
  ("tournament-T-r1-t0") would let anyone pre-create that table with seats and stake of their
  choosing, or fetch its seat tokens. A sealed id is still deterministic, so retries and other
  replicas get the same table.
* With several replicas on one store, a table is created by one of them: the creation of a
  request is claimed first (a store lease, ``matchmaking-create/<sealed id>``; while another
  replica holds it the call is ``UNAVAILABLE`` TABLE_BEING_CREATED and the caller retries on a
  later tick), the allocation is read back under the claim (namespace ``mm_tables_by_request``)
  and returned as ``reused`` when another replica made it, so the gateway is asked once per
  table and each table is counted once. The claim is short (the replicas' ``--lease-ms``) and
  renewed while its holder waits on the gateway: the gateway starts a table as soon as it
  creates it, so a replica that dies between the gateway's answer and recording it leaves a
  table playing whose players do not know it yet — for one lease, after which another replica
  claims the request, gets the same table from the gateway (idempotent by request id) and
  records it. (A claim that outlived any CreateTable deadline, as it once did, left them out for
  30 s: long enough for their table, even their round, to be played by their timers.)
* :func:`check_report` is what RecordHand and TableFinished call first: NotFound for a table
  matchmaking never allocated, FailedPrecondition for a tag or seating that differs from the
  allocation, Unavailable while a matching allocation is still pending (matchmaking stopped
  between the gateway's answer and recording it: the gateway retries, the next tick records it).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from services.matchmaking.domain.economy import hand_cover
from services.matchmaking.domain.economy.ledger import is_bot
from services.matchmaking.domain.tables import live_seats
from services.matchmaking.domain.tables.allocator import (
    TableRequest,
)
from shared.errors import FailedPrecondition, NotFound, Unavailable

if TYPE_CHECKING:
    from services.matchmaking.domain.tables.repository import TableRepository

CLAIM_PREFIX = "matchmaking-create/"
CLAIM_TTL_MS = 10_000  # a dead claimant delays the table's record this long (renewed meanwhile)
_SEAL_CONTEXT = b"mahjong/matchmaking/create-table/"


@dataclass(frozen=True, slots=True)
class AllocatedTable:
    table_id: str
    tag: str
    player_ids: tuple[str, ...]  # by seat, bots too
    request_id: str
    # What the table plays, for the cover a seat needs at every hand (hand_cover); stake 0:
    # no cover checked.
    ruleset: str = ""
    stake: int = 0
    ruleset_options: tuple[tuple[str, str], ...] = ()
    # Seats a bot took when their player went bankrupt: (seat, player id, hand id of the hand
    # after which it left); that hand's reports still name the player.
    bankrupt: tuple[tuple[int, str, str], ...] = ()
    # The room service fee (台费, RULES.md §9a) each human seat pays per hand, fixed when the
    # table was created: every hand's report must charge exactly it (FEE_MISMATCH).
    fee_per_hand: int = 0

    def seating_of(self, hand_id: str) -> tuple[str, ...]:
        """Who sat where in the hand ``hand_id``: the bankrupt players in the hand they left
        after (a repeated report of it), the bots that took their seats in every later one."""
        ids = list(self.player_ids)
        for seat, player_id, last_hand in self.bankrupt:
            if last_hand == hand_id:
                ids[seat] = player_id
        return tuple(ids)


def sealed_request_id(secret: bytes, request_id: str) -> str:
    """``request_id`` plus a keyed digest: deterministic for matchmaking, unguessable to others."""
    digest = hmac.new(secret, _SEAL_CONTEXT + request_id.encode(), hashlib.sha256).hexdigest()
    return f"{request_id}-{digest[:32]}"


def seat_ids(request: TableRequest) -> list[str]:
    return [s.player_id for s in request.seats]


def record(tables: TableRepository, table: AllocatedTable) -> None:
    """Keep an allocation, and its humans' live seats (:mod:`.live_seats`)."""
    tables.put_table(table)
    live_seats.seat(tables, table.table_id, table.player_ids)


def finish(tables: TableRepository, table_id: str) -> None:
    """The table ended (TableFinished): its players sit there no more."""
    table = find(tables, table_id)
    if table is not None:
        live_seats.unseat(tables, table_id, (*table.player_ids, *(p for _, p, _ in table.bankrupt)))


def seat_needs(tables: TableRepository, player_id: str) -> live_seats.Held | None:
    """The live seat of ``player_id`` that needs the most silver kept: the most one hand at
    its table can cost at its stake, plus its room service fee (None: seated at no table that
    moves silver)."""
    most: live_seats.Held | None = None
    for table_id in live_seats.tables_of(tables, player_id):
        table = find(tables, table_id)
        if table is None or table.stake <= 0 or not table.ruleset:
            continue
        cover = hand_cover.loss_cap(table.ruleset, dict(table.ruleset_options), table.stake)
        if cover is not None:
            cover += table.fee_per_hand
        if cover is not None and (most is None or cover > most.silver):
            most = live_seats.Held(table_id, table.stake, cover)
    return most


def replace_seat(
    tables: TableRepository, table_id: str, seat: int, bot_id: str, hand_id: str
) -> AllocatedTable:
    """A bot takes ``seat`` after the hand ``hand_id`` (its player went bankrupt, 破产): the
    table's later reports name ``bot_id`` there. Idempotent."""

    def fn(table: AllocatedTable | None):
        if table is None:
            raise NotFound(f"table {table_id} was not allocated by matchmaking", table_id=table_id)
        if table.player_ids[seat] == bot_id:
            return None, None
        ids = list(table.player_ids)
        left = (seat, ids[seat], hand_id)
        ids[seat] = bot_id
        return replace(table, player_ids=tuple(ids), bankrupt=(*table.bankrupt, left)), None

    tables.update_table(table_id, fn)
    found = find(tables, table_id)
    assert found is not None
    live_seats.unseat(tables, table_id, [p for s, p, _ in found.bankrupt if s == seat])
    return found


def find(tables: TableRepository, table_id: str) -> AllocatedTable | None:
    return tables.table(table_id) if table_id else None


def _pending_match(tables: TableRepository, tag: str, player_ids: Sequence[str] | None) -> bool:
    for pending_tag, pending_ids in tables.pending():
        if pending_tag == tag and (player_ids is None or pending_ids == list(player_ids)):
            return True
    return False


def check_report(
    tables: TableRepository,
    table_id: str,
    tag: str,
    player_ids: Sequence[str] | None = None,
    hand_id: str = "",
    fees: Sequence[int] | None = None,
    escaped: bool = False,
) -> AllocatedTable:
    """The allocation a gateway report is about, or the refusal that keeps it out of the ledger.

    ``player_ids`` (by seat, in the hand ``hand_id``) is checked for RecordHand; TableFinished
    carries none. ``fees`` (by seat; empty = none) must be the table's room service fee at each
    human seat and 0 at each bot's, or all 0 on an escape's report (``escaped``: the hand's own
    report charges the fee, to the seat that left too) — FailedPrecondition FEE_MISMATCH."""
    table = find(tables, table_id)
    if table is None:
        if _pending_match(tables, tag, player_ids):
            raise Unavailable(
                f"table {table_id} ({tag}) is being allocated; retry shortly",
                reason="TABLE_ALLOCATION_PENDING",
                table_id=table_id,
            )
        raise NotFound(
            f"table {table_id} was not allocated by matchmaking; only its quick-match, room and "
            "tournament tables are recorded in the ledger",
            reason="TABLE_NOT_ALLOCATED",
            table_id=table_id,
        )
    if tag != table.tag:
        raise FailedPrecondition(
            f"table {table_id} was allocated with tag {table.tag!r}, not {tag!r}",
            reason="TABLE_TAG_MISMATCH",
            table_id=table_id,
        )
    seating = table.seating_of(hand_id)
    if player_ids is not None and tuple(player_ids) != seating:
        raise FailedPrecondition(
            f"table {table_id} seats {list(seating)} by seat, not {list(player_ids)}",
            reason="TABLE_SEATING_MISMATCH",
            table_id=table_id,
        )
    if fees is not None:
        fee = 0 if escaped else table.fee_per_hand
        due = [0 if is_bot(p) else fee for p in seating]
        got = list(fees) or [0] * len(seating)
        if got != due:
            raise FailedPrecondition(
                f"table {table_id} charges a room service fee of {fee} per human seat: fees "
                f"{due} by seat, not {got}",
                reason="FEE_MISMATCH",
                table_id=table_id,
            )
    return table
