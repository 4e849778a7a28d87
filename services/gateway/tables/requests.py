"""Idempotency by request id: the first result of a seat's request id is kept (in the store,
written with the request's own events, so a replica taking the table over knows it too, and
then in memory; a decision's request id is also in its ``action`` event, for logs written
before the two were one write) and given again for a repeated id —
an accepted action's sequence number, a Leave's penalty, or a refusal (its status code,
message, reason and details, returned as the same error): a request refused once is never
evaluated again, even if it would be legal later. Refusals that come before the request id can
be tied to a seat (malformed input, a bad token) or that say nothing about the request
(NOT_OWNER: this replica no longer runs the table; TABLE_FINISHED: nothing can happen at a
finished table any more) are not kept.

How long: as long as a client may retry, not forever. Each record notes the table's last
sequence number when it was made (``at``); when a hand starts, the records made before the
previous hand started are dropped, here and in the store — so the ids of the current and the
previous hand are always known (the same two hands whose events are held in memory). A retry of
a forgotten id (a hand and more later) is evaluated again: its ``last_sequence`` is older than
any prompt of the seat now, so it is refused (ABORTED, or FAILED_PRECONDITION without a prompt)
and applies nothing. When the table finishes, its records in the store are deleted (the ones in
memory answer retries until the table leaves memory).
"""

from __future__ import annotations

from infra.store import Store
from infra.store.base import Fence
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.tables.live import LiveTable
from services.gateway.tables.records import REQUESTS, RequestRecord


def _key(table_id: str, seat: int, request_id: str) -> str:
    return f"{table_id}/{seat}/{request_id}"


def row(table_id: str, seat: int, request_id: str, record: RequestRecord) -> tuple[str, str, bytes]:
    """A request's first result as the store keeps it: ``(namespace, key, value)``, written
    with the request's own events (fenced by the table's lease)."""
    return REQUESTS, _key(table_id, seat, request_id), record.encode()


def remember(table: LiveTable, seat: int, request_id: str, **result) -> None:
    """Keep a request's first result (``result=`` or ``refusal=``): written with the running
    step's events, then held in memory (a write that fails keeps nothing, and the retry is
    evaluated again). A request that ended the table (the last player leaving: 人走光) is held
    in memory only: a finished table's records leave the store with its end, and its lease
    with them, so a retry while the table is held gets the same answer and nothing is
    written."""
    record = RequestRecord(table.last_seq, **result)
    key = (seat, request_id)
    if not table.live:
        table.requests[key] = record
        return
    table.unwritten_records.append(row(table.id, seat, request_id, record))
    table.after_write.append(lambda: table.requests.__setitem__(key, record))


def load(store: Store, table: LiveTable) -> None:
    """The request records of a table taken over from its log."""
    prefix = f"{table.id}/"
    for key, rec in store.scan(REQUESTS, prefix):
        seat, _, rid = key[len(prefix) :].partition("/")
        table.requests[(int(seat), rid)] = RequestRecord.decode(rec.value)


def load_from_log(table: LiveTable, log: list[LoggedEvent]) -> None:
    """The request ids of players' decisions in the log that have no record: the owner died
    (or lost the table) after the decision's events were appended, before its record was
    kept. Their result is the decision's event, so a retry is answered as applied, not
    evaluated again."""
    for e in log:
        ev = e.event
        if isinstance(ev, K.ActionTaken) and ev.request_id:
            table.requests.setdefault((ev.seat, ev.request_id), RequestRecord(e.seq, result=e.seq))


def prune(store: Store, table: LiveTable, fence: Fence | None = None) -> None:
    """Forget the request ids made before the previous hand started."""
    if len(table.hand_starts) < 2:
        return
    cut = table.hand_starts[-2]
    old = [key for key, rec in table.requests.items() if rec.at < cut]
    for seat, rid in old:
        del table.requests[(seat, rid)]
        store.delete(REQUESTS, _key(table.id, seat, rid), fence=fence)


def forget_all(store: Store, table_id: str, fence: Fence | None = None) -> None:
    """A finished table: nothing is left to retry."""
    for key, _ in list(store.scan(REQUESTS, f"{table_id}/")):
        store.delete(REQUESTS, key, fence=fence)
